"""Timer: pause the inputs that wait for the plans and the corrections to catch up.

The rule is streams/join/lead.py's; this side reads, every ``CHECK_EVERY_S``, how many records
of each lead partition (plans, corrections) are unread (the high watermark last fetched less
the next offset to process) and pauses or resumes the other inputs' partitions with Faust's
consumer. A paused partition keeps what it has fetched. Faust's own pauses come first:
nothing is touched while a rebalance or a table recovery runs. When Faust resumes the
assignment after its recovery, the inputs whose leads are behind or not fetched yet stay
paused (``faust_compat.hold_back_resumes``, seam 14): resumed, they would fetch a batch each
before the first tick. The stall watch (agents/seams/stall_watch.py) leaves the paused
partitions alone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

import faust
from faust.types import TP

from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.faust_compat import hold_back_resumes
from learnstream.streams.join.lead import LeadOrder, Partition
from learnstream.streams.offsets.progress import Progress

__all__ = ["CHECK_EVERY_S", "Leads", "register", "unread_count"]

log = logging.getLogger("learnstream")

#: How often the leads' backlog is read.
CHECK_EVERY_S = 0.25


class Leads:
    """The lead order applied to one worker's consumer."""

    def __init__(self, app: faust.App, order: LeadOrder, progress: Progress, gauge: Any) -> None:
        self.app, self.order, self.progress, self.gauge = app, order, progress, gauge

    def unread(self, tp: TP) -> int | None:
        """Return how many records of ``tp`` are unread (:func:`unread_count`)."""
        return unread_count(self.app, self.progress, tp)

    def leads_of(self, partitions: Iterable[Partition]) -> dict[Partition, int | None]:
        """Return the unread records of the lead partitions of the inputs' partition numbers
        among ``partitions`` (a changelog's standby partitions name numbers not ours)."""
        ranks = self.order.ranks
        numbers = {number for topic, number in partitions if topic in ranks}
        leads = [topic for topic in ranks if self.order.leads(topic)]
        return {(t, n): self.unread(TP(t, n)) for t in leads for n in numbers}

    def held(self, resuming: set[TP]) -> set[TP]:
        """Return which of the partitions Faust resumes must stay paused (none on error:
        Faust's resume must go on)."""
        try:
            wanted = {(tp.topic, tp.partition) for tp in resuming}
            kept = self.order.hold(time.monotonic(), wanted, self.leads_of(wanted))
        except Exception as exc:  # noqa: BLE001  (the next tick pauses what must wait)
            log.warning("the lead order could not read the consumer: %r", exc)
            return set()
        return _tps(kept)

    def release(self) -> None:
        """Resume every partition waiting (a tick that failed: the order must never hold an
        input back by mistake), unless Faust's rebalance has the assignment paused."""
        if self.app.rebalancing or self.app.in_recovery:
            return  # Faust resumes the assignment itself, asking ``held`` again
        if waiting := self.order.release():
            self.app.consumer.resume_partitions(_tps(waiting))
        self.gauge.set(0)

    def tick(self, now: float) -> None:
        """Pause the partitions that wait for a lead, resume those that wait no more."""
        app, order = self.app, self.order
        consumer = app.consumer
        if app.rebalancing or app.in_recovery:
            return  # Faust pauses the assignment itself; its resume asks ``held``
        assigned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        pause, resume = order.step(now, assigned, self.leads_of(assigned))
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
    hold_back_resumes(runtime.app, leads.held)

    @runtime.app.timer(CHECK_EVERY_S, name="learnstream.lead_order")  # type: ignore[untyped-decorator]
    async def lead_order() -> None:
        try:
            leads.tick(time.monotonic())
        except Exception as exc:  # noqa: BLE001  (read the inputs at once rather than hold them)
            log.warning("the lead order could not read the consumer (%r): resuming its inputs", exc)
            leads.release()


def unread_count(app: faust.App, progress: Progress, tp: TP) -> int | None:
    """Return how many records of ``tp`` this worker has still to process: the high
    watermark last fetched less the next offset it expects. None until a fetch of ``tp``
    has told its high watermark (or while it is not assigned here); 0 while where its
    records start is not known (nothing processed, committed or asked yet: an empty
    partition of a new group stays so, and must hold nothing back)."""
    try:
        end = app.consumer.highwater(tp)
    except AssertionError:  # aiokafka's: not assigned (a rebalance under way)
        return None
    expected = progress.expected(tp)
    return None if end is None else 0 if expected is None else end - expected


def _tps(partitions: Iterable[Partition]) -> set[TP]:
    return {TP(topic, partition) for topic, partition in partitions}
