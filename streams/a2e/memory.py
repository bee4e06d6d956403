"""Choose, per arm and at read time, which of two decayed memories a strategy ranks it on.

Every skill's stats hold two exponentially decayed sets of counters (streams/a2e/stats.py):
a *recent* memory with the configured half-life ``H`` and a *long* one with half-life
``LONG_MEMORY * H``. As reward totals (rewards in [0, 1]) each is a :class:`Counts`
``(n, s, q)``: decayed pulls, rewards and squared rewards. An update of age ``a`` weighs
``2 ** (-a / (LONG_MEMORY * H)) - 2 ** (-a / H) >= 0`` in ``long - recent``, so the
difference is the *older* evidence, the part of the long memory the recent one has
forgotten. :func:`shift` compares the recent mean with the older one in a two-sample z
test:

    m_r = s_r / n_r,  m_o = s_o / n_o  (o = long - recent)
    v   = (q_l - n_l m_l^2 + 1/4) / (n_l + 1)   (the long memory's variance, shrunk to 1/4)
    z   = (m_r - m_o) / sqrt(v (1 / n_r + 1 / n_o))

A skill whose recent mean stands above its older one by more than ``Z_UP`` (default 1.5)
standard errors, or below it by more than ``Z_DOWN`` (default 1.0; a strategy may have its
own bounds, :data:`BOUNDS`), has shifted "up" or "down" (:func:`shift`) as far as the
evidence tells: it ranks on its recent memory, whose fewer pulls also widen its
exploration bonus or posterior. Any other skill ranks on its long memory, whose many pulls
give the narrow estimates a choice among many arms 0.1 apart needs. A skill with no
recent or no older evidence ranks on its long memory (then the same as the recent one).
The choice reads merged counters only, so it is the same on every worker and a pure
function of the stats.

Why the constants:

- ``Z_UP = 1.5``: the strategies' exploration floor leaves a rival only one or two recent
  pulls, and one success of an arm the long memory holds at 0.2 is z ~ 2: it flags the arm
  as improved, which is how a new best arm is found. A lower bound also flags lucky rivals,
  each then pulled a few times; a much higher one follows no change of best arm at all.
- ``Z_DOWN = 1.0``: an arm that got worse is pulled less, so its recent evidence thins;
  once it no longer shows the decline it ranks on its long memory again, which still holds
  it good. The floor's visits keep a few recent pulls of it, and a lower bound for declines
  lets them hold it flagged.
- Thompson sampling's decline bound, 2.0 (``BOUNDS``): a stable favourite's recent mean
  falls 1 standard error below its older one about a sixth of the time, and each time
  Thompson sampling would draw it from its recent memory, whose wider posterior loses pulls
  to the runner-up; a decline also raises its alarm floor (streams/a2e/strategies.py), which
  should fire on a change, not on luck. The other strategies keep 1.0: their floors were
  chosen with it.
- Epsilon-greedy's rise bound, 1.25 (``BOUNDS``): a rival that has become the best is found
  by the floor's single pulls, and two recent successes flag it; at 1.5 the first failure
  among its next pulls unflagged it and the greedy rule dropped it again. Lower still flags
  too many lucky rivals.
- ``LONG_MEMORY = 512``: at the default recent half-life and a pull every 10 s the long
  memory holds some 66,500 pulls (half-life 128 h, 5.3 days): rivals keep estimates as
  narrow as cumulative counts give, yet old evidence fades within weeks. A shorter long
  memory made forgetting alone cost Thompson sampling regret on stable arms.
- The default recent half-life, 900 s (streams/a2e/stats.py; some 130 pulls at a pull every
  10 s): the recent memory of an arm that changed still holds its evidence from before, and
  the shorter it is the sooner that is gone; shorter still, the floor's single pulls flag
  more lucky rivals.

Figures: benchmarks/RESULTS.md, "Adaptation strategies: the figures behind the defaults".
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

__all__ = [
    "BOUNDS",
    "LONG_MEMORY",
    "Z_DOWN",
    "Z_UP",
    "Counts",
    "Shift",
    "bounds_for",
    "shift",
    "z_score",
]

LONG_MEMORY = 512.0
Z_UP = 1.5
Z_DOWN = 1.0
#: Strategies whose change test differs from (Z_UP, Z_DOWN): (up, down).
BOUNDS: dict[str, tuple[float, float]] = {
    "thompson": (Z_UP, 2.0),
    "epsilon_greedy": (1.25, Z_DOWN),
}
_EPS = 1e-9
Shift = Literal["up", "down"]


class Counts(NamedTuple):
    """Decayed pulls ``n``, reward total ``s`` and squared rewards ``q`` (rewards in [0, 1])."""

    n: float
    s: float
    q: float


def z_score(recent: Counts, long: Counts) -> float | None:
    """Return the z of the recent mean against the older evidence (None: nothing to compare)."""
    old_n, old_s = long.n - recent.n, long.s - recent.s
    if recent.n <= _EPS or old_n <= _EPS or long.n <= _EPS:
        return None
    mean_l = long.s / long.n
    variance = max(long.q - long.n * mean_l * mean_l, 0.0) + 0.25
    variance /= long.n + 1.0
    spread = math.sqrt(variance * (1.0 / recent.n + 1.0 / old_n))
    return (recent.s / recent.n - max(old_s, 0.0) / old_n) / spread


def bounds_for(strategy: str | None) -> tuple[float, float]:
    """Return the change test's (up, down) bounds for ``strategy``."""
    return BOUNDS.get(strategy or "", (Z_UP, Z_DOWN))


def shift(
    recent: Counts, long: Counts, up: float | None = None, down: float | None = None
) -> Shift | None:
    """Return "up" or "down" when the recent mean has left the older one, else None."""
    z = z_score(recent, long)
    if z is not None and z > (Z_UP if up is None else up):
        return "up"
    if z is not None and z < -(Z_DOWN if down is None else down):
        return "down"
    return None
