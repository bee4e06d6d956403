"""Windowed quality tables on event time, their gauges, consumer lag, and ``GET /quality``.

Faust changes a table only inside stream iteration and writes the change to the current
record's partition, so a count is keyed ``family|quality|source partition``: every key lives
in exactly one changelog partition, and sums over workers never count a sample twice.

A sample sent (an ``on_sample`` listener) is counted in memory (streams/quality/window_counts.py).
A partition's counts are written, each window key once, by a *flush*: after a record of that
partition (any input, or the sweeper's tick, so an idle one too) once ``windows.flush_interval``
has passed since its last flush. Offsets are committed only as far as the last flush of their
partition (``Progress.release``): a crash replays the records whose counts were in memory.

What a commit flushes depends on the guarantee. Under exactly_once a transaction must carry
the counts of every record it commits, so every partition is flushed when a commit starts.
Under at_least_once a commit flushes only the partitions that are due, and all of them when
it is the last before the partitions go (a rebalance, or the worker stopping: their next
owner would count the records again); a commit every few seconds would otherwise write
every window key that often, whatever the interval.

The gauges and ``GET /quality`` add the counts still in memory to the tables, so they are
current whatever the interval; the tables themselves are behind by up to one interval.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import Any

import faust
from faust.streams import current_event
from faust.types import EventT
from faust.types.tables import TableT
from faust.web import Request, Response, View

from learnstream.agents.clock import Clock
from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.faust_compat import (
    committed_offsets,
    handing_over,
    processing,
    sends_stopped,
)
from learnstream.streams.io.topics import INPUTS
from learnstream.streams.observe.lag import partition_lags
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.offsets.progress import Progress
from learnstream.streams.quality.window_counts import PendingCounts
from learnstream.streams.quality.windows import (
    Counts,
    WindowSpec,
    event_timestamp,
    expired_keys,
    table_key,
    window_counts,
    window_report,
)
from learnstream.streams.samples.sample import LearningSample

__all__ = ["QualityWindows", "register"]

log = logging.getLogger("learnstream")


@dataclass
class QualityWindows:
    """One windowed counting table per window size, and what reads them."""

    app: faust.App
    metrics: Metrics
    specs: tuple[WindowSpec, ...]
    tables: dict[str, TableT[Any, Any]]  # label -> table (keys: (key, (start, end)))
    inputs: frozenset[str]  # the co-partitioned input topics samples come from
    lagged: frozenset[str]  # the topics whose consumer lag we export
    progress: Progress
    flush_interval: float
    #: The pipeline's clock: windows are event time, lateness is judged against it.
    wall: Clock
    #: Seconds for flush intervals (monotonic).
    clock: Callable[[], float] = time.monotonic
    pending: PendingCounts = field(init=False)
    _flushed: dict[int, float] = field(default_factory=dict)  # partition -> last flush
    #: partition -> the last record that counted a sample: the context of a flush at commit
    _events: dict[int, EventT[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.pending = PendingCounts(self.specs)

    @classmethod
    def of(cls, runtime: Runtime) -> QualityWindows:
        """Return the counting over the runtime's window tables (one per window size)."""
        settings, tables = runtime.settings, runtime.tables
        runtime.metrics.track_windows(tuple(tables.quality))
        inputs = frozenset(settings.topics.name(name) for name in INPUTS)
        lagged = inputs | {settings.topics.name("consent")}
        return cls(
            runtime.app,
            runtime.metrics,
            tables.windows,
            tables.quality,
            inputs,
            lagged,
            runtime.progress,
            settings.windows.flush_interval,
            runtime.clock,
        )

    def record(self, sample: LearningSample) -> None:
        """Count ``sample`` in each window of its event time, or as late when it has expired."""
        event = current_event()
        if event is None:  # not inside an agent: no source partition to key the count by
            log.warning("sample %s sent outside stream iteration: not windowed", sample.sample_id)
            return
        moment = self.wall()
        ts, partition = event_timestamp(sample.meta.event_time, moment), event.message.partition
        key = table_key(sample.sample_family, sample.feedback.quality_label, partition)
        for spec in self.specs:
            if spec.is_late(ts, moment.timestamp()):
                self.metrics.late_events.labels(spec.label).inc()
            else:
                self.pending.add(partition, spec.label, key, ts)
        self._events[partition] = event

    def after_record(self, event: EventT[Any]) -> None:
        """Flush the record's partition if ``flush_interval`` passed since its last flush."""
        partition, moment = event.message.partition, self.clock()
        if self._due(partition, moment):
            self.flush(partition, moment)

    def _due(self, partition: int, moment: float) -> bool:
        """Tell whether ``flush_interval`` passed since ``partition`` was last flushed (its
        first record starts the count)."""
        return moment - self._flushed.setdefault(partition, moment) >= self.flush_interval

    def flush(self, partition: int, moment: float) -> None:
        """Write ``partition``'s pending counts, each window key once; release its offsets.

        Inside stream iteration of a record of ``partition`` (Faust writes the changelog to
        the current record's partition), or in ``processing`` of one.
        """
        for label, counts in self.pending.take(partition).items():
            table = self.tables[label]
            for window_key, n in counts.items():
                table[window_key] += n
        self._flushed[partition] = moment
        self.progress.release(partition)

    def flush_due(self) -> None:
        """What a commit flushes under at_least_once: the partitions whose interval passed
        (every one during a rebalance or a stop); the offsets of those with nothing in
        memory are released as they are."""
        if handing_over(self.app):  # the last commit before the partitions go: all of them
            self.flush_all()
            return
        if sends_stopped(self.app):  # nothing more would be sent
            return
        moment, waiting = self.clock(), set(self.pending.partitions())
        for partition in waiting | {tp.partition for tp in self.progress.partitions()}:
            if partition not in waiting:
                self.progress.release(partition)
            elif self._due(partition, moment):
                with processing(self._events[partition]):
                    self.flush(partition, moment)

    def flush_all(self) -> None:
        """Flush every partition (a commit starts); skipped when the producer is stopping.

        A stopping producer buffer would not send the changelog records any more: the counts
        stay unwritten, and the offsets uncommitted, so the next owner counts those records.
        """
        if sends_stopped(self.app):
            return
        moment = self.clock()
        for partition in self.pending.partitions():
            with processing(self._events[partition]):
                self.flush(partition, moment)
        self.progress.release_all()

    def forget(self, partitions: set[int]) -> None:
        """Drop what is pending for revoked ``partitions``: their records are replayed."""
        self.pending.drop(partitions)
        for partition in partitions:
            self._flushed.pop(partition, None)
            self._events.pop(partition, None)

    def active_partitions(self) -> set[int]:
        """Return the input partitions this worker owns (standby copies excluded)."""
        actives = self.app.assignor.assigned_actives()
        return {tp.partition for tp in actives if tp.topic in self.inputs}

    def counts(
        self, partitions: set[int], moment: float, *, unwritten: bool = True
    ) -> dict[str, Counts]:
        """Return {window label: counts of the current window over ``partitions``}: what the
        tables hold, plus what is counted in memory unless ``unwritten`` is false."""
        counts = {}
        for spec in self.specs:
            items: Iterable[tuple[Any, Any]] = self.tables[spec.label].data.items()
            if unwritten:
                items = chain(items, self.pending.peek(spec.label, partitions).items())
            counts[spec.label] = window_counts(items, spec.start_of(moment), partitions)
        return counts

    def refresh(self, partitions: set[int] | None = None) -> None:
        """Update the window gauges and consumer lag; forget expired windows.

        ``partitions`` stands in for the assignment: ``set()`` while partitions are revoked.
        """
        moment = self.wall().timestamp()
        owned = self.active_partitions() if partitions is None else partitions
        for label, counts in self.counts(owned, moment).items():
            self.metrics.show_window(label, counts)
        for spec in self.specs:
            store = self.tables[spec.label].data
            for key in expired_keys(list(store.keys()), spec, moment):
                store.pop(key, None)  # restored from the changelog: Faust never expires it
        self.metrics.show_lags(self._lags() if partitions is None else {})

    def _lags(self) -> dict[tuple[str, int], int]:
        consumer = self.app.consumer
        committed = committed_offsets(consumer)  # what Faust last committed
        actives = self.app.assignor.assigned_actives()
        return partition_lags(actives, self.lagged, consumer.highwater, committed.get)

    def report(self) -> dict[str, Any]:
        """Return the ``GET /quality`` JSON: per window, the current window's metrics."""
        moment, partitions = self.wall().timestamp(), self.active_partitions()
        counts = self.counts(partitions, moment)
        windows = {s.label: window_report(s, counts[s.label], moment) for s in self.specs}
        return {"app_id": self.app.conf.id, "partitions": sorted(partitions), "windows": windows}


def register(runtime: Runtime) -> None:
    """Declare the windowed tables, count every sample sent, serve ``/quality``."""
    quality = QualityWindows.of(runtime)
    runtime.on_sample.append(quality.record)
    for label, table in quality.tables.items():
        held = runtime.metrics.held_writes.labels(table.name)
        held.set_function(partial(quality.pending.writes, label))
    if quality.specs:  # commits wait for flushes only when there is something to flush
        runtime.after_record.append(quality.after_record)
        exact = runtime.progress.gated  # exactly_once: a transaction carries every count
        runtime.progress.hold(quality.flush_all if exact else quality.flush_due)
    app, interval = runtime.app, runtime.settings.windows.refresh_interval

    @app.timer(interval, name="learnstream.quality_refresh")  # type: ignore[untyped-decorator]
    async def refresh() -> None:
        quality.refresh()

    def on_revoked(*args: Any, **_kwargs: Any) -> None:
        # (app, revoked partitions); Faust's commit before this signal flushed them already
        quality.forget({tp.partition for tp in args[1] if tp.topic in quality.inputs})
        quality.refresh(partitions=set())  # nothing is ours until the new assignment

    def on_assigned(*_args: Any, **_kwargs: Any) -> None:
        runtime.metrics.rebalances.inc()
        quality.refresh()

    app.on_partitions_revoked.connect(on_revoked)
    app.on_partitions_assigned.connect(on_assigned)

    @app.page("/quality")
    async def quality_page(web: View, request: Request) -> Response:
        return web.json(quality.report())
