"""``learnstream quality --since --until``: the ``GET /quality`` JSON computed from the topic.

It counts what the live windows count (agents/quality_tables.py): samples by ``meta.event_time``
(the record timestamp when a sample has none), deduplicated by id, and not the *late* ones,
those written after the window had expired (``until + LEARNSTREAM_WINDOWS__EXPIRES``; for
a tumbling window this is exactly Faust's expiry rule). A sample's event time precedes the
time it is written, and the runtime's clock may run ahead: reading starts at ``since`` minus
the expiry, to the topic's end.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from learnstream.streams.io.connection import Broker
from learnstream.streams.io.consumer import ReadStats, decode_sample, decoded, resolve, sample_key
from learnstream.streams.io.reader import read_range
from learnstream.streams.quality.windows import (
    Counts,
    QualityMetrics,
    event_timestamp,
    window_label,
)
from learnstream.streams.samples.sample import FAMILIES, QUALITIES, LearningSample

__all__ = ["WindowCount", "quality_report", "window_json"]


def _zero() -> Counts:
    return {family: dict.fromkeys(QUALITIES, 0) for family in FAMILIES}


@dataclass
class WindowCount:
    """Count samples by family and quality as the live window ``[since, until)`` does."""

    since: float
    until: float
    expires: float
    counts: Counts = field(default_factory=_zero)

    def add(self, written: float, sample: LearningSample) -> None:
        """Count ``sample`` (written at ``written``) if its event time is in and it is not late."""
        moment = datetime.fromtimestamp(written, UTC)
        ts = event_timestamp(sample.meta.event_time, moment)
        if self.since <= ts < self.until and written < self.until + self.expires:
            self.counts[sample.sample_family][sample.feedback.quality_label] += 1


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def window_json(since: datetime, until: datetime, counts: Counts) -> dict[str, Any]:
    """Return one window as ``GET /quality`` shows it: bounds, then per family metrics + counts."""
    families = {
        family: {**asdict(QualityMetrics.of(by_quality)), "counts": by_quality}
        for family, by_quality in counts.items()
    }
    return {"start": _iso(since), "end": _iso(until), "families": families}


async def quality_report(
    since: datetime,
    until: datetime,
    expires: timedelta,
    *,
    bootstrap: Broker | None = None,
    topic: str | None = None,
    stats: ReadStats | None = None,
) -> dict[str, Any]:
    """Return the ``/quality`` JSON of the window ``[since, until)`` read from the samples topic."""
    stats = stats if stats is not None else ReadStats()
    bootstrap, topic = resolve(bootstrap, topic, "samples")
    source = read_range(bootstrap, topic, since - expires, None, progress=stats.progress)
    window = WindowCount(since.timestamp(), until.timestamp(), expires.total_seconds())
    async for record, sample in decoded(source, decode_sample, sample_key, _any, stats):
        window.add(record.timestamp / 1000, sample)
    report = window_json(since, until, window.counts)
    return {"topic": topic, "partitions": "all", "windows": {window_label(until - since): report}}


def _any(_sample: LearningSample) -> bool:
    return True
