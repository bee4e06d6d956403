"""Skill and tool stats in a Faust table, read on every worker, and their bounded labels.

Faust writes a table change to the current record's partition, so a key is
``kind|name|source partition`` (kind ``skill`` or ``tool``), as agents/quality_tables.py keys its
counts: every key lives in one changelog partition. Reads go through the
:class:`~learnstream.streams.a2e.stats_view.StatsView` that agents/learning/view.py fills from the
table's changelog on every worker, so any worker answers for every partition. Each update passes
its event time (rolling stats) and its source record, so a record processed again after a
crash is not counted twice (streams/a2e/stats.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from faust.streams import current_event
from faust.types import TableT

from learnstream.agents.learning.view import StatsReader
from learnstream.streams.a2e.messages import StatsQuery, StatsResult
from learnstream.streams.a2e.models import SkillPerformanceRecord
from learnstream.streams.a2e.stats import SkillStats, SourceRecord
from learnstream.streams.a2e.stats_view import StatsView, aligned, parse_key, stats_key
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.connection import Broker
from learnstream.streams.mplp.models import StageEvent
from learnstream.streams.observe.metrics import Metrics

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


_key, _parse = stats_key, parse_key


class SkillTable:
    """The ``skill_stats`` table: count calls and scores, report merged records."""

    def __init__(
        self, table: TableT[str, Any], settings: Settings, metrics: Metrics, broker: Broker
    ) -> None:
        self.table, self.metrics = table, metrics
        self.labels = SkillLabels(settings.a2e.skills, settings.a2e.max_skills)
        self.half_life_s = settings.a2e.half_life_s
        #: Every partition's entries, filled by the reader of the table's changelog.
        self.view = StatsView(self.half_life_s)
        changelog = self.table.changelog_topic.get_topic_name()
        self.reader = StatsReader(broker, changelog, self.view, self._partial)

    def _partial(self, reason: str) -> None:
        self.metrics.child(self.metrics.learn_view_partial, reason).inc()

    async def caught_up(self) -> bool:
        """Wait (boundedly) until the view holds every partition's changes made so far."""
        return await self.reader.caught_up()

    def count_stage(self, event: StageEvent) -> None:
        """Count an execute stage's outcome for the skill and tool its payload names."""
        if not event.is_outcome:
            return
        payload, at = event.payload, event.timestamp.timestamp()
        duration = payload.duration_ms
        ms = float(duration) if isinstance(duration, int | float) and duration >= 0 else None
        for kind, name in (("skill", payload.skill_name), ("tool", payload.tool_name)):
            if name:
                self.count_call(kind, name, event.status == "completed", ms, at=at)

    def _update(
        self, kind: str, name: str, change: Callable[[SkillStats, SourceRecord], bool], item: int
    ) -> bool:
        """Apply ``change`` to the entry of ``name`` from the current record's partition;
        return False when that record was counted before."""
        event = current_event()
        if event is None:  # outside stream iteration: no partition to write the change to
            raise RuntimeError("skill stats change only while a record is processed")
        msg = event.message
        key = stats_key(kind, name, msg.partition)
        raw = self.table.get(key)
        stats = SkillStats.from_dict(raw) if raw else SkillStats(self.half_life_s)
        stats = aligned(stats, self.half_life_s)  # written before the setting changed
        if not change(stats, SourceRecord(msg.topic, msg.partition, msg.offset, item)):
            return False
        self.table[key] = stats.to_dict()
        return True

    def count_call(
        self,
        kind: str,
        name: str,
        success: bool | None,
        duration_ms: float | None = None,
        *,
        at: float | None = None,
        item: int = 0,
    ) -> None:
        """Count one call of ``name`` at event time ``at`` (its outcome, if known, and
        duration, if reported); ``item`` numbers the updates one record makes."""

        def change(stats: SkillStats, source: SourceRecord) -> bool:
            return stats.add_call(success, duration_ms, at=at, source=source)

        if self._update(kind, name, change, item):
            outcome = "unknown" if success is None else "success" if success else "failed"
            self.metrics.child(self.metrics.skill_calls, kind, self.labels(name), outcome).inc()

    def count_feedback(
        self, kind: str, name: str, score: float, *, at: float | None = None, item: int = 0
    ) -> None:
        """Count one feedback on ``name``: its score, and a call of the score's sign."""

        def change(stats: SkillStats, source: SourceRecord) -> bool:
            fresh = stats.add_call(score > 0 if score else None, at=at, source=source)
            return stats.add_score(score, at=at, source=source) or fresh

        if self._update(kind, name, change, item):
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
        return [stats.record(n) for n, stats in self.stats(kind, name).items()]

    def stats(self, kind: str, name: str | None = None) -> dict[str, SkillStats]:
        """Return every partition's merged stats of each ``kind`` name (or ``name``)."""
        return self.view.stats(kind, name, list(self.table.items()))
