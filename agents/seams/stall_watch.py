"""Timer: read again partitions whose fetched records never reached the agents.

Every ``CHECK_EVERY_S`` the worker compares each input partition's fetch position with one
past the last record Faust's fetch loop handed over (``Progress.handed``; before the first,
where the partition's records start); ``learnstream.streams.observe.stall.StallWatch`` decides
which have waited too long, and the worker seeks those back (see ``streams/observe/stall.py`` for
why records can be left behind). Records handed over and still queued for a busy agent do not count;
offsets that hold no record (a re-read handed nothing over) are passed over.
The same check also finds partitions whose position has stayed below the broker's high
watermark, nothing fetched, for ``learnstream.streams.observe.stall.IDLE_AFTER_S``: those are
fetched afresh; and partitions whose next offset to process has stayed below it that long
while the broker holds a record there (asked of the prober): those are read again from it,
whatever kept the record from the agents. Nothing is checked while a rebalance or table
recovery moves the positions, nor on the partitions paused on purpose while the plans or
corrections catch up (agents/joins/lead.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Set

import faust
from faust.types import TP

from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.faust_compat import fetch_positions, log_starts
from learnstream.streams.join.lead import Partition
from learnstream.streams.observe.stall import Idle, IdleWatch, Stall, StallWatch
from learnstream.streams.offsets.progress import Progress

__all__ = ["CHECK_EVERY_S", "register"]

log = logging.getLogger("learnstream")

#: How often the fetch positions are compared with what was processed: a stall is seen
#: ``STALLED_AFTER_S`` to this much later.
CHECK_EVERY_S = 1.0


class Stalls:
    """The stall watch of one worker."""

    def __init__(
        self,
        app: faust.App,
        progress: Progress,
        waiting: Callable[[], Set[Partition]] = frozenset,
    ) -> None:
        self.app = app
        self.progress = progress
        #: The partitions paused on purpose (the join's lead order): left alone, their
        #: clocks start afresh once they are read again.
        self.waiting = waiting
        self.watch: StallWatch[TP] = StallWatch()
        self.idle: IdleWatch[TP] = IdleWatch()
        #: The next offset to process against the high watermark: whatever kept a record
        #: from the agents (fetched or not, handed over or not), it has not been processed.
        self.unprocessed: IdleWatch[TP] = IdleWatch()

    def inputs(self) -> set[str]:
        """Return the topics the agents read (not the tables' changelogs)."""
        return {
            name for agent in self.app.agents.values()
            for name in getattr(agent.channel, "topics", ())
        }  # fmt: skip

    async def check(self) -> None:
        """Seek back every input partition whose fetched records were not handed over."""
        if self.app.rebalancing or self.app.in_recovery:
            return
        inputs, paused = self.inputs(), self.waiting()
        positions = {
            tp: at for tp, at in (await fetch_positions(self.app.consumer)).items()
            if tp.topic in inputs and (tp.topic, tp.partition) not in paused
        }  # fmt: skip
        # The records from the last one handed over on; before any, from where they start.
        handed = self.progress.handed
        start = {tp: handed.get(tp, self.progress.expected(tp)) for tp in positions}
        # Nothing committed and nothing processed: the records start where the log does.
        unknown = [tp for tp, at in start.items() if at is None and positions[tp] > 0]
        if unknown:
            start.update(await log_starts(self.app.consumer, unknown))
        offsets = {tp: (positions[tp], start[tp]) for tp in positions}
        moment = time.monotonic()
        stalled = self.watch.stalled(moment, offsets)
        for tp, stall in stalled.items():
            await self._act(tp, stall)
        highwaters = {tp: (at, self.app.consumer.highwater(tp)) for tp, at in positions.items()}
        idle = self.idle.idle(moment, highwaters)
        for tp, still in idle.items():
            if tp not in stalled:  # being read again from below its position already
                await self._refetch(tp, still)
        behind = {tp: (self.progress.expected(tp), hw) for tp, (_, hw) in highwaters.items()}
        for tp, waiting in self.unprocessed.idle(moment, behind).items():
            if tp not in stalled and tp not in idle:
                await self._reread(tp, waiting)

    async def _act(self, tp: TP, stall: Stall) -> None:
        last = stall.position - 1
        if stall.gap:  # read again, nothing came: markers, aborted or compacted records
            log.info(
                "%s[%d]: offsets %d..%d hold no records to hand over",
                tp.topic, tp.partition, stall.offset, last,
            )  # fmt: skip
            self.progress.handed[tp] = stall.position
            return
        log.info(
            "%s[%d]: offsets %d..%d were fetched but not handed over to the agents for %gs:"
            " reading from %d again",
            tp.topic, tp.partition, stall.offset, last, self.watch.after_s, stall.offset,
        )  # fmt: skip
        await self.progress.seek_to(tp, stall.offset)

    async def _refetch(self, tp: TP, idle: Idle) -> None:
        log.warning(
            "%s[%d]: the broker holds records %d..%d, and none was fetched for %gs"
            " (handed over up to %s, next to process %s): fetching from %d again",
            tp.topic, tp.partition, idle.position, idle.highwater - 1, self.idle.after_s,
            self.progress.handed.get(tp), self.progress.expected(tp), idle.position,
        )  # fmt: skip
        await self.progress.seek_to(tp, idle.position)

    async def _reread(self, tp: TP, waiting: Idle) -> None:
        """Read ``tp`` again from its next offset to process, if the broker holds a record
        there (the transaction markers that end a transactional partition hold none)."""
        first = await self.progress.held_between(tp, waiting.position, waiting.highwater)
        if first is None:
            return
        log.warning(
            "%s[%d]: record %d has waited %gs to be processed (next to process %d, high"
            " watermark %d, handed over up to %s): reading from %d again",
            tp.topic, tp.partition, first, self.unprocessed.after_s, waiting.position,
            waiting.highwater, self.progress.handed.get(tp), waiting.position,
        )  # fmt: skip
        await self.progress.seek_to(tp, waiting.position)


def register(runtime: Runtime) -> None:
    """Register the stall watch's timer."""
    stalls = Stalls(runtime.app, runtime.progress, runtime.lead.paused)

    @runtime.app.timer(CHECK_EVERY_S, name="learnstream.stall_watch")  # type: ignore[untyped-decorator]
    async def stall_watch() -> None:
        try:
            await stalls.check()
        except Exception as exc:  # a failed check must not stop the timer; the next one retries
            log.warning("the stall watch could not read the fetch positions: %r", exc)
