"""Rank skills for adaptation: UCB1, epsilon-greedy, softmax, Thompson sampling, or a plug-in.

An arm is an :class:`Arm`: ``n_i`` pulls (a float, so decayed counts from
:mod:`learnstream.streams.a2e.stats` fit), a reward total ``s_i`` of rewards in [0, 1], mean
``x_i = s_i / n_i`` and ``N = sum(n_i)``, ``K`` arms, and, for an arm of rolling stats, its
recent pulls ``r_i``. A :class:`SkillPerformanceRecord` is the arm ``n_i = calls_total``,
``s_i = calls_success`` (binary rewards, no ``r_i``) unless ``rank`` is given an ``arms``
mapping with a view of that name. The worker's views come from
:meth:`learnstream.streams.a2e.stats.SkillStats.arm`: each skill's long memory (some 66,500 pulls
at a pull every 10 s and the default half-life), or its recent one (some 130) when its recent
outcomes disagree with its older ones (streams/a2e/memory.py). Arms never pulled
(``n_i = 0``) rank first, in a seeded random order, so each is tried once before any
estimate is trusted. ``v_i = (s_i + 1) / (n_i + 2)`` is the Laplace-smoothed mean.

Every built-in strategy has an exploration floor (``floor``; default 0.04 for UCB1, 0.03 for
epsilon-greedy and softmax, 0 for Thompson sampling): with that probability the arm with the
fewest recent pulls ``r_i`` (ties drawn) ranks first. A long memory is sure of a rival it
has seen fail, so UCB1, epsilon-greedy and softmax would not try it again; the floor
re-checks each arm about once every ``(K - 1) / floor`` pulls, which is how a rival that has
become the best is found (one or two recent successes of an arm the long memory holds poor
flag it as changed). It costs about ``floor`` of the pulls, whatever ``K``, and a lower
floor finds a new best arm later. The evidence that the arms have changed is a decline of
the favourite, the arm with the most recent pulls (its shift "down": streams/a2e/memory.py):
while it shows, the floor is ``alarm`` if that is larger (default 0.2 for UCB1 and softmax,
0 for epsilon-greedy, 0.1 for Thompson sampling). So a strategy pays a low floor on stable
arms and searches hard when its favourite fails. Arms without recent pulls (exact counts,
which never forget) get no floor, except epsilon-greedy's. Why each strategy's floor and
alarm are what they are, under its entry below (figures: the rolling column of ``python -m
benchmarks.bandits`` on its 20 seeds, or on 40 with ``--seeds 40``, and of the same suites
run with ``DEFAULTS`` patched; benchmarks/RESULTS.md). Otherwise, highest first:

- ``ucb1`` (``c``, default 0.4; ``floor``, 0.04; ``alarm``, 0.2): ``index_i = x_i + c *
  sqrt(ln N / n_i)``. On the long memory ``N`` grows as on cumulative counts, and a small
  ``c`` locks onto a rival: the best arm's estimate, low after an unlucky start, never earns
  a bonus large enough to be retried (``c`` 0.1: 61.8 % on the best of 20 arms 0.1 apart,
  one seed in six at 0.3 %; 0.3 still left a seed of 10 arms at 66.7 %; measured with a
  long memory of 128). Floor and alarm (seeds 0-39 of the change suite, the new best arm's
  share of the 1,000 pulls after the change; seeds 0-19 of 20 arms 0.1 apart with one
  reward stream per arm, the late share and regret): floor 0.06 without an alarm 75.7 %,
  90.9 % and 237.8; 0.06 with alarm 0.2 83.6 %, 90.0 %, 256.2; 0.04 with 0.2 84.2 %,
  91.6 %, 219.3.
- ``epsilon_greedy`` (``c``, default 6; ``floor``, 0.03; ``alarm``, 0; or a fixed ``epsilon``):
  with probability ``eps_t = max(floor, min(1, c * K / N))`` an arm takes first place (a
  uniformly drawn one while the GLIE part ``c * K / N`` is the larger, then the floor's
  choice), the others rank by ``v_i``. The GLIE part explores every arm about ``c ln N``
  times early on, which is what keeps a greedy rule on a long memory from locking onto a
  rival; it costs nothing late, once ``c K / N`` is below the floor. Its price is some
  ``c K ln(N / (c K))`` uniform draws, most of them on poor arms when ``K`` is large, so
  ``c`` trades regret on many arms against locks. On 20 arms 0.1 apart, one reward stream
  per arm (``--rewards arm``, seeds 0-39): ``c`` 4 and 5 locked a seed onto a rival
  (0.1-0.2 % on the best); 6 none (94.6 % on the best, worst seed 77.2 %, regret 259.7); 7
  none (93.9 %, 281.9); 10 none on seeds 0-19, but its regret (351.5 at floor 0.03, 358.1 at
  0.05, the old default) was significantly above MABWiser's EpsilonGreedy (274.2 on seeds
  0-19, +83.8 +- 37.4 at 0.05). A lower floor leaves more of the late pulls to the best arm:
  floor 0.04 with ``c`` 6 gave 93.8 % and regret 268.8. Hence ``c`` 6 and floor 0.03: every
  row of the benchmark passed with either reward stream at the rise bound of 1.5
  (benchmarks/RESULTS.md, "epsilon-greedy on many arms"); at 1.25, by pull, and per arm
  on 20 arms and the change suite (the other per-arm suites were not re-run). Following a
  change (seeds 0-39) at 1.5 it gave the new best arm 70.6 %, one seed 1.4 %: the floor's
  pulls found it, but one failure unflagged it and the greedy rule dropped it. An alarm
  did not help (0.2: 71.8 %; a favourite of epsilon-greedy seldom shows a decline); a lower
  rise bound for epsilon-greedy (1.25, streams/a2e/memory.py) did: 76.9 %.
  ``floor = 0`` with cumulative counts is pure GLIE; a fixed ``epsilon`` (a uniformly drawn
  arm) replaces ``c``, ``floor`` and ``alarm``.
- ``softmax`` (``c``, default 0.1; ``floor``, 0.03; ``alarm``, 0.2; or a fixed ``temperature``
  tau): Boltzmann-Gumbel exploration (Cesa-Bianchi et al., 2017), sort by ``v_i + c /
  sqrt(n_i) * G_i`` with ``G_i`` i.i.d. Gumbel(0, 1): each arm's temperature falls as its
  estimate firms up. On the long memory (of 128) ``c`` 0.05 locked onto a rival on some
  seeds (10 arms 0.1 apart: one seed of 10 at 0.7 %), 0.2 cost 20 arms 0.1 apart about 3 %
  of the pulls on the best. Floor and alarm (as under UCB1): floor 0.06 without an alarm
  69.9 % after a change (a seed at 2.5 %), 89.9 % on 20 arms, regret 221.6; 0.06 with
  alarm 0.1 76.2 %, 89.3 %; with 0.15 80.5 %, 88.7 %; 0.04 with 0.15 84.0 %, 91.3 %, 195.3;
  0.03 with 0.15 84.7 % (a seed at 40.7 %), 91.8 %, 177.3; 0.03 with 0.2 86.2 % (worst
  seed 76.0 %), 91.0 %, 184.8; 0.02 with 0.2 83.2 % (a seed at 4.1 %), 92.5 %. The
  declines that raise the alarm are at 1 standard error, as for the other strategies: at
  2, as for Thompson sampling, 0.04 with 0.15 gave 94.1 % on 20 arms but 76.3 % after a
  change (a seed at 2.2 %).
  With ``temperature`` the classic Boltzmann draw: sort by ``v_i / tau + G_i``, so arm i
  comes first with probability ``exp(v_i / tau) / sum_j exp(v_j / tau)`` (Gumbel-max),
  a share a fixed tau caps whatever the evidence.
- ``thompson`` (``floor``, default 0; ``alarm``, default 0.1; ``draw``, default 0.5): each
  arm scores, with probability ``draw``, ``theta_i`` drawn from its posterior, else its
  posterior mean; sort by score. An arm that has shifted (streams/a2e/memory.py) always
  draws. Binary rewards: ``Beta(1 + s_i, 1 + n_i - s_i)`` (uniform prior), mean ``v_i``.
  Other rewards (scores mapped to [0, 1]): ``Normal(x_i, var_i / n_i)`` with ``var_i =
  (q_i - n_i x_i^2 + 1/4) / (n_i + 1)`` (``q_i`` the sum of squared rewards): the sample
  variance shrunk toward 1/4, the largest variance a reward in [0, 1] can have, by one
  pseudo-pull; mean ``x_i``. ``draw`` 1 is classic Thompson sampling; below 1 it is
  epsilon-exploring Thompson sampling (after Jin et al., 2023, ``epsilon = draw``, with the
  posterior mean where they take the empirical one, and shifted arms always drawing): a
  rival is re-tried about ``draw`` times as often, which cuts the pulls spent on rivals 0.1
  behind while each still gets a posterior draw. A shifted arm always draws, since its
  recent memory's wide posterior is how a change is followed. The draws re-try a rival in
  proportion to the chance that it is the best (``draw`` times that), so a stable world
  needs no floor; what they cannot do is notice that a rival they hold poor has become the
  best. The evidence that the arms have changed is a decline of the favourite, the arm
  with the most recent pulls (its shift "down", at 2 standard errors for Thompson
  sampling: streams/a2e/memory.py): while it shows, the floor is ``alarm``. A constant
  floor cost more than its rate (a floor pull that succeeds on a poor rival flags it as
  changed, and the wide posterior of one or two recent pulls then pulls it a few times
  more): at 0.04 the regret on 20 arms 0.1 apart was 294.8 against MABWiser's 171.6 (its
  ThompsonSampling, seeds 0-19), and at 0 the new best arm after a change got 67.2 % of
  the pulls on seeds 20-39. With the alarm instead, 0.1 (and the long memory of
  ``LONG_MEMORY`` 512), and classic draws: 182.3, still above MABWiser's. Rolling stats
  cost classic draws 3-5 % regret against MABWiser's on stable arms (paired on per-arm
  reward streams), about half of it the change test's flags of lucky rivals (183.7
  against 179.1 with the test off, seeds 0-39). ``draw`` 0.5 pays that back: 158.8
  against 171.6 on 20 arms 0.1 apart, 87.7 against 81.7 on 10 (within the paired
  interval), and the new best arm gets 79.5 % of the pulls after a change (seeds 0-19;
  benchmarks/RESULTS.md, "epsilon-exploring Thompson sampling"). 0.25 cut the regret
  further but locked a seed of 20 arms onto a rival (0.1 % on the best).
- ``custom``: a callable registered under the entry-point group ``learnstream.strategies``,
  called as ``strategy(records, params, rng)``; it must return the records reordered.

Ties break by name, and all randomness comes from ``random.Random(seed)``: a ranking is a
pure function of (records, strategy, params, seed, arms). The defaults were chosen by
``python -m benchmarks.bandits`` on rolling stats, as the worker ranks (stationary 3-20
arms, score arms, a change of best arm), with cumulative counts as a control; the figures
are in benchmarks/RESULTS.md.
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


def _params(strategy: str, given: Mapping[str, float]) -> Params:
    out = dict(DEFAULTS[strategy])
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
    """Return ``records`` best first under ``strategy``; ``arms`` overrides their counts."""
    rng = random.Random(seed)  # noqa: S311  (exploration, not secrecy)
    if strategy == "custom":
        return _run_custom(load_custom(custom), records, params or {}, rng)
    if strategy not in _SCORERS:
        raise StrategyError(f"strategy must be one of {', '.join(STRATEGIES)}")
    p = _params(strategy, params or {})
    views = {id(r): (arms or {}).get(r.name) or arm_of(r) for r in records}
    untried = sorted((r for r in records if views[id(r)].pulls <= 0), key=lambda r: r.name)
    rng.shuffle(untried)
    tried = sorted((r for r in records if views[id(r)].pulls > 0), key=lambda r: r.name)
    tried_arms = [views[id(r)] for r in tried]
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
