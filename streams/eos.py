"""Commit offsets only after Faust's send buffer is really empty (both guarantees).

Table writes reach Kafka through Faust's producer buffer (``Topic.send_soon``), which a
background task publishes one record at a time: it pops a record, then awaits the producer.

- exactly_once: Faust sends the offsets to the partition's transaction and commits it
  without flushing that buffer, so changelog records of events it counts as done can land in
  the *next* transaction; a kill -9 before that one commits aborts them while the offsets
  stay committed. The restarted worker has lost those table writes (a parked decision, a plan
  state, a join buffer's deletion) and the samples that depended on them, or replays a join
  twice (measured before this fix: 7 lost and 27 duplicated of 3,237 after 5 kills).
- at_least_once: Faust flushes first, but its flush stops when the queue is empty (the
  record being published is already popped) or when one send takes over 0.1 s, so the same
  window exists, narrower.

``drain_before_commit`` wraps the commit so it first waits until the queue is empty *and*
the publishing task waits for the next record; at_least_once then flushes the producer
again, so what was just handed over is acknowledged before the offsets are.

It also keeps Faust's lists of acked offsets free of repeats. A restarted worker is
sometimes handed records twice (fetched, then fetched again after the seek to the
committed offsets when its group settles), so an offset is acked twice. Faust commits the
end of the first run of *consecutive* acked offsets, and a repeat ends that run: with
``[124, 125, 125, 126, ...]`` it commits 126 and stops, one offset per commit, while
processing runs hundreds ahead (logged in a 20,000-event kill run). A kill then replays
all of that, and under exactly_once the transactions already committed its samples.
``dedupe_acks`` drops repeats and offsets below the committed one before Faust looks.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import faust
from faust.types import TP

__all__ = ["DRAIN_LIMIT_S", "buffer_idle", "dedupe_acks", "drain_before_commit", "wait_until_idle"]

log = logging.getLogger("learnstream")

#: How long a commit waits for the buffer; past it, it commits anyway and says so.
DRAIN_LIMIT_S = 30.0

Commit = Callable[..., Awaitable[bool]]


class Buffer(Protocol):
    """What we read of Faust's ``ProducerBuffer``."""

    pending: asyncio.Queue[Any]

    @property
    def should_stop(self) -> bool: ...


def buffer_idle(pending: asyncio.Queue[Any]) -> bool:
    """Tell whether nothing is queued and the publishing task waits on ``get()``.

    An empty queue alone is not enough: the task pops a record before it publishes it.
    ``_getters`` is asyncio.Queue's list of waiting ``get()`` callers (CPython).
    """
    return pending.empty() and bool(getattr(pending, "_getters", None))


async def wait_until_idle(buffer: Buffer, limit_s: float = DRAIN_LIMIT_S) -> bool:
    """Wait until the buffer is idle; False if ``limit_s`` passed or it is stopping."""
    deadline = time.monotonic() + limit_s
    while not buffer_idle(buffer.pending):
        if buffer.should_stop or time.monotonic() >= deadline:
            return False  # stopping: nothing publishes any more, waiting would only stall
        await asyncio.sleep(0.001)
    return True


def _drained(buffer: Buffer, commit: Commit, flush: Callable[[], Awaitable[None]] | None) -> Commit:
    async def drained_commit(offsets: Mapping[TP, int], *args: Any, **kwargs: Any) -> bool:
        if not await wait_until_idle(buffer) and not buffer.should_stop:
            log.warning(
                "send buffer busy for %.0fs: committing %d partition(s) anyway",
                DRAIN_LIMIT_S,
                len(offsets),
            )
        if flush is not None:
            await flush()
        return await commit(offsets, *args, **kwargs)

    return drained_commit


def dedupe_acks(acked: list[int], committed: int | None) -> None:
    """Drop repeated offsets and offsets below ``committed`` from ``acked`` (in place, sorted)."""
    keep = {o for o in acked if committed is None or o >= committed}
    if len(keep) != len(acked):
        acked[:] = sorted(keep)


def _deduped(consumer: Any, new_offset: Callable[[TP], int | None]) -> Callable[[TP], int | None]:
    def deduped_new_offset(tp: TP) -> int | None:
        acked = consumer._acked.get(tp)
        if acked:
            dedupe_acks(acked, consumer._committed_offset.get(tp))
        return new_offset(tp)

    return deduped_new_offset


def drain_before_commit(app: faust.App) -> None:
    """Make every offset commit of ``app`` wait for its send buffer first, and drop repeated
    acks before Faust picks the offsets to commit.

    Call once the consumer exists (on partition assignment); calling again is a no-op.
    """
    consumer = app.consumer
    if getattr(consumer, "_learnstream_drains", False):
        return
    buffer = app.producer.buffer
    if app.in_transaction:  # the transaction carries the records: no flush needed
        manager = consumer.transactions
        manager.commit = _drained(buffer, manager.commit, None)  # type: ignore[method-assign,assignment]
    else:
        consumer._commit = _drained(buffer, consumer._commit, app.producer.flush)  # type: ignore[attr-defined]
    consumer._new_offset = _deduped(consumer, consumer._new_offset)  # type: ignore[attr-defined]
    consumer._learnstream_drains = True  # type: ignore[attr-defined]
