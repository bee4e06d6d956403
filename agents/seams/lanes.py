"""One lane per partition: an agent's records in offset order within a partition, partitions
side by side.

A Faust agent handles its stream one record after another, whatever partition each comes
from. The join's records wait on the broker while they are handled (the corrections
watermark's and the consent fence's end-offset rounds, streams/join/watermark.py and
streams/consent/fence.py), so one agent holding one record at a time was busy 77-83 % of the
wall time at half of one worker's capacity, and that queue made the latency's tail
(benchmarks/RESULTS.md, "where the latency's excess goes"). In lanes, a record of one
partition waits for its broker rounds while records of the agent's other partitions go on.

What stays as it was:

- **Order within a partition.** Each record starts once the one before it in its partition
  is done: ``Progress`` (streams/offsets/progress.py) takes a partition's records in offset
  order, and the join's keys live in one partition each.
- **Acks.** The stream does not ack a record when the agent takes the next one; its lane
  acks it once handled. Faust's rebalance waits for every record it handed over to be
  acked (``Consumer.wait_empty``), so a revocation still waits for the records in the lanes,
  and their outputs go in the transaction that commits their offsets.
- **Commits.** ``Progress.quiet`` holds records back and waits for those in progress, in
  every lane, exactly as for one.
- **Bounded.** At most ``limit`` records are taken from the stream and not yet done; the
  agent waits for a lane to finish one before it takes more, so Faust's buffers and flow
  control stay what bounds memory.

A failure the handler did not catch (``Runtime.guarded`` dead-letters every record's own
failures) stops the agent with that exception, as it would have in the agent itself: no
record after it is handled, and the agent raises it at once, wherever it was waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from faust.types import EventT, StreamT

__all__ = ["IN_FLIGHT", "run_in_lanes"]

#: Records taken from the stream and not yet handled, over all of an agent's lanes.
IN_FLIGHT = 64

Handle = Callable[[EventT[Any]], Awaitable[None]]


async def run_in_lanes(stream: StreamT[Any], handle: Handle, limit: int = IN_FLIGHT) -> None:
    """Handle every record of ``stream``, one lane per partition; ack each once handled."""
    lanes = _Lanes(handle, limit, asyncio.current_task())
    try:
        # Faust's Stream has noack(); its StreamT protocol does not say so.
        async for event in stream.noack().events():  # type: ignore[attr-defined]
            await lanes.take(event)
        await lanes.drain()
    except asyncio.CancelledError:
        if lanes.failure is None:
            raise  # the agent stops
        raise lanes.failure from None  # a lane cancelled the agent to say so
    finally:
        lanes.cancel()


class _Lanes:
    """The records in flight: the last task of each partition, and a bound on them all."""

    def __init__(self, handle: Handle, limit: int, agent: asyncio.Task[Any] | None) -> None:
        self.handle, self.agent = handle, agent
        self.slots = asyncio.Semaphore(limit)
        self.tails: dict[Any, asyncio.Task[None]] = {}
        self.running: set[asyncio.Task[None]] = set()
        self.failure: BaseException | None = None

    async def take(self, event: EventT[Any]) -> None:
        """Queue ``event`` behind the record before it in its partition."""
        self._raise_failure()
        await self.slots.acquire()
        self._raise_failure()
        tp = event.message.tp
        # Created here, in the stream's iteration: the task's context holds this record
        # as Faust's current event (table writes and the join read their partition there).
        task = asyncio.ensure_future(self._one(event, self.tails.get(tp)))
        self.tails[tp] = task
        self.running.add(task)
        task.add_done_callback(lambda done: self._done(tp, done))

    async def drain(self) -> None:
        """Wait for every record taken (the stream ended)."""
        while self.running:
            await asyncio.wait(list(self.running))
        self._raise_failure()

    def cancel(self) -> None:
        """Cancel what is still in flight (the agent stops)."""
        for task in list(self.running):
            task.cancel()

    async def _one(self, event: EventT[Any], before: asyncio.Task[None] | None) -> None:
        try:
            if before is not None:
                await asyncio.wait([before])  # its outcome is its own: only the order matters
            if self.failure is None:  # else the agent stops: nothing after it is handled
                await self.handle(event)
        finally:
            event.ack()
            self.slots.release()

    def _done(self, tp: Any, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        if self.tails.get(tp) is task:
            del self.tails[tp]
        if task.cancelled() or task.exception() is None or self.failure is not None:
            return
        self.failure = task.exception()
        if self.agent is not None and self.agent is not asyncio.current_task():
            self.agent.cancel()  # wakes the agent wherever it waits; it raises the failure

    def _raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure
