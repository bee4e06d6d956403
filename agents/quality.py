"""Windowed quality tables on event time, their gauges, consumer lag, and ``GET /quality``.

Faust changes a table only inside stream iteration and writes the change to the current
record's partition, so a count is keyed ``family|quality|source partition``: every key lives
in exactly one changelog partition, and sums over workers never count a sample twice. The
counting happens when ``Runtime`` sends a sample (an ``on_sample`` listener), in the agent loop.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import faust
from faust.streams import current_event
from faust.types import EventT
from faust.types.tables import TableT, WindowWrapperT
from faust.web import Request, Response, View

from agents.faust_compat import committed_offsets
from agents.runtime import Runtime, now
from streams.lag import partition_lags
from streams.metrics import Metrics
from streams.quality import (
    Counts,
    WindowSpec,
    event_timestamp,
    expired_keys,
    table_key,
    window_counts,
    window_report,
    window_specs,
)
from streams.samples import LearningSample
from streams.topics import INPUTS

__all__ = ["QualityWindows", "register"]

log = logging.getLogger("learnstream")
# The event time of the sample being counted: Faust asks the window for it (relative_to).
_EVENT_TIME: ContextVar[float] = ContextVar("learnstream_event_time")


def _event_time(_event: EventT[Any] | None = None) -> float:
    return _EVENT_TIME.get()


@dataclass
class QualityWindows:
    """One windowed counting table per window size, and what reads them."""

    app: faust.App
    metrics: Metrics
    specs: tuple[WindowSpec, ...]
    tables: dict[str, TableT[Any, Any]]  # label -> table (keys: (key, (start, end)))
    windowed: dict[str, WindowWrapperT]  # label -> the same table seen through its window
    inputs: frozenset[str]  # the co-partitioned input topics samples come from
    lagged: frozenset[str]  # the topics whose consumer lag we export

    @classmethod
    def declare(cls, runtime: Runtime) -> QualityWindows:
        """Declare the tables on the runtime's app (one changelog per window size)."""
        settings, specs = runtime.settings, window_specs(runtime.settings.windows)
        tables, windowed = {}, {}
        for spec in specs:
            table = runtime.app.Table(
                f"quality_{spec.label}",
                default=int,
                partitions=settings.topics.partitions,
                schema=faust.Schema(key_serializer="json", value_serializer="json"),
                options=settings.table_options(),
            )
            tables[spec.label] = table
            # Tumbling is hopping with step == size (Faust's TumblingWindow is just that).
            wrapper = table.hopping(spec.size, spec.step, expires=spec.expires)
            windowed[spec.label] = wrapper.clone(relative_to=_event_time)  # = .relative_to()
        runtime.metrics.track_windows(tuple(tables))
        inputs = frozenset(settings.topics.name(field) for field in INPUTS)
        lagged = inputs | {settings.topics.name("consent")}
        return cls(runtime.app, runtime.metrics, specs, tables, windowed, inputs, lagged)

    def record(self, sample: LearningSample) -> None:
        """Count ``sample`` in each window of its event time, or as late when it has expired."""
        event = current_event()
        if event is None:  # not inside an agent: Faust could not pick a changelog partition
            log.warning("sample %s sent outside stream iteration: not windowed", sample.sample_id)
            return
        moment = now()
        ts = event_timestamp(sample.meta.event_time, moment)
        key = table_key(
            sample.sample_family, sample.feedback.quality_label, event.message.partition
        )
        token = _EVENT_TIME.set(ts)
        try:
            for spec in self.specs:
                if spec.is_late(ts, moment.timestamp()):
                    self.metrics.late_events.labels(spec.label).inc()
                else:
                    self.windowed[spec.label][key] += 1
        finally:
            _EVENT_TIME.reset(token)

    def active_partitions(self) -> set[int]:
        """Return the input partitions this worker owns (standby copies excluded)."""
        actives = self.app.assignor.assigned_actives()
        return {tp.partition for tp in actives if tp.topic in self.inputs}

    def counts(self, partitions: set[int], moment: float) -> dict[str, Counts]:
        """Return {window label: counts of the current window over ``partitions``}."""
        return {
            spec.label: window_counts(
                self.tables[spec.label].data.items(), spec.start_of(moment), partitions
            )
            for spec in self.specs
        }

    def refresh(self, partitions: set[int] | None = None) -> None:
        """Update the window gauges and consumer lag; forget expired windows.

        ``partitions`` stands in for the assignment: ``set()`` while partitions are revoked.
        """
        moment = now().timestamp()
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
        moment, partitions = now().timestamp(), self.active_partitions()
        counts = self.counts(partitions, moment)
        windows = {s.label: window_report(s, counts[s.label], moment) for s in self.specs}
        return {"app_id": self.app.conf.id, "partitions": sorted(partitions), "windows": windows}


def register(runtime: Runtime) -> None:
    """Declare the windowed tables, count every sample sent, serve ``/quality``."""
    quality = QualityWindows.declare(runtime)
    runtime.on_sample.append(quality.record)
    app, interval = runtime.app, runtime.settings.windows.refresh_interval

    @app.timer(interval, name="learnstream.quality_refresh")  # type: ignore[untyped-decorator]
    async def refresh() -> None:
        quality.refresh()

    def on_revoked(*_args: Any, **_kwargs: Any) -> None:
        quality.refresh(partitions=set())  # nothing is ours until the new assignment

    def on_assigned(*_args: Any, **_kwargs: Any) -> None:
        runtime.metrics.rebalances.inc()
        quality.refresh()

    app.on_partitions_revoked.connect(on_revoked)
    app.on_partitions_assigned.connect(on_assigned)

    @app.page("/quality")
    async def quality_page(web: View, request: Request) -> Response:
        return web.json(quality.report())
