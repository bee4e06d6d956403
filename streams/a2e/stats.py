"""Per-skill (or per-tool) performance stats that merge across partitions and workers.

Counts and sums add, so two partial stats merge into the stats of both; the running means
are ``sum / count`` at read time, and p95 comes from a :class:`DurationSketch`. The JSON
form (:meth:`SkillStats.to_dict`) is what a table stores.

- ``calls_total`` counts every call; ``calls_success``/``calls_failed`` those whose outcome
  is known (a call may have neither, so success + failed <= total).
- ``avg_duration_ms`` and ``p95_duration_ms`` cover calls that reported a duration.
- ``avg_score`` is the mean feedback score (-1..1) of the scores recorded.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from streams.a2e.models import SkillPerformanceRecord
from streams.a2e.sketch import DurationSketch
from streams.a2e.wire import describe

__all__ = ["SkillStats", "StatsState"]


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
    durations: dict[str, Any] | None = None


class SkillStats:
    """Mergeable counts, sums and a duration sketch for one skill or tool."""

    def __init__(self) -> None:
        self.calls_total = self.calls_success = self.calls_failed = 0
        self.duration_count = self.score_count = 0
        self.duration_sum_ms = self.score_sum = 0.0
        self.durations = DurationSketch()

    def add_call(self, success: bool | None = None, duration_ms: float | None = None) -> None:
        """Count one call: its outcome (None: unknown) and duration (None: not reported)."""
        if duration_ms is not None and not (math.isfinite(duration_ms) and duration_ms >= 0):
            raise ValueError("duration_ms must be a finite number >= 0")
        self.calls_total += 1
        self.calls_success += success is True
        self.calls_failed += success is False
        if duration_ms is not None:
            self.duration_count += 1
            self.duration_sum_ms += duration_ms
            self.durations.add(duration_ms)

    def add_score(self, score: float) -> None:
        """Count one feedback score in [-1, 1]."""
        if not -1.0 <= score <= 1.0:
            raise ValueError("score must be within [-1, 1]")
        self.score_count += 1
        self.score_sum += score

    def merge(self, other: SkillStats) -> None:
        """Add ``other``'s calls, scores and durations to these."""
        self.calls_total += other.calls_total
        self.calls_success += other.calls_success
        self.calls_failed += other.calls_failed
        self.duration_count += other.duration_count
        self.duration_sum_ms += other.duration_sum_ms
        self.score_count += other.score_count
        self.score_sum += other.score_sum
        self.durations.merge(other.durations)

    def record(self, name: str) -> SkillPerformanceRecord:
        """Return the A2E record of these stats under ``name``."""
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
            name: getattr(self, name) for name in StatsState.model_fields if name != "durations"
        }
        return StatsState(**fields, durations=self.durations.to_dict()).model_dump()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SkillStats:
        """Return the stats of a JSON form; raise ValueError naming what is malformed."""
        try:
            state = StatsState.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"not skill stats: {describe(exc)}") from None
        out = cls()
        for name, value in state.model_dump(exclude={"durations"}).items():
            setattr(out, name, value)
        if state.durations is not None:
            out.durations = DurationSketch.from_dict(state.durations)
        return out

    @classmethod
    def merged(cls, parts: list[SkillStats]) -> SkillStats:
        """Return one stats holding every part (e.g. the per-partition entries of a skill)."""
        out = cls()
        for part in parts:
            out.merge(part)
        return out
