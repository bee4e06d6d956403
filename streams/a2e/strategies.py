"""Rank skills for adaptation: UCB1, epsilon-greedy, softmax, or a plug-in strategy.

An arm is a :class:`SkillPerformanceRecord`: ``n_i = calls_total`` pulls, mean reward
``x_i = calls_success / calls_total`` (a success rate in [0, 1], the range UCB1's bound
assumes), ``N = sum(n_i)``. Arms never pulled (``n_i = 0``) rank first, in a seeded random
order, so each is tried once before any estimate is trusted. Otherwise:

- ``ucb1`` (``c``, default sqrt 2): ``index_i = x_i + c * sqrt(ln N / n_i)``, highest first.
- ``epsilon_greedy`` (``epsilon``, default 0.05): with probability ``epsilon`` an arm drawn
  uniformly takes first place (explore); the others, or all of them, rank by
  ``v_i = (s_i + 1) / (n_i + 2)`` (``s_i = calls_success``; the Laplace-smoothed rate).
- ``softmax`` (``temperature`` tau, default 0.05): arm i comes first with probability
  ``exp(v_i / tau) / sum_j exp(v_j / tau)`` (Boltzmann). The whole ranking is a
  Plackett-Luce draw: sort by ``v_i / tau + G_i`` with ``G_i`` i.i.d. Gumbel(0, 1), which
  gives exactly those first-place probabilities (the Gumbel-max trick).
- ``custom``: a callable registered under the entry-point group ``learnstream.strategies``,
  called as ``strategy(records, params, rng)``; it must return the records reordered.

Why ``v_i`` and not ``x_i`` for the last two: with a low temperature, a best arm whose first
pull failed (``x_i = 0``) would almost never be drawn again; ``v_i`` keeps it within reach
while the others' estimates fall to their true rates.

Ties break by name, and all randomness comes from ``random.Random(seed)``: a ranking is a
pure function of (records, strategy, params, seed). The defaults (c = sqrt 2, epsilon = 0.05,
tau = 0.05) each pick the best of five Bernoulli arms in over 90 % of pulls 4,001-5,000
(``tests/unit/test_a2e_strategies.py``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import entry_points

from streams.a2e.models import SkillPerformanceRecord

__all__ = [
    "DEFAULTS",
    "ENTRY_POINT_GROUP",
    "StrategyError",
    "load_custom",
    "mean_reward",
    "rank",
    "smoothed_reward",
    "softmax_probabilities",
    "ucb1_index",
]

ENTRY_POINT_GROUP = "learnstream.strategies"
DEFAULTS: dict[str, dict[str, float]] = {
    "ucb1": {"c": math.sqrt(2)},
    "epsilon_greedy": {"epsilon": 0.05},
    "softmax": {"temperature": 0.05},
}
_RANGES = {"c": (0.0, math.inf), "epsilon": (0.0, 1.0), "temperature": (1e-6, math.inf)}
Records = Sequence[SkillPerformanceRecord]
Custom = Callable[[Records, Mapping[str, float], random.Random], Records]


class StrategyError(ValueError):
    """Raise for an unknown strategy or parameter; the message names, never quotes, it."""


def mean_reward(record: SkillPerformanceRecord) -> float:
    """Return the arm's mean reward: its success rate (0 when never pulled)."""
    return record.calls_success / record.calls_total if record.calls_total else 0.0


def smoothed_reward(record: SkillPerformanceRecord) -> float:
    """Return the Laplace-smoothed success rate ``(s_i + 1) / (n_i + 2)``."""
    return (record.calls_success + 1) / (record.calls_total + 2)


def _params(strategy: str, given: Mapping[str, float]) -> dict[str, float]:
    out = dict(DEFAULTS[strategy])
    for name, value in given.items():
        if name not in out:
            raise StrategyError(f"{strategy} takes only the parameters {', '.join(out)}")
        low, high = _RANGES[name]
        if not low <= value <= high:
            raise StrategyError(f"{name} must be within [{low}, {high}]")
        out[name] = float(value)
    return out


def ucb1_index(mean: float, pulls: int, total: int, c: float) -> float:
    """Return UCB1's index ``mean + c * sqrt(ln total / pulls)`` of an arm pulled before."""
    return mean + c * math.sqrt(math.log(total) / pulls)


def softmax_probabilities(values: Sequence[float], temperature: float) -> list[float]:
    """Return ``exp(v_i / tau) / sum_j exp(v_j / tau)``, computed without overflow."""
    top = max(values)
    weights = [math.exp((v - top) / temperature) for v in values]
    return [w / sum(weights) for w in weights]


def _ucb1(tried: Records, p: dict[str, float], rng: random.Random) -> list[float]:
    total = sum(r.calls_total for r in tried)
    return [ucb1_index(mean_reward(r), r.calls_total, total, p["c"]) for r in tried]


def _epsilon_greedy(tried: Records, p: dict[str, float], rng: random.Random) -> list[float]:
    scores = [smoothed_reward(r) for r in tried]
    if rng.random() < p["epsilon"]:
        scores[rng.randrange(len(tried))] = math.inf
    return scores


def _softmax(tried: Records, p: dict[str, float], rng: random.Random) -> list[float]:
    # Gumbel(0, 1) = -ln(-ln U); 1 - random() lies in (0, 1], so the logs are finite.
    return [
        smoothed_reward(r) / p["temperature"] - math.log(-math.log(1.0 - rng.random()) or 1e-300)
        for r in tried
    ]


_SCORERS = {"ucb1": _ucb1, "epsilon_greedy": _epsilon_greedy, "softmax": _softmax}


def rank(
    records: Records,
    strategy: str,
    params: Mapping[str, float] | None = None,
    seed: int = 0,
    *,
    custom: str | None = None,
) -> list[SkillPerformanceRecord]:
    """Return ``records`` best first under ``strategy`` (see the module docstring)."""
    rng = random.Random(seed)  # noqa: S311  (exploration, not secrecy)
    if strategy == "custom":
        return _run_custom(load_custom(custom), records, params or {}, rng)
    if strategy not in _SCORERS:
        raise StrategyError("strategy must be one of ucb1, epsilon_greedy, softmax, custom")
    p = _params(strategy, params or {})
    untried = sorted((r for r in records if r.calls_total == 0), key=lambda r: r.name)
    rng.shuffle(untried)
    tried = sorted((r for r in records if r.calls_total > 0), key=lambda r: r.name)
    scores = _SCORERS[strategy](tried, p, rng) if tried else []
    order = sorted(range(len(tried)), key=lambda i: -scores[i])  # stable: name breaks ties
    return untried + [tried[i] for i in order]


def load_custom(name: str | None) -> Custom:
    """Return the ``learnstream.strategies`` entry point ``name`` (the only one if None)."""
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if name is None and len(found) == 1:
        name = next(iter(found))
    if name not in found:
        names = ", ".join(sorted(found)) or "none installed"
        raise StrategyError(f"custom needs a {ENTRY_POINT_GROUP} entry point by name ({names})")
    loaded: Custom = found[name].load()
    return loaded


def _run_custom(
    strategy: Custom, records: Records, params: Mapping[str, float], rng: random.Random
) -> list[SkillPerformanceRecord]:
    ranked = list(strategy(records, params, rng))
    if sorted(map(id, ranked)) != sorted(map(id, records)):
        raise StrategyError("a custom strategy must return the records it was given, reordered")
    return ranked
