"""Per-skill (or per-tool) performance stats that merge across partitions and workers.

Counts and sums add, so two partial stats merge into the stats of both; the running means
are ``sum / count`` at read time, and p95 comes from a :class:`DurationSketch`. The JSON
form (:meth:`SkillStats.to_dict`) is what a table stores.

- ``calls_total`` counts every call; ``calls_success``/``calls_failed`` those whose outcome
  is known (a call may have neither, so success + failed <= total). These, the score and
  the duration fields are exact counts for reporting: they never decay.
- ``avg_duration_ms`` and ``p95_duration_ms`` cover calls that reported a duration.
- ``avg_score`` is the mean feedback score (-1..1) of the scores recorded.

Rolling counters, for adaptation: the known outcomes, successes, scores, score sum and sum
of squares also accumulate with exponential decay by event time, in two memories: a
*recent* one with the configured half-life (``half_life_s``) and a *long* one with
``LONG_MEMORY`` times that half-life (streams/a2e/memory.py). An update at time ``t``
weighs ``2 ** -((T - t) / half_life)`` at a later time ``T``, whatever order updates arrive
in, so decayed stats still merge by adding (after both are brought to the later ``as_of``).
At ``r`` pulls a second a memory holds about ``r * half_life / ln 2`` pulls.
:meth:`SkillStats.arm` gives a strategy's :class:`~learnstream.streams.a2e.strategies.Arm` from the
memory the change test picks for this skill (long unless its recent outcomes have shifted
from its older ones: :func:`learnstream.streams.a2e.memory.shift`, with the strategy's bounds), from
the recent memory alone, or from the exact counts. Stats stored without a long memory load
with it equal to their recent counters. The default half-life (:data:`DEFAULT_HALF_LIFE_S`)
and why are in streams/a2e/memory.py. An update without a time adds at ``as_of`` (no
decay).

Idempotence: an update names its source record (:class:`SourceRecord`: topic, partition,
offset, and an item number for several updates from one record). Each stats value keeps the
highest (offset, item) applied per source topic-partition and kind (call or score) and
skips any update at or below it: Kafka delivers a partition in offset order, so a record
replayed after a crash is exactly one at or below the mark. The memory is one mark per
source topic-partition and kind that fed this value (a table keyed by source partition,
as agents/learning/stats.py keys it, holds one per source topic and kind).
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from learnstream.streams.a2e.memory import LONG_MEMORY, Counts, shift
from learnstream.streams.a2e.models import SkillPerformanceRecord
from learnstream.streams.a2e.sketch import DurationSketch
from learnstream.streams.a2e.strategies import Arm
from learnstream.streams.a2e.wire import describe

__all__ = ["DEFAULT_HALF_LIFE_S", "SkillStats", "SourceRecord", "StatsState"]

DEFAULT_HALF_LIFE_S = 900.0
# Positions in the decayed counters.
_OUTCOMES, _WINS, _SCORES, _SCORE_SUM, _SCORE_SQ = range(5)


class SourceRecord(NamedTuple):
    """The record an update comes from: replaying it must not count it again."""

    topic: str
    partition: int
    offset: int
    item: int = 0


class StatsState(BaseModel):
    """The JSON form of :class:`SkillStats`."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    calls_total: int = Field(0, ge=0)
    calls_success: int = Field(0, ge=0)
    calls_failed: int = Field(0, ge=0)
    duration_count: int = Field(0, ge=0)
    duration_sum_ms: float = Field(0.0, ge=0)
    score_count: int = Field(0, ge=0)
    score_sum: float = 0.0
    score_sq_sum: float = Field(0.0, ge=0)
    durations: dict[str, Any] | None = None
    half_life_s: float = Field(DEFAULT_HALF_LIFE_S, gt=0)
    as_of: float | None = None
    decayed: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    #: The long memory; None in stats stored without one (it then starts as ``decayed``).
    long_decayed: tuple[float, float, float, float, float] | None = None
    watermarks: dict[str, tuple[int, int]] = Field(default_factory=dict)


def _decay(seconds: float, half_life_s: float) -> float:
    return math.exp(-math.log(2.0) * max(seconds, 0.0) / half_life_s)


class SkillStats:
    """Mergeable exact counts, decayed counters and a duration sketch for one skill or tool."""

    def __init__(self, half_life_s: float = DEFAULT_HALF_LIFE_S) -> None:
        if not (math.isfinite(half_life_s) and half_life_s > 0):
            raise ValueError("half_life_s must be a finite number > 0")
        self.calls_total = self.calls_success = self.calls_failed = 0
        self.duration_count = self.score_count = 0
        self.duration_sum_ms = self.score_sum = self.score_sq_sum = 0.0
        self.durations = DurationSketch()
        self.half_life_s = half_life_s
        self.as_of: float | None = None
        self.decayed = [0.0] * 5
        self.long = [0.0] * 5
        self.watermarks: dict[str, tuple[int, int]] = {}

    def add_call(
        self,
        success: bool | None = None,
        duration_ms: float | None = None,
        *,
        at: float | None = None,
        source: SourceRecord | None = None,
    ) -> bool:
        """Count one call at event time ``at`` (epoch s); return False for a replayed source."""
        if duration_ms is not None and not (math.isfinite(duration_ms) and duration_ms >= 0):
            raise ValueError("duration_ms must be a finite number >= 0")
        if not self._fresh("call", source):
            return False
        self.calls_total += 1
        self.calls_success += success is True
        self.calls_failed += success is False
        if success is not None:
            self._add_decayed(at, {_OUTCOMES: 1.0, _WINS: float(success)})
        if duration_ms is not None:
            self.duration_count += 1
            self.duration_sum_ms += duration_ms
            self.durations.add(duration_ms)
        return True

    def add_score(
        self, score: float, *, at: float | None = None, source: SourceRecord | None = None
    ) -> bool:
        """Count one feedback score in [-1, 1]; return False for a replayed source."""
        if not -1.0 <= score <= 1.0:
            raise ValueError("score must be within [-1, 1]")
        if not self._fresh("score", source):
            return False
        self.score_count += 1
        self.score_sum += score
        self.score_sq_sum += score * score
        self._add_decayed(at, {_SCORES: 1.0, _SCORE_SUM: score, _SCORE_SQ: score * score})
        return True

    def _fresh(self, kind: str, source: SourceRecord | None) -> bool:
        if source is None:
            return True
        key, mark = f"{kind}|{source.topic}|{source.partition}", (source.offset, source.item)
        if key in self.watermarks and mark <= self.watermarks[key]:
            return False
        self.watermarks[key] = mark
        return True

    @property
    def long_half_life_s(self) -> float:
        """Return the long memory's half-life, ``LONG_MEMORY`` times the recent one's."""
        return LONG_MEMORY * self.half_life_s

    def _add_decayed(self, at: float | None, deltas: dict[int, float]) -> None:
        if at is not None and not math.isfinite(at):
            raise ValueError("at must be a finite event time")
        age = 0.0
        if at is not None and self.as_of is not None and at < self.as_of:
            age = self.as_of - at
        elif at is not None:
            self._advance(at)
        recent, long = _decay(age, self.half_life_s), _decay(age, self.long_half_life_s)
        for slot, delta in deltas.items():
            self.decayed[slot] += recent * delta
            self.long[slot] += long * delta

    def _advance(self, to: float) -> None:
        self.decayed, self.long = self.rolling(to), self.rolling(to, long=True)
        self.as_of = to if self.as_of is None else max(self.as_of, to)

    def rolling(self, now: float | None = None, *, long: bool = False) -> list[float]:
        """Return the decayed (outcomes, wins, scores, score sum, squares) as of ``now``,
        of the recent memory (or of the long one)."""
        values = self.long if long else self.decayed
        if now is None or self.as_of is None:
            return list(values)
        factor = _decay(now - self.as_of, self.long_half_life_s if long else self.half_life_s)
        return [value * factor for value in values]

    def arm(
        self,
        name: str,
        *,
        now: float | None = None,
        reward: Literal["success", "score"] = "success",
        rolling: bool = True,
        memory: Literal["chosen", "recent"] = "chosen",
        bounds: tuple[float, float] | None = None,
    ) -> Arm:
        """Return the strategy's view: successes of known outcomes, or scores mapped to [0, 1].

        Rolling, the memory the change test picks for this skill (its recent one when it has
        shifted up or down past ``bounds``, a strategy's from
        :func:`~learnstream.streams.a2e.memory.bounds_for`; else its long one), or the recent one
        alone; otherwise the exact counts."""
        moved = None
        if not rolling:
            exact: list[float] = [self.calls_success + self.calls_failed, self.calls_success]
            exact += [self.score_count, self.score_sum, self.score_sq_sum]
            counts = _unit_counts(exact, reward)
            recent = None
        else:
            recent = _unit_counts(self.rolling(now), reward)
            long = _unit_counts(self.rolling(now, long=True), reward)
            moved = shift(recent, long, *(bounds or (None, None)))
            counts = recent if memory == "recent" or moved else long
        return Arm(
            name,
            float(counts.n),
            float(counts.s),
            float(counts.q),
            reward == "success",
            None if recent is None else float(recent.n),
            moved,
        )

    def merge(self, other: SkillStats) -> None:
        """Add ``other``'s calls, scores, durations, decayed counters and marks to these."""
        if other.half_life_s != self.half_life_s:
            raise ValueError("stats with different half-lives do not merge")
        for name in ("calls_total", "calls_success", "calls_failed", "duration_count"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("duration_sum_ms", "score_count", "score_sum", "score_sq_sum"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.durations.merge(other.durations)
        if other.as_of is not None and (self.as_of is None or other.as_of > self.as_of):
            self._advance(other.as_of)
        for long in (False, True):
            mine, theirs = self.rolling(long=long), other.rolling(self.as_of, long=long)
            summed = [a + b for a, b in zip(mine, theirs, strict=True)]
            self.decayed, self.long = (self.decayed, summed) if long else (summed, self.long)
        for key, mark in other.watermarks.items():
            self.watermarks[key] = max(mark, self.watermarks.get(key, mark))

    def record(self, name: str) -> SkillPerformanceRecord:
        """Return the A2E record of these stats' exact counts under ``name``."""
        return SkillPerformanceRecord(
            name=name,
            calls_total=self.calls_total,
            calls_success=self.calls_success,
            calls_failed=self.calls_failed,
            avg_duration_ms=self.duration_sum_ms / self.duration_count
            if self.duration_count
            else 0.0,
            avg_score=max(-1.0, min(1.0, self.score_sum / self.score_count))
            if self.score_count
            else 0.0,
            p95_duration_ms=self.durations.quantile(0.95) or 0.0,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (JSON types only)."""
        fields = {
            name: getattr(self, name)
            for name in StatsState.model_fields
            if name not in ("durations", "decayed", "long_decayed")
        }
        state = StatsState(
            **fields,
            decayed=tuple(self.decayed),
            long_decayed=tuple(self.long),
            durations=self.durations.to_dict(),
        )
        return state.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SkillStats:
        """Return the stats of a JSON form; raise ValueError naming what is malformed."""
        try:
            state = StatsState.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"not skill stats: {describe(exc)}") from None
        out = cls(state.half_life_s)
        skip = {"durations", "decayed", "long_decayed"}
        for name, value in state.model_dump(exclude=skip).items():
            setattr(out, name, value)
        out.decayed, out.watermarks = list(state.decayed), dict(state.watermarks)
        out.long = list(state.decayed if state.long_decayed is None else state.long_decayed)
        if state.durations is not None:
            out.durations = DurationSketch.from_dict(state.durations)
        return out

    @classmethod
    def merged(cls, parts: list[SkillStats]) -> SkillStats:
        """Return one stats holding every part (e.g. the per-partition entries of a skill)."""
        out = cls(parts[0].half_life_s if parts else DEFAULT_HALF_LIFE_S)
        for part in parts:
            out.merge(part)
        return out


def _unit_counts(counters: list[float], reward: Literal["success", "score"]) -> Counts:
    """Return (outcomes, wins, scores, score sum, squares) as rewards in [0, 1]."""
    outcomes, wins, count, total, squares = counters
    if reward == "success":
        return Counts(outcomes, wins, wins)
    # r = (score + 1) / 2, so sum r = (S + n) / 2 and sum r^2 = (Q + 2 S + n) / 4
    return Counts(count, (total + count) / 2, (squares + 2 * total + count) / 4)
