"""Faust's sensor, kept off the per-event path: the few ``faust_*`` series operators read.

Faust calls its monitor on every record in and out, every table read and write and every
send. ``faust.sensors.prometheus.PrometheusMonitor`` answers each call with labelled counter
increments (``.labels()`` resolved every time, a lock each), and the base ``Monitor`` keeps
per-event statistics only its web pages (off) read: a cost on every input event for series
nobody reads (benchmarks/RESULTS.md, findings behind the design). ``LeanMonitor`` does
nothing per record or table operation, counts sends in plain integers read at scrape time,
and times commits (one per commit, not per record).

Exposed, under the names and types ``PrometheusMonitor`` gives them (the dashboard and
alerts in ``ops/`` read them): ``faust_total_sent_messages_total`` and
``faust_total_error_messages_sent_total`` (counters), ``faust_total_rebalances`` and
``faust_total_rebalances_recovering`` (gauges), ``faust_consumer_commit_latency`` (histogram,
ms). The other series of Faust's sensor are not exposed; ``learnstream_*`` covers records in
(``learnstream_events_total``), processing time and lag.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import faust
from faust.sensors import Monitor
from faust.sensors.prometheus import MS_LATENCY_BUCKETS
from faust.types import TP, AppT, EventT, StreamT
from faust.types.transports import ProducerT
from faust.types.tuples import PendingMessage, RecordMetadata
from faust.web import Request, Response, View
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

__all__ = ["FAUST_SERIES", "LeanMonitor", "install"]

#: The ``faust_*`` series a worker exposes (what ops/ may query), by exposed name.
FAUST_SERIES = {
    "faust_total_sent_messages_total": "counter",
    "faust_total_error_messages_sent_total": "counter",
    "faust_total_rebalances": "gauge",
    "faust_total_rebalances_recovering": "gauge",
    "faust_consumer_commit_latency_bucket": "counter",
    "faust_consumer_commit_latency_sum": "counter",
    "faust_consumer_commit_latency_count": "counter",
}


class _SendCounts(Collector):
    """Export the monitor's plain send counters as Prometheus counters, read at scrape."""

    def __init__(self, monitor: LeanMonitor) -> None:
        self.monitor = monitor

    def collect(self) -> Iterator[CounterMetricFamily]:
        """Yield the two send counters with their current values."""
        yield CounterMetricFamily(
            "faust_total_sent_messages", "Total messages sent", value=self.monitor.sent
        )
        yield CounterMetricFamily(
            "faust_total_error_messages_sent",
            "Total error messages sent",
            value=self.monitor.send_errors,
        )


class LeanMonitor(Monitor):
    """Answer Faust's per-event sensor calls with (almost) nothing; see the module doc."""

    def __init__(self, registry: CollectorRegistry, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sent = 0
        self.send_errors = 0
        self._rebalancing = Gauge("faust_total_rebalances", "Total rebalances", registry=registry)
        self._recovering = Gauge(
            "faust_total_rebalances_recovering", "Total rebalances recovering", registry=registry
        )
        self._commit_ms = Histogram(
            "faust_consumer_commit_latency",
            "Consumer commit latency in ms",
            buckets=MS_LATENCY_BUCKETS,
            registry=registry,
        )
        registry.register(_SendCounts(self))

    def on_message_in(self, tp: TP, offset: int, message: Any) -> None:
        """Do nothing per record (Faust's Monitor stamps and counts it)."""

    def on_stream_event_in(
        self, tp: TP, offset: int, stream: StreamT[Any], event: EventT[Any]
    ) -> dict[str, Any] | None:
        """Note when ``tp`` last gave a stream an event: Faust's stall warnings read it."""
        self.stream_inbound_time[tp] = time.monotonic()
        return None

    def on_stream_event_out(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing per event."""

    def on_message_out(self, tp: TP, offset: int, message: Any) -> None:
        """Do nothing per record."""

    def on_table_get(self, table: Any, key: Any) -> None:
        """Do nothing per table read."""

    def on_table_set(self, table: Any, key: Any, value: Any) -> None:
        """Do nothing per table write."""

    def on_table_del(self, table: Any, key: Any) -> None:
        """Do nothing per table delete."""

    def on_send_initiated(
        self, producer: ProducerT, topic: str, message: PendingMessage, keysize: int, valsize: int
    ) -> Any:
        """Do nothing when a record enters the producer buffer."""
        return None

    def on_send_completed(self, producer: ProducerT, state: Any, metadata: RecordMetadata) -> None:
        """Count a record the broker acknowledged."""
        self.sent += 1

    def on_send_error(self, producer: ProducerT, exc: BaseException, state: Any) -> None:
        """Count a record the producer could not publish."""
        self.send_errors += 1

    def on_commit_completed(self, consumer: Any, state: Any) -> None:
        """Time one offset commit (``state`` is the start time on_commit_initiated gave)."""
        super().on_commit_completed(consumer, state)
        self._commit_ms.observe(self.ms_since(float(state)))

    def on_rebalance_start(self, app: AppT) -> dict[str, Any]:
        """Show a rebalance in progress."""
        self._rebalancing.inc()
        return super().on_rebalance_start(app)

    def on_rebalance_return(self, app: AppT, state: dict[str, Any]) -> None:
        """Show the rebalance as recovering (assignment done, tables catching up)."""
        super().on_rebalance_return(app, state)
        self._rebalancing.dec()
        self._recovering.inc()

    def on_rebalance_end(self, app: AppT, state: dict[str, Any]) -> None:
        """Show the rebalance as finished."""
        super().on_rebalance_end(app, state)
        self._recovering.dec()


def install(app: faust.App, registry: CollectorRegistry) -> LeanMonitor:
    """Make a LeanMonitor ``app``'s monitor and serve ``registry`` at ``GET /metrics``."""
    monitor = LeanMonitor(registry)
    app.monitor = monitor

    @app.page("/metrics")
    async def metrics(view: View, _request: Request) -> Response:
        # a header, not content_type=: aiohttp refuses a charset in content_type
        headers = {"Content-Type": CONTENT_TYPE_LATEST}
        return view.bytes(generate_latest(registry), headers=headers)

    return monitor
