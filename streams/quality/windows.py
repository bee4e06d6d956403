"""Windowed quality metrics, pure: window math, table keys, QualityMetrics.

What they measure and where they show: docs/architecture.md §7.

The window arithmetic mirrors Faust's ``HoppingWindow`` (``TumblingWindow`` is the hopping
window whose step is its size), so an event we call *late* is exactly one whose windows
Faust would expire at its next cleanup. Times are POSIX seconds, on event time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.table import Table

from learnstream.streams.config.settings import WindowSettings
from learnstream.streams.samples.sample import FAMILIES, QUALITIES

__all__ = [
    "Counts",
    "QualityMetrics",
    "WindowSpec",
    "event_timestamp",
    "expired_keys",
    "parse_key",
    "report_table",
    "table_key",
    "window_counts",
    "window_label",
    "window_report",
    "window_specs",
]

#: family -> quality -> number of samples.
Counts = dict[str, dict[str, int]]
_RATES = ("approval_rate", "correction_rate", "rejection_rate")


def window_label(size: timedelta) -> str:
    """Return the label of a window size, as Prometheus shows it: ``5m``, ``1h``, ``90s``."""
    seconds = int(size.total_seconds())
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % span == 0:
            return f"{seconds // span}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class WindowSpec:
    """One window size with its step (= size when tumbling) and expiry, in seconds."""

    label: str
    size: float
    step: float
    expires: float

    def ranges(self, ts: float) -> list[tuple[float, float]]:
        """Return the windows holding ``ts`` as Faust keys them: ``(start, start + size - 0.1)``."""
        first = self.start_of(ts)
        stop, hop = int(ts) + 1, int(self.step)
        return [(float(s), s + self.size - 0.1) for s in range(int(first), stop, hop)]

    def bucket(self, ts: float) -> float:
        """Return the start of the step holding ``ts``: times of one step share their windows."""
        return math.floor(ts / self.step) * self.step

    def start_of(self, ts: float) -> float:
        """Return the start of the oldest window holding ``ts`` (the one covering the last size)."""
        return math.floor(ts / self.step) * self.step - self.size + self.step

    def horizon(self, now: float) -> float:
        """Return the time before which a window has expired (Faust's ``stale`` rule)."""
        return math.floor((now - self.expires) / self.step) * self.step

    def is_late(self, ts: float, now: float) -> bool:
        """Return True when even the newest window of ``ts`` has already expired at ``now``."""
        newest_end = math.floor(ts / self.step) * self.step + self.size - 0.1
        return newest_end <= self.horizon(now)


def window_specs(settings: WindowSettings) -> tuple[WindowSpec, ...]:
    """Return the configured windows; raise ValueError on sizes Faust cannot window."""
    specs = []
    for size in settings.sizes:
        seconds = size.total_seconds()
        step = settings.step.total_seconds() if settings.hopping else seconds
        if step < 1 or seconds % step or seconds > settings.expires.total_seconds():
            raise ValueError(
                f"window {size}: needs step >= 1s dividing the size, and size <= expires"
            )
        specs.append(
            WindowSpec(window_label(size), seconds, step, settings.expires.total_seconds())
        )
    return tuple(specs)


def table_key(family: str, quality: str, partition: int) -> str:
    """Return the windowed-table key; the source partition keeps workers' sums disjoint."""
    return f"{family}|{quality}|{partition}"


def parse_key(key: str) -> tuple[str, str, int]:
    """Return (family, quality, partition) of a key made by :func:`table_key`."""
    family, quality, partition = key.split("|")
    return family, quality, int(partition)


def event_timestamp(event_time: str | None, fallback: datetime) -> float:
    """Return the sample's event time in seconds (``fallback`` when the sample has none)."""
    moment = datetime.fromisoformat(event_time) if event_time else fallback
    return moment.timestamp()


def window_counts(items: Iterable[tuple[Any, Any]], start: float, partitions: set[int]) -> Counts:
    """Sum the table entries of the window starting at ``start`` over ``partitions``."""
    counts: Counts = {family: dict.fromkeys(QUALITIES, 0) for family in FAMILIES}
    for (key, (window_start, _end)), value in items:
        family, quality, partition = parse_key(key)
        if window_start == start and partition in partitions and family in counts:
            counts[family][quality] += int(value)
    return counts


def expired_keys(keys: Iterable[Any], spec: WindowSpec, now: float) -> list[Any]:
    """Return the windowed keys whose window has expired (e.g. recovered from a changelog)."""
    horizon = spec.horizon(now)
    return [key for key in keys if key[1][1] <= horizon]


@dataclass(frozen=True)
class QualityMetrics:
    """The seed's QualityMetrics: how many samples, and the share of each quality label."""

    total_samples: int
    approval_rate: float
    correction_rate: float
    rejection_rate: float

    @classmethod
    def of(cls, counts: Mapping[str, int]) -> QualityMetrics:
        """Return good / acceptable / poor over the total (0.0 when there is none)."""
        total = sum(counts.get(quality, 0) for quality in QUALITIES)

        def rate(quality: str) -> float:
            return counts.get(quality, 0) / total if total else 0.0

        return cls(total, rate("good"), rate("acceptable"), rate("poor"))


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def window_report(spec: WindowSpec, counts: Counts, now: float) -> dict[str, Any]:
    """Return the JSON of one window at ``now``: its bounds, then per family metrics + counts."""
    start = spec.start_of(now)
    families = {
        family: {**asdict(QualityMetrics.of(by_quality)), "counts": by_quality}
        for family, by_quality in counts.items()
    }
    return {"start": _iso(start), "end": _iso(start + spec.size), "families": families}


def report_table(report: Mapping[str, Any]) -> Table:
    """Return a terminal table of a ``GET /quality`` report: one row per window and family."""
    table = Table(title=f"learnstream quality, partitions {report.get('partitions', [])}")
    for column in ("window", "family", "total", "approve", "correct", "reject"):
        left = column in ("window", "family")
        table.add_column(column, justify="left" if left else "right", no_wrap=True)
    for label, window in report["windows"].items():
        since = f"{label} from {window['start'][11:16]}Z"
        for family, m in window["families"].items():
            rates = (f"{m[name]:.1%}" for name in _RATES)
            table.add_row(since, family, str(m["total_samples"]), *rates)
    return table
