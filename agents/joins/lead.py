"""Timer: pause the inputs that wait for the plans and the corrections to catch up.

The rule is streams/join/lead.py's; this side reads, every ``CHECK_EVERY_S``, how many records
of each lead partition (plans, corrections) are unread (the high watermark last fetched less
the next offset to process) and pauses or resumes the other inputs' partitions with Faust's
consumer. A paused partition keeps what it has fetched; Faust's own pauses come first: nothing
is touched while a rebalance or a table recovery runs, and every wait is forgotten then, as
Faust resumes the whole assignment once its tables are restored. The stall watch
(agents/seams/stall_watch.py) leaves the paused partitions alone.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import faust
from faust.types import TP

from learnstream.agents.runtime import Runtime
from learnstream.streams.join.lead import LeadOrder, Partition
from learnstream.streams.offsets.progress import Progress

__all__ = ["CHECK_EVERY_S", "Leads", "register"]

log = logging.getLogger("learnstream")

#: How often the leads' backlog is read.
CHECK_EVERY_S = 0.25


class Leads:
    """The lead order applied to one worker's consumer."""

    def __init__(self, app: faust.App, order: LeadOrder, progress: Progress, gauge: Any) -> None:
        self.app, self.order, self.progress, self.gauge = app, order, progress, gauge

    def unread(self, tp: TP) -> int | None:
        """Return how many records of ``tp`` are unread (None: not known yet)."""
        end, expected = self.app.consumer.highwater(tp), self.progress.expected(tp)
        return None if end is None or expected is None else end - expected

    def tick(self, now: float) -> None:
        """Pause the partitions that wait for a lead, resume those that wait no more."""
        app, order = self.app, self.order
        consumer = app.consumer
        if app.rebalancing or app.in_recovery or not consumer.assignment():
            order.forget()  # Faust pauses and resumes the assignment itself meanwhile
            self.gauge.set(0)
            return
        assigned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        leads = {tp: self.unread(TP(*tp)) for tp in assigned if order.leads(tp[0])}
        pause, resume = order.step(now, assigned, leads)
        if resume:
            consumer.resume_partitions(_tps(resume))
        # Every tick, not only when new: Faust puts a partition back among those it fetches
        # when its agent's buffer drains (``Consumer.on_buffer_drop``), paused or not.
        if waiting := order.paused():
            consumer.pause_partitions(_tps(waiting))
        if pause or resume:
            log.debug("lead order: paused %s, resumed %s", sorted(pause), sorted(resume))
        self.gauge.set(len(waiting))


def register(runtime: Runtime) -> None:
    """Register the lead order's timer (none when ``join.lead_backlog`` is 0)."""
    if not runtime.lead.on:
        return
    leads = Leads(runtime.app, runtime.lead, runtime.progress, runtime.metrics.lead_paused)

    @runtime.app.timer(CHECK_EVERY_S, name="learnstream.lead_order")  # type: ignore[untyped-decorator]
    async def lead_order() -> None:
        try:
            leads.tick(time.monotonic())
        except Exception as exc:  # noqa: BLE001  (a partition unassigned meanwhile: the next tick)
            log.warning("the lead order could not read the consumer: %r", exc)


def _tps(partitions: frozenset[Partition] | set[Partition]) -> set[TP]:
    return {TP(topic, partition) for topic, partition in partitions}
