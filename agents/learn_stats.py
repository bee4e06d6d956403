"""Skill and tool stats in a Faust table, merged on read, and their bounded metric labels.

Faust writes a table change to the current record's partition, so a key is
``kind|name|source partition`` (kind ``skill`` or ``tool``), as agents/quality.py keys its
counts: every key lives in one changelog partition, and a read merges a name's entries
(:meth:`SkillStats.merged`). A plain table: a worker's answer covers the partitions it holds
(all of them with one worker); the feedback and stage records of the others are not in it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from faust.streams import current_event

from agents.runtime import Runtime
from streams.a2e.messages import StatsQuery, StatsResult
from streams.a2e.models import SkillPerformanceRecord
from streams.a2e.stats import SkillStats
from streams.models import StageEvent

__all__ = ["KINDS", "SkillLabels", "SkillTable"]

KINDS = ("skill", "tool")
OTHER = "other"


#: What a name seen in input must look like to become a label (an identifier: no "@", no
#: leading digit or "+", so an email or phone number sent as a skill name shows as other).
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}")


class SkillLabels:
    """Metric label of a name: the configured names, else the first ``limit`` identifiers
    seen; anything else is ``other``."""

    def __init__(self, names: Iterable[str], limit: int) -> None:
        self.fixed, self.limit = frozenset(names), limit
        self.seen: set[str] = set()

    def __call__(self, name: str) -> str:
        """Return ``name`` when it may be a label, else ``other``."""
        if self.fixed:
            return name if name in self.fixed else OTHER
        if name in self.seen or (len(self.seen) < self.limit and _IDENTIFIER.fullmatch(name)):
            self.seen.add(name)
            return name
        return OTHER


def _key(kind: str, name: str, partition: int) -> str:
    return f"{kind}|{name}|{partition}"


def _parse(key: str) -> tuple[str, str]:
    kind, rest = key.split("|", 1)
    return kind, rest.rsplit("|", 1)[0]


class SkillTable:
    """The ``skill_stats`` table: count calls and scores, report merged records."""

    def __init__(self, runtime: Runtime) -> None:
        settings = runtime.settings
        self.metrics = runtime.metrics
        self.table = runtime.app.Table(
            "skill_stats",
            key_type=str,
            partitions=settings.topics.partitions,
            options=settings.table_options(),
        )
        self.labels = SkillLabels(settings.a2e.skills, settings.a2e.max_skills)

    @classmethod
    def of(cls, runtime: Runtime) -> SkillTable:
        """Return the runtime's table, declaring it on first use (outcomes and learn share it)."""
        if runtime.skill_stats is None:
            runtime.skill_stats = cls(runtime)
        return runtime.skill_stats

    def count_stage(self, event: StageEvent) -> None:
        """Count an execute stage's outcome for the skill and tool its payload names."""
        if not event.is_outcome:
            return
        payload = event.payload
        duration = payload.duration_ms
        ms = float(duration) if isinstance(duration, int | float) and duration >= 0 else None
        for kind, name in (("skill", payload.skill_name), ("tool", payload.tool_name)):
            if name:
                self.count_call(kind, name, event.status == "completed", ms)

    def _update(self, kind: str, name: str, change: Any) -> None:
        event = current_event()
        if event is None:  # outside stream iteration: no partition to write the change to
            raise RuntimeError("skill stats change only while a record is processed")
        key = _key(kind, name, event.message.partition)
        raw = self.table.get(key)
        stats = SkillStats.from_dict(raw) if raw else SkillStats()
        change(stats)
        self.table[key] = stats.to_dict()

    def count_call(
        self, kind: str, name: str, success: bool | None, duration_ms: float | None = None
    ) -> None:
        """Count one call of ``name`` (its outcome, if known, and duration, if reported)."""
        self._update(kind, name, lambda s: s.add_call(success, duration_ms))
        outcome = "unknown" if success is None else "success" if success else "failed"
        self.metrics.child(self.metrics.skill_calls, kind, self.labels(name), outcome).inc()

    def count_feedback(self, kind: str, name: str, score: float) -> None:
        """Count one feedback on ``name``: its score, and a call of the score's sign."""

        def change(stats: SkillStats) -> None:
            stats.add_call(score > 0 if score else None)
            stats.add_score(score)

        self._update(kind, name, change)
        outcome = "unknown" if not score else "success" if score > 0 else "failed"
        self.metrics.child(self.metrics.skill_calls, kind, self.labels(name), outcome).inc()

    def result(self, query: StatsQuery) -> StatsResult:
        """Answer a stats query: every name (none given), else the named skill and/or tool."""
        both = query.skill_name is None and query.tool_name is None
        skills = self.records("skill", query.skill_name) if both or query.skill_name else []
        tools = self.records("tool", query.tool_name) if both or query.tool_name else []
        return StatsResult(skills=skills, tools=tools)

    def records(self, kind: str, name: str | None = None) -> list[SkillPerformanceRecord]:
        """Return the merged record of every ``kind`` name (or of ``name`` only), by name."""
        parts: dict[str, list[SkillStats]] = {}
        for key, raw in list(self.table.items()):
            found_kind, found_name = _parse(key)
            if found_kind == kind and name in (None, found_name) and raw:
                parts.setdefault(found_name, []).append(SkillStats.from_dict(raw))
        return [SkillStats.merged(parts[n]).record(n) for n in sorted(parts)]
