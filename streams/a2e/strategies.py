"""Rank skills for adaptation: UCB1, epsilon-greedy, softmax, Thompson sampling, or a plug-in.

An arm is an :class:`Arm`: ``n_i`` pulls (a float, so decayed counts from
:mod:`learnstream.streams.a2e.stats` fit), a reward total ``s_i`` of rewards in [0, 1], mean
``x_i = s_i / n_i`` and ``N = sum(n_i)``, ``K`` arms, and, for an arm of rolling stats, its
recent pulls ``r_i``. A :class:`SkillPerformanceRecord` is the arm ``n_i = calls_total``,
``s_i = calls_success`` (binary rewards, no ``r_i``) unless ``rank`` is given an ``arms``
mapping with a view of that name. The worker's views come from
:meth:`learnstream.streams.a2e.stats.SkillStats.arm`: each skill's long memory, or its recent
one when its recent outcomes disagree with its older ones (streams/a2e/memory.py). Arms never
pulled (``n_i = 0``) rank first, in a seeded random order, so each is tried once before any
estimate is trusted. ``v_i = (s_i + 1) / (n_i + 2)`` is the Laplace-smoothed mean.

Every built-in strategy has an exploration floor (``floor``): with that probability the arm
with the fewest recent pulls ``r_i`` (ties drawn) ranks first. It exists because a long memory
is sure of a rival it has seen fail, so a strategy would never try that rival again and would
miss it becoming the best; the floor re-checks each arm about once every ``(K - 1) / floor``
pulls, at a cost of about ``floor`` of the pulls whatever ``K``. While the favourite (the arm
with the most recent pulls) shows a decline (its shift "down", streams/a2e/memory.py), the
floor is ``alarm`` if that is larger: a strategy pays a low floor on stable arms and searches
hard when its favourite fails. Arms without recent pulls (exact counts, which never forget) get
no floor, except epsilon-greedy's. Otherwise, highest first:

- ``ucb1`` (``c``, default 0.4, on exact counts sqrt(2); ``floor``, 0.04; ``alarm``, 0.2):
  ``index_i = x_i + c * sqrt(ln N / n_i)``. On the long memory ``N`` grows as on cumulative
  counts, so a smaller ``c`` locks onto a rival: the best arm, low after an unlucky start,
  never earns a bonus large enough to be retried. The alarm follows a change of best arm
  better than a higher constant floor, which costs regret on stable arms.
- ``epsilon_greedy`` (``c``, default 6, on exact counts 50; ``floor``, 0.03; ``alarm``, 0; or
  a fixed ``epsilon``): with probability ``eps_t = max(floor, min(1, c * K / N))`` an arm
  takes first place (a uniformly drawn one while the GLIE part ``c * K / N`` is the larger,
  then the floor's choice), the others rank by ``v_i``. The GLIE part explores every arm about
  ``c ln N`` times early on, which keeps a greedy rule on a long memory from locking onto a
  rival, and costs nothing late, once ``c K / N`` is below the floor; its price is some ``c K
  ln(N / (c K))`` uniform draws, mostly on poor arms when ``K`` is large. ``c`` 6 is the
  smallest that locked no seed of many arms; floor 0.03 leaves more of the late pulls to the
  best arm than a higher one. No alarm: an epsilon-greedy favourite seldom shows a decline;
  its lower rise bound (streams/a2e/memory.py) is what keeps a new best arm flagged. ``floor =
  0`` with cumulative counts is pure GLIE; a fixed ``epsilon`` (a uniformly drawn arm)
  replaces ``c``, ``floor`` and ``alarm``.
- ``softmax`` (``c``, default 0.1, on exact counts 0.3; ``floor``, 0.03; ``alarm``, 0.2; or a
  fixed ``temperature`` tau): Boltzmann-Gumbel exploration (Cesa-Bianchi et al., 2017), sort
  by ``v_i + c / sqrt(n_i) * G_i`` with ``G_i`` i.i.d. Gumbel(0, 1): each arm's temperature
  falls as its estimate firms up. A smaller ``c`` locked onto a rival on the long memory, a
  larger one spends pulls on rivals; floor and alarm were chosen as for UCB1, with declines at
  1 standard error. With ``temperature`` the classic Boltzmann draw: sort by ``v_i / tau +
  G_i``, so arm i comes first with probability ``exp(v_i / tau) / sum_j exp(v_j / tau)``
  (Gumbel-max), a share a fixed tau caps whatever the evidence.
- ``thompson`` (``floor``, default 0; ``alarm``, default 0.1; ``draw``, default 0.5): each
  arm scores, with probability ``draw``, ``theta_i`` drawn from its posterior, else its
  posterior mean; sort by score. An arm that has shifted (streams/a2e/memory.py) always
  draws, since its recent memory's wide posterior is how a change is followed. Binary
  rewards: ``Beta(1 + s_i, 1 + n_i - s_i)`` (uniform prior), mean ``v_i``. Other rewards
  (scores mapped to [0, 1]): ``Normal(x_i, var_i / n_i)`` with ``var_i =
  (q_i - n_i x_i^2 + 1/4) / (n_i + 1)`` (``q_i`` the sum of squared rewards): the sample
  variance shrunk toward 1/4, the largest variance a reward in [0, 1] can have, by one
  pseudo-pull; mean ``x_i``. ``draw`` 1 is classic Thompson sampling; below 1 it is
  epsilon-exploring Thompson sampling (after Jin et al., 2023, ``epsilon = draw``, with the
  posterior mean where they take the empirical one): a rival is re-tried about ``draw``
  times as often, which pays back the regret rolling stats add to classic draws; a lower
  ``draw`` locked onto a rival. The draws re-try a rival in proportion to its chance of being
  the best, so a stable world needs no floor (a constant one cost more than its rate: a
  lucky floor pull flags a poor rival as changed, and its wide posterior then takes a few
  more); what draws cannot do is notice that a rival held poor has become the best, which is
  what the alarm (with declines at 2 standard errors) is for.
- ``custom``: a callable registered under the entry-point group ``learnstream.strategies``,
  called as ``strategy(records, params, rng)``; it must return the records reordered.

Exact counts and rolling stats have their own defaults where they differ
(:data:`EXACT_DEFAULTS`, used when every pulled arm is exact: ``recent`` None, as in plain
cumulative :class:`SkillPerformanceRecord` counts a script or a plugin holds). On rolling stats the
floor (and the change test behind the alarm) re-tries every arm, so ``c`` only has to order
arms whose evidence the floor keeps fresh, and a small one spends few pulls on rivals. Exact
counts get no floor: they never forget, so there is no change for it to notice, and the
bonus alone must bring back a best arm held low after an unlucky start. There UCB1 takes the
textbook ``c = sqrt(2)`` (Auer et al., 2002: ``x_i + sqrt(2 ln N / n_i)``, whose logarithmic
regret bound holds for any rewards in [0, 1]), and softmax and epsilon-greedy a larger ``c``
than on rolling stats, for the same reason. A ``c`` given in the parameters applies to both.

Ties break by name, and all randomness comes from ``random.Random(seed)``: a ranking is a
pure function of (records, strategy, params, seed, arms). The defaults were chosen by
``python -m benchmarks.bandits`` on rolling stats, as the worker ranks (stationary 3-20 arms,
score arms, a change of best arm), with cumulative counts as a control; those of
:data:`EXACT_DEFAULTS` by its suite on cumulative counts of arms drawn per seed.

Figures: benchmarks/RESULTS.md, "Adaptation strategies: the figures behind the defaults".
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TypeVar

from learnstream.streams.a2e.memory import Shift
from learnstream.streams.a2e.models import SkillPerformanceRecord

__all__ = [
    "DEFAULTS",
    "ENTRY_POINT_GROUP",
    "EXACT_DEFAULTS",
    "Arm",
    "StrategyError",
    "arm_of",
    "epsilon_at",
    "load_custom",
    "mean_reward",
    "rank",
    "smoothed_reward",
    "softmax_probabilities",
    "ucb1_index",
]

ENTRY_POINT_GROUP = "learnstream.strategies"
DEFAULTS: dict[str, dict[str, float]] = {
    "ucb1": {"c": 0.4, "floor": 0.04, "alarm": 0.2},
    "epsilon_greedy": {"c": 6.0, "floor": 0.03, "alarm": 0.0},
    "softmax": {"c": 0.1, "floor": 0.03, "alarm": 0.2},
    "thompson": {"floor": 0.0, "alarm": 0.1, "draw": 0.5},
}
#: Where exact counts (no arm with recent pulls) take other defaults than rolling stats.
EXACT_DEFAULTS: dict[str, dict[str, float]] = {
    "ucb1": {"c": math.sqrt(2.0)},
    "epsilon_greedy": {"c": 50.0},
    "softmax": {"c": 0.3},
}
#: Parameters that switch a strategy to its fixed-rate form when given.
_OPTIONAL = {"epsilon_greedy": "epsilon", "softmax": "temperature"}
_RANGES = {
    "c": (0.0, math.inf),
    "floor": (0.0, 1.0),
    "alarm": (0.0, 1.0),
    "draw": (0.0, 1.0),
    "epsilon": (0.0, 1.0),
    "temperature": (1e-6, math.inf),
}
STRATEGIES = ("ucb1", "epsilon_greedy", "softmax", "thompson", "custom")


@dataclass(frozen=True, slots=True)
class Arm:
    """What a strategy sees of a skill: pulls, reward total and squares, reward kind, its
    recent pulls (the recent memory's count; None for counts that never decay), and whether
    its recent outcomes have shifted "up" or "down" from its older ones (None: neither)."""

    name: str
    pulls: float = 0.0
    total: float = 0.0
    squares: float = 0.0
    binary: bool = True
    recent: float | None = None
    shift: Shift | None = None


Item = TypeVar("Item", SkillPerformanceRecord, Arm)
Custom = Callable[[Sequence[Item], Mapping[str, float], random.Random], Sequence[Item]]
Params = dict[str, float]


class StrategyError(ValueError):
    """Raise for an unknown strategy or parameter; the message names, never quotes, it."""


def arm_of(record: SkillPerformanceRecord | Arm) -> Arm:
    """Return the arm of a record: its calls and successes (an :class:`Arm` as it is)."""
    if isinstance(record, Arm):
        return record
    wins = float(record.calls_success)
    return Arm(record.name, float(record.calls_total), wins, wins)


def mean_reward(arm: SkillPerformanceRecord | Arm) -> float:
    """Return the arm's mean reward ``s_i / n_i`` (0 when never pulled)."""
    a = arm_of(arm)
    return a.total / a.pulls if a.pulls else 0.0


def smoothed_reward(arm: SkillPerformanceRecord | Arm) -> float:
    """Return the Laplace-smoothed mean reward ``(s_i + 1) / (n_i + 2)``."""
    a = arm_of(arm)
    return (a.total + 1) / (a.pulls + 2)


def _params(strategy: str, given: Mapping[str, float], exact: bool = False) -> Params:
    out = DEFAULTS[strategy] | (EXACT_DEFAULTS.get(strategy, {}) if exact else {})
    allowed = [*out, *([_OPTIONAL[strategy]] if strategy in _OPTIONAL else [])]
    for name, value in given.items():
        if name not in allowed:
            takes = f"only the parameters {', '.join(allowed)}" if allowed else "no parameters"
            raise StrategyError(f"{strategy} takes {takes}")
        low, high = _RANGES[name]
        if not low <= value <= high:
            raise StrategyError(f"{name} must be within [{low}, {high}]")
        out[name] = float(value)
    return out


def ucb1_index(mean: float, pulls: float, total: float, c: float) -> float:
    """Return UCB1's index ``mean + c * sqrt(ln total / pulls)`` of an arm pulled before."""
    return mean + c * math.sqrt(math.log(max(total, 1.0)) / pulls)


def epsilon_at(arms: int, pulls: float, c: float) -> float:
    """Return the GLIE exploration rate ``min(1, c * K / N)`` (without the floor)."""
    return min(1.0, c * arms / pulls) if pulls > 0 else 1.0


def softmax_probabilities(values: Sequence[float], temperature: float) -> list[float]:
    """Return ``exp(v_i / tau) / sum_j exp(v_j / tau)``, computed without overflow."""
    top = max(values)
    weights = [math.exp((v - top) / temperature) for v in values]
    return [w / sum(weights) for w in weights]


def _gumbel(rng: random.Random) -> float:
    # Gumbel(0, 1) = -ln(-ln U); 1 - random() lies in (0, 1], so the logs are finite.
    return -math.log(-math.log(1.0 - rng.random()) or 1e-300)


def _ucb1(arms: list[Arm], p: Params, rng: random.Random, k: int) -> list[float]:
    total = sum(a.pulls for a in arms)
    scores = [ucb1_index(mean_reward(a), a.pulls, total, p["c"]) for a in arms]
    return _floor(arms, scores, _rate(arms, p), rng)


def _rate(arms: list[Arm], p: Params) -> float:
    """Return the floor's rate: ``alarm`` (when larger) while a favourite declines."""
    return max(p["floor"], p["alarm"]) if _alarmed(arms) else p["floor"]


def _explore(scores: list[float], rate: float, rng: random.Random, k: int) -> list[float]:
    """Put a uniformly drawn arm first with probability ``rate``."""
    if rng.random() < rate:
        pick = rng.randrange(k)  # over all K arms: an untried pick is already first
        if pick < len(scores):
            scores[pick] = math.inf
    return scores


def _floor(arms: list[Arm], scores: list[float], rate: float, rng: random.Random) -> list[float]:
    """With probability ``rate`` put first the arm with the fewest recent pulls (of arms
    with a recent memory; ties drawn), so an arm's recent evidence never runs dry."""
    recent = [(a.recent, i) for i, a in enumerate(arms) if a.recent is not None]
    if recent and rng.random() < rate:
        fewest = min(r for r, _ in recent)
        scores[rng.choice([i for r, i in recent if r == fewest])] = math.inf
    return scores


def _epsilon_greedy(arms: list[Arm], p: Params, rng: random.Random, k: int) -> list[float]:
    scores = [smoothed_reward(a) for a in arms]
    if "epsilon" in p:
        return _explore(scores, p["epsilon"], rng, k)
    glie, rate = epsilon_at(k, sum(a.pulls for a in arms), p["c"]), _rate(arms, p)
    if any(a.recent is not None for a in arms) and rate >= glie:
        return _floor(arms, scores, rate, rng)
    return _explore(scores, max(rate, glie), rng, k)


def _softmax(arms: list[Arm], p: Params, rng: random.Random, k: int) -> list[float]:
    if "temperature" in p:
        scores = [smoothed_reward(a) / p["temperature"] + _gumbel(rng) for a in arms]
    else:
        scores = [smoothed_reward(a) + p["c"] / math.sqrt(a.pulls) * _gumbel(rng) for a in arms]
    return _floor(arms, scores, _rate(arms, p), rng)


def _wins(a: Arm) -> float:
    """Return a binary arm's successes, clamped to [0, pulls] (decayed sums may stray)."""
    return min(max(a.total, 0.0), a.pulls)


def _posterior_draw(a: Arm, rng: random.Random) -> float:
    if a.binary:
        wins = _wins(a)
        return rng.betavariate(1.0 + wins, 1.0 + a.pulls - wins)
    mean = a.total / a.pulls
    variance = max(a.squares - a.pulls * mean * mean, 0.0) + 0.25
    return rng.gauss(mean, math.sqrt(variance / (a.pulls + 1) / a.pulls))


def _posterior_mean(a: Arm) -> float:
    if a.binary:
        return (_wins(a) + 1) / (a.pulls + 2)
    return mean_reward(a)


def _draws(a: Arm, draw: float, rng: random.Random) -> bool:
    """Return whether ``a`` scores a posterior draw: always when shifted, else with
    probability ``draw`` (1 and 0 use no randomness: ``draw`` 1 ranks as classic Thompson
    sampling does, seed for seed)."""
    return bool(a.shift) or draw >= 1.0 or (draw > 0.0 and rng.random() < draw)


def _thompson(arms: list[Arm], p: Params, rng: random.Random, k: int) -> list[float]:
    scores = [
        _posterior_draw(a, rng) if _draws(a, p["draw"], rng) else _posterior_mean(a) for a in arms
    ]
    return _floor(arms, scores, _rate(arms, p), rng)


def _alarmed(arms: list[Arm]) -> bool:
    """Return whether a favourite, an arm with the most recent pulls, has shifted down."""
    recent = [a for a in arms if a.recent is not None]
    most = max((a.recent or 0.0 for a in recent), default=0.0)
    return any(a.shift == "down" and a.recent == most for a in recent)


_SCORERS = {
    "ucb1": _ucb1,
    "epsilon_greedy": _epsilon_greedy,
    "softmax": _softmax,
    "thompson": _thompson,
}


def rank(
    records: Sequence[Item],
    strategy: str,
    params: Mapping[str, float] | None = None,
    seed: int = 0,
    *,
    custom: str | None = None,
    arms: Mapping[str, Arm] | None = None,
) -> list[Item]:
    """Return ``records`` best first under ``strategy``; ``arms`` overrides their counts.

    The defaults are :data:`EXACT_DEFAULTS` over :data:`DEFAULTS` when no pulled arm has
    recent pulls (exact counts, e.g. plain cumulative records), else :data:`DEFAULTS`."""
    rng = random.Random(seed)  # noqa: S311  (exploration, not secrecy)
    if strategy == "custom":
        return _run_custom(load_custom(custom), records, params or {}, rng)
    if strategy not in _SCORERS:
        raise StrategyError(f"strategy must be one of {', '.join(STRATEGIES)}")
    views = {id(r): (arms or {}).get(r.name) or arm_of(r) for r in records}
    untried = sorted((r for r in records if views[id(r)].pulls <= 0), key=lambda r: r.name)
    rng.shuffle(untried)
    tried = sorted((r for r in records if views[id(r)].pulls > 0), key=lambda r: r.name)
    tried_arms = [views[id(r)] for r in tried]
    p = _params(strategy, params or {}, all(a.recent is None for a in tried_arms))
    scores = _SCORERS[strategy](tried_arms, p, rng, len(records)) if tried else []
    order = sorted(range(len(tried)), key=lambda i: -scores[i])  # stable: name breaks ties
    return untried + [tried[i] for i in order]


def load_custom(name: str | None) -> Custom[SkillPerformanceRecord]:
    """Return the ``learnstream.strategies`` entry point ``name`` (the only one if None)."""
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name is None and len(found) == 1:
        name = next(iter(found))
    if name not in found:
        names = ", ".join(sorted(found)) or "none installed"
        raise StrategyError(f"custom needs a {ENTRY_POINT_GROUP} entry point by name ({names})")
    loaded: Custom[SkillPerformanceRecord] = found[name].load()
    return loaded


def _run_custom(
    strategy: Custom[SkillPerformanceRecord],
    records: Sequence[Item],
    params: Mapping[str, float],
    rng: random.Random,
) -> list[Item]:
    ranked = list(strategy(records, params, rng))  # type: ignore[arg-type]
    if sorted(map(id, ranked)) != sorted(map(id, records)):
        raise StrategyError("a custom strategy must return the records it was given, reordered")
    return ranked  # type: ignore[return-value]
