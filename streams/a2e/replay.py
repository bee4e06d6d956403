"""Experience replay sampling: uniform, most-recent window, or prioritized by |reward|.

Each draws up to ``n`` distinct experiences (all of them when there are fewer), in a random
order from ``random.Random(seed)``, so a seed reproduces a batch. ``experiences`` are in the
order they happened (oldest first), as read from ``a2e.learn.experiences``.

- ``uniform``: every experience equally likely.
- ``recent``: uniform over the last ``window`` experiences (default ``n``: exactly the
  newest ``n``, shuffled), for on-policy learners that must not see stale behaviour.
- ``prioritized``: weight ``w_i = (|r_i| + eps) ** alpha`` (``alpha`` 1, ``eps`` 1e-3 so a
  zero reward stays drawable; ``alpha = 0`` is uniform), drawn without replacement: the
  first pick is experience i with probability ``w_i / sum(w)``, then the next among the
  rest alike (Efraimidis-Spirakis: the ``n`` largest ``u_i ** (1 / w_i)``, u uniform).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

from learnstream.streams.a2e.models import Experience

__all__ = ["REPLAY_STRATEGIES", "ReplayStrategy", "priority", "sample"]

ReplayStrategy = Literal["uniform", "recent", "prioritized"]
REPLAY_STRATEGIES: tuple[str, ...] = ReplayStrategy.__args__  # type: ignore[attr-defined]


def priority(experience: Experience, alpha: float = 1.0, eps: float = 1e-3) -> float:
    """Return the prioritized-replay weight ``(|reward| + eps) ** alpha``."""
    return float((abs(experience.reward) + eps) ** alpha)


def _check(n: int, window: int | None, alpha: float, eps: float) -> None:
    if n < 0:
        raise ValueError("n must be >= 0")
    if window is not None and window < 1:
        raise ValueError("window must be >= 1")
    if alpha < 0 or eps <= 0:
        raise ValueError("alpha must be >= 0 and eps > 0")


def _prioritized(
    items: Sequence[Experience], n: int, rng: random.Random, alpha: float, eps: float
) -> list[Experience]:
    keyed = [(rng.random() ** (1.0 / priority(e, alpha, eps)), i) for i, e in enumerate(items)]
    return [items[i] for _, i in sorted(keyed, reverse=True)[:n]]


def sample(
    experiences: Sequence[Experience],
    n: int,
    strategy: str = "uniform",
    *,
    seed: int = 0,
    window: int | None = None,
    alpha: float = 1.0,
    eps: float = 1e-3,
) -> list[Experience]:
    """Return up to ``n`` distinct experiences drawn by ``strategy`` (module docstring)."""
    _check(n, window, alpha, eps)
    rng = random.Random(seed)  # noqa: S311  (sampling, not secrecy)
    n = min(n, len(experiences))
    if strategy == "uniform":
        return rng.sample(list(experiences), n)
    if strategy == "recent":
        pool = list(experiences[-(window or n) :]) if n else []
        return rng.sample(pool, min(n, len(pool)))
    if strategy == "prioritized":
        return _prioritized(experiences, n, rng, alpha, eps)
    raise ValueError("strategy must be one of " + ", ".join(REPLAY_STRATEGIES))
