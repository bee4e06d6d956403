"""How offsets are committed (both guarantees): what was processed, nothing more, nothing less.

Faust picks the offsets to commit from the acks its streams give, and commits from a
background task while the agents go on working. Three things go wrong with that, each
found in kill -9 runs (RELIABILITY.md):

1. **Work done during a commit rides along.** Faust picks the offsets first, then commits.
   Under exactly_once the transaction then carries the outputs of every record processed
   while the commit was under way, but not their offsets; a kill before the next commit
   replays those records and their samples come out twice for read_committed readers
   (about 800 per kill when a commit took seconds). ``Progress.quiet`` holds new records
   back and waits for those in progress while a commit runs, so a transaction carries
   exactly the outputs of the offsets it commits.
2. **Faust's acks are not what was processed.** A restarted worker is handed some records
   twice (fetched, then fetched again after the seek to the committed offsets), and
   sometimes not at all: the record right after the committed offset never reached the
   agents while the ones after it did. Faust commits the end of the first run of
   *consecutive* acked offsets, so repeats made commits crawl one offset at a time, and it
   commits past an unacked offset when the acks start one above the committed offset.
   ``Progress`` takes each partition's records in offset order: one processed before is
   skipped (its outputs are in the open transaction or already committed), one above a hole
   makes it seek back and re-read; ``guard_commits`` makes Faust commit one past the last
   record processed.
3. **The send buffer is not empty at commit.** Table writes reach Kafka through Faust's
   producer buffer (``Topic.send_soon``), published by a background task that pops a record
   and then awaits the producer. Faust commits without draining it, so changelog records of
   processed events can miss the commit (exactly_once: they land in the next transaction and
   a kill aborts them; at_least_once: they are not yet acknowledged). Every commit first
   waits until the queue is empty *and* the publishing task waits for the next record; at
   at_least_once it then flushes the producer again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import faust
from faust.types import TP

__all__ = [
    "DRAIN_LIMIT_S",
    "DeliverAll",
    "REWIND_AGAIN_AFTER",
    "Progress",
    "buffer_idle",
    "deliver_every_record",
    "guard_commits",
    "wait_until_idle",
]

log = logging.getLogger("learnstream")

#: How long a commit waits for the buffer; past it, it commits anyway and says so.
DRAIN_LIMIT_S = 30.0

Commit = Callable[..., Awaitable[bool]]


#: While waiting for a rewind to take effect, seek again after this many skipped records.
REWIND_AGAIN_AFTER = 1000


@dataclass
class _Rewinding:
    """A partition waiting for a re-read: the record that showed the hole, the last seen."""

    trigger: int
    last: int
    skipped: int = 0

    def restarted(self, offset: int) -> bool:
        """Tell whether ``offset`` starts the re-read (offsets went down, or the record that
        showed the hole comes first again when nothing followed it)."""
        return offset < self.last or offset == self.last == self.trigger


class Progress:
    """The records this worker processed, per source partition, and the commit gate.

    Records of a partition must reach the agents in offset order without holes: a record
    above the next expected offset means Faust dropped some (seen after restarts: the record
    right after the committed offset never came, and committing past it lost its plan). The
    partition is then sought back and records are skipped until the re-read starts (offsets
    go down again); if the re-read starts above the expected offset too, those offsets are
    not in the log (compaction, transaction markers) and the hole is accepted.

    ``gated`` (exactly_once) makes ``quiet`` hold records back during a commit; at
    at_least_once a commit need not wait, since a replay may repeat samples anyway.
    """

    def __init__(self, *, gated: bool) -> None:
        self.gated = gated
        #: Where Faust last sought a partition to (its committed offset), if anywhere.
        self.committed: Callable[[TP], int | None] = lambda tp: None
        #: Seek a partition to an offset (the consumer's ``seek``).
        self.seek: Callable[[TP, int], Awaitable[None]] | None = None
        self._next: dict[TP, int] = {}  # one past the last record processed
        self._rewinding: dict[TP, _Rewinding] = {}
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._open = asyncio.Event()
        self._open.set()
        self._committing = asyncio.Lock()

    def next_offset(self, tp: TP) -> int | None:
        """Return the offset to commit for ``tp``: one past the last record processed."""
        return self._next.get(tp)

    def partitions(self) -> Iterator[TP]:
        """Yield the partitions with a processed record."""
        return iter(list(self._next))

    async def admit(self, tp: TP, offset: int) -> bool:
        """Tell whether the record at ``offset`` is the next one to process.

        False for a record processed before (a redelivery after a seek, or below the
        committed offset) and for records above a hole, which are read again after a seek.
        """
        expected = self._next.get(tp, self.committed(tp))
        if expected is None:  # nothing committed, nothing processed: the log starts here
            return True
        if offset < expected:
            return False
        waiting = self._rewinding.get(tp)
        if waiting is not None:
            return await self._after_rewind(tp, offset, expected, waiting)
        if offset == expected:
            return True
        log.warning(
            "%s[%d]: record %d came before %d..%d: reading from %d again",
            tp.topic, tp.partition, offset, expected, offset - 1, expected,
        )  # fmt: skip
        self._rewinding[tp] = _Rewinding(trigger=offset, last=offset)
        await self._seek(tp, expected)
        return False

    async def _after_rewind(self, tp: TP, offset: int, expected: int, waiting: _Rewinding) -> bool:
        if not waiting.restarted(offset):  # still records fetched before the seek
            waiting.last, waiting.skipped = offset, waiting.skipped + 1
            if waiting.skipped >= REWIND_AGAIN_AFTER:
                waiting.skipped = 0
                await self._seek(tp, expected)
            return False
        del self._rewinding[tp]  # offsets went down: the re-read has started
        if offset > expected:
            log.info(
                "%s[%d]: offsets %d..%d are not in the log (compacted or markers)",
                tp.topic, tp.partition, expected, offset - 1,
            )  # fmt: skip
        return True

    async def _seek(self, tp: TP, offset: int) -> None:
        if self.seek is not None:
            await self.seek(tp, offset)

    @asynccontextmanager
    async def record(self, tp: TP, offset: int) -> AsyncIterator[bool]:
        """Bracket the processing of one record; yields False for one not to process now.

        The record counts as processed only if the block ends without an exception.
        """
        if not await self.admit(tp, offset):
            yield False
            return
        await self._open.wait()
        self._busy += 1
        self._idle.clear()
        try:
            yield True
            self._next[tp] = offset + 1
        finally:
            self._busy -= 1
            if not self._busy:
                self._idle.set()

    @asynccontextmanager
    async def quiet(self) -> AsyncIterator[None]:
        """Hold new records back and wait for those in progress (when gated)."""
        if not self.gated:
            yield
            return
        async with self._committing:
            self._open.clear()
            try:
                await self._idle.wait()
                yield
            finally:
                self._open.set()

    def forget(self, tps: Iterable[TP]) -> None:
        """Drop revoked partitions: their next owner starts from the committed offsets."""
        for tp in tps:
            self._next.pop(tp, None)
            self._rewinding.pop(tp, None)


class DeliverAll(dict):  # type: ignore[type-arg]
    """Faust's read offsets, made to let every fetched record through to the agents.

    Faust drops a fetched record below the last one it handed over, to hide the copies a
    seek brings; but records fetched before a seek, handed over after it, raise that mark
    again and the re-read after the seek is dropped instead: records lost. ``Progress``
    orders and de-duplicates each partition itself, so Faust must hand over everything.
    """

    def __getitem__(self, tp: Any) -> None:
        return None

    def get(self, tp: Any, default: Any = None) -> None:
        return None


def deliver_every_record(app: faust.App) -> None:
    """Give ``app``'s consumer a ``DeliverAll`` as soon as the worker creates it.

    Not by creating the consumer here: it reads ``app.in_transaction``, a cached property
    that stays False until the worker runs, and exactly_once would be off for good. And not
    on assignment: the fetch loop has bound the read offsets' methods by then.
    """
    make = app._new_consumer

    def new_consumer() -> Any:
        consumer = make()
        consumer._read_offset = DeliverAll()  # type: ignore[attr-defined]
        return consumer

    app._new_consumer = new_consumer  # type: ignore[method-assign]


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


def _quiet(progress: Progress, force_commit: Commit) -> Commit:
    async def quiet_commit(*args: Any, **kwargs: Any) -> bool:
        async with progress.quiet():
            return await force_commit(*args, **kwargs)

    return quiet_commit


def _processed(consumer: Any, progress: Progress) -> Callable[[TP], int | None]:
    def processed_offset(tp: TP) -> int | None:
        target = progress.next_offset(tp)
        acked = consumer._acked.get(tp)
        if target is not None and acked:  # Faust's own lists: keep them from growing
            done = [o for o in acked if o < target]
            if done:
                acked[:] = [o for o in acked if o >= target]
                consumer._acked_index[tp].difference_update(done)
        return target

    return processed_offset


def _with_progress(progress: Progress) -> Callable[..., Iterator[TP]]:
    def partitions_to_commit(topics: Any = None) -> Iterator[TP]:
        return (
            tp
            for tp in progress.partitions()
            if topics is None or tp in topics or tp.topic in topics
        )

    return partitions_to_commit


def guard_commits(app: faust.App, progress: Progress) -> None:
    """Make ``app``'s consumer commit what ``progress`` says was processed, between records,
    after its send buffer is drained.

    Call once the consumer exists (on partition assignment); calling again is a no-op.
    """
    consumer = app.consumer
    if getattr(consumer, "_learnstream_guarded", False):
        return
    buffer = app.producer.buffer
    if app.in_transaction:  # the transaction carries the records: no flush needed
        manager = consumer.transactions
        manager.commit = _drained(buffer, manager.commit, None)  # type: ignore[method-assign,assignment]
    else:
        consumer._commit = _drained(buffer, consumer._commit, app.producer.flush)  # type: ignore[attr-defined]
    progress.committed = consumer._committed_offset.get  # type: ignore[attr-defined]
    progress.seek = consumer.seek
    consumer.force_commit = _quiet(progress, consumer.force_commit)  # type: ignore[attr-defined]
    consumer._new_offset = _processed(consumer, progress)  # type: ignore[attr-defined]
    consumer._filter_tps_with_pending_acks = _with_progress(progress)  # type: ignore[attr-defined]
    consumer._learnstream_guarded = True  # type: ignore[attr-defined]
