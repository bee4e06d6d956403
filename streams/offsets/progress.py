"""Count what was processed, per partition, so offset commits take exactly that.

Faust picks the offsets to commit from the acks its streams give, and commits from a
background task while the agents go on working. Two things go wrong with that, each of which
loses or duplicates records across a kill (RELIABILITY.md, findings behind the design);
``Progress`` is the bookkeeping that fixes them, and
``agents/seams/faust_compat.py`` makes Faust's consumer use it:

1. **Work done during a commit rides along.** Faust picks the offsets first, then commits.
   Under exactly_once the transaction then carries the outputs of every record processed
   while the commit was under way, but not their offsets; a kill before the next commit
   replays those records and their samples come out twice for read_committed readers.
   ``Progress.quiet`` holds new records
   back and waits for those in progress while a commit runs, so a transaction carries
   exactly the outputs of the offsets it commits.
2. **Faust's acks are not what was processed.** A restarted worker is handed some records
   twice (fetched, then fetched again after the seek to the committed offsets), and
   sometimes not at all: the record right after the committed offset never reached the
   agents while the ones after it did. Faust commits the end of the first run of
   *consecutive* acked offsets, so repeats make commits crawl one offset at a time, and it
   commits past an unacked offset when the acks start one above the committed offset.
   ``Progress`` takes each partition's records in offset order: one processed before is
   skipped (its outputs are in the open transaction or already committed), one above a hole
   makes it seek back and re-read; the commit takes one past the last record processed.
   Where a partition's records start is asked of the broker (``starts_of``: the group's
   committed offset, else the log start; for every partition at once on an assignment), not
   read from Faust: a restarted worker's agents get records before Faust's seek to the
   committed offsets has noted them, so a record above a hole would be taken as the first.
   Everything known of the partitions is dropped on every assignment (``assign``): Faust
   seeks each to its committed offset then, and a record finished across the rebalance
   must not leave an old position behind (a stale one makes a re-read skip records, and
   the plans they carry).
3. **Some work is done later than its record.** The quality windows count samples in memory
   and write a partition's counts at its next flush (agents/quality_tables.py). With ``held`` on,
   a commit takes the *committable* offset instead: what was processed when the partition
   was last flushed (``release``), so no commit passes a record whose counts are not yet in
   the tables; a crash replays those records and they are counted then. ``before_commit``
   runs inside ``quiet``, before the offsets are picked: the windows flush everything there,
   so under exactly_once a transaction never carries samples of records it does not commit.
4. **Some records wait in memory.** Under at_least_once the join holds a parked record in
   memory instead of writing it to its ``pending`` table (agents/joins/plan_join.py): it *pins*
   the record's offset (``pin``), and no commit passes the lowest pin of a partition until
   the record is done with (``unpin``), so a crash reads it again and it parks again.

Pure: no Faust, no Kafka client; a partition is anything hashable with ``topic`` and
``partition`` (Faust's ``TP``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
)
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "REREADS_FOR_A_GAP",
    "REWIND_AGAIN_AFTER",
    "WARN_EVERY_REREADS",
    "Partition",
    "Progress",
]

log = logging.getLogger("learnstream")


class Partition(Hashable, Protocol):
    """A topic partition, as Faust's ``TP`` and aiokafka's ``TopicPartition`` are."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...


#: While waiting for a rewind to take effect, seek again after this many skipped records.
REWIND_AGAIN_AFTER = 1000


#: How many re-reads must start at the same offset above the hole before those offsets are
#: taken as not in the log (the first record after a seek is sometimes dropped too), and
#: the broker is asked whether they hold a record (``Progress.first_visible``).
REREADS_FOR_A_GAP = 2

#: While the broker says a hole holds records the re-reads keep skipping, warn this often.
WARN_EVERY_REREADS = 10


@dataclass
class _Rewinding:
    """A partition waiting for a re-read: the record that showed the hole, the last seen."""

    trigger: int
    last: int
    skipped: int = 0
    #: Where earlier re-reads of this hole started, above it.
    starts: tuple[int, ...] = ()

    def restarted(self, offset: int) -> bool:
        """Tell whether ``offset`` starts the re-read (offsets went down, or the record that
        showed the hole comes first again when nothing followed it)."""
        return offset < self.last or offset == self.last == self.trigger


class Progress:
    """The records this worker processed, per source partition, and the commit gate.

    Records of a partition must reach the agents in offset order without holes: a record
    above the next expected offset means Faust dropped some (after a restart the record right
    after the committed offset can be missing, and committing past it loses what it carries). The
    partition is then sought back and records are skipped until the re-read starts (offsets
    go down again); if ``REREADS_FOR_A_GAP`` re-reads start at the same offset above the
    expected one and the broker holds no record there (``first_visible``), those offsets are
    not in the log (compaction, transaction markers) and the hole is accepted. A record the
    broker does hold there is read again however many re-reads drop it.

    ``gated`` (exactly_once) makes ``quiet`` hold records back during a commit; at
    at_least_once a commit need not wait, since a replay may repeat samples anyway.
    ``held`` makes commits take the offsets released by the last flush of each partition.
    """

    def __init__(self, *, gated: bool, held: bool = False) -> None:
        self.gated = gated
        self.held = held
        #: Runs when a commit starts, before it picks offsets (gated: with no record in progress).
        self.before_commit: Callable[[], None] = lambda: None
        #: Where Faust last sought a partition to (its committed offset), if anywhere.
        self.committed: Callable[[Partition], int | None] = lambda tp: None
        #: Seek a partition to an offset (the consumer's ``seek``).
        self.seek: Callable[[Partition, int], Awaitable[None]] | None = None
        #: Ask the broker where partitions' records start for this consumer group: each one's
        #: committed offset, else its log start; a partition left out is unknown (None: use
        #: ``committed``).
        self.starts_of: Callable[[list[Partition]], Awaitable[Mapping[Partition, int]]] | None = (
            None
        )
        #: Where the first record a reader sees is, at or after an offset (None: none up to
        #: the end); raises when it cannot tell. Asked before a hole is accepted: without
        #: it, one that re-reads keep starting above is taken as not in the log.
        self.first_visible: Callable[[Partition, int], Awaitable[int | None]] | None = None
        #: One past the last record the consumer handed over, per partition (the fetch loop
        #: notes it: agents/seams/faust_compat.py seam 11).
        self.handed: dict[Partition, int] = {}
        self._next: dict[Partition, int] = {}  # one past the last record processed
        self._committable: dict[Partition, int] = {}  # _next as of the partition's last flush
        #: offsets of records held in memory (``pin``): offset -> how many holds
        self._pinned: dict[Partition, dict[int, int]] = {}
        self._rewinding: dict[Partition, _Rewinding] = {}
        self._start: dict[Partition, int] = {}  # starts_of's answers, this assignment
        self._asking: asyncio.Task[None] | None = None  # the lookup begun on the assignment
        self._epoch = 0  # moves on every assignment and revocation
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._open = asyncio.Event()
        self._open.set()
        self._committing = asyncio.Lock()

    def hold(self, flush: Callable[[], None]) -> None:
        """Make commits take what ``flush`` released: it runs before each commit picks its
        offsets (state kept in memory between records, e.g. the quality windows' counts)."""
        self.held, self.before_commit = True, flush

    def next_offset(self, tp: Partition) -> int | None:
        """Return the offset to commit for ``tp``: one past the last record processed."""
        return self._next.get(tp)

    def expected(self, tp: Partition) -> int | None:
        """Return the offset of ``tp``'s next record to process: one past the last processed,
        else where its records start (as asked, else the committed offset); None if unknown."""
        known = self._next.get(tp)
        if known is None:
            known = self._start.get(tp)
        return self.committed(tp) if known is None else known

    async def expected_now(self, tp: Partition) -> int | None:
        """Return ``expected(tp)``, asking the broker where ``tp`` starts if nothing of it
        was processed or asked for since the assignment (the assignment's own lookup first)."""
        if tp in self._next or tp in self._start or self.starts_of is None:
            return self.expected(tp)
        if self._asking is not None and not self._asking.done():
            await asyncio.wait({self._asking})  # neither cancels the other, nor raises
        if tp not in self._start:  # assigned since, or that lookup failed
            failed = await self._ask_starts([tp], self._epoch)
            if failed is not None:  # Faust's committed offset will do
                log.warning(
                    "%s[%d]: could not ask where its records start (%r): using %s",
                    tp.topic, tp.partition, failed, self.committed(tp),
                )  # fmt: skip
        return self.expected(tp)

    async def _ask_starts(self, tps: list[Partition], epoch: int) -> Exception | None:
        """Note where ``tps`` start, unless an assignment came meanwhile; return why the
        lookup failed, if it did."""
        if self.starts_of is None:
            return None
        try:
            starts = await self.starts_of(tps)
        except Exception as exc:  # noqa: BLE001  (the caller says what it does instead)
            return exc
        if epoch == self._epoch:
            self._start.update((tp, starts[tp]) for tp in tps if tp in starts)
        return None

    async def _ask_assigned(self, tps: list[Partition], epoch: int) -> None:
        failed = await self._ask_starts(tps, epoch)
        if failed is not None:
            log.info(
                "could not ask where the %d assigned partitions start (%r): each is asked "
                "at its first record",
                len(tps), failed,
            )  # fmt: skip

    def commit_offset(self, tp: Partition) -> int | None:
        """Return the offset a commit may take for ``tp`` (the released one when ``held``),
        never past a pinned record."""
        offset = self._committable.get(tp) if self.held else self._next.get(tp)
        pins = self._pinned.get(tp)
        return offset if offset is None or not pins else min(offset, min(pins))

    def pin(self, tp: Partition, offset: int) -> None:
        """Keep commits of ``tp`` at or below ``offset`` until it is unpinned (the record's
        work is held in memory; a crash must read it again)."""
        pins = self._pinned.setdefault(tp, {})
        pins[offset] = pins.get(offset, 0) + 1

    def unpin(self, tp: Partition, offset: int) -> None:
        """Release one pin of ``offset`` (one taken before an assignment is gone already)."""
        pins = self._pinned.get(tp)
        if not pins or offset not in pins:
            return
        if pins[offset] > 1:
            pins[offset] -= 1
            return
        del pins[offset]
        if not pins:
            del self._pinned[tp]

    def pinned(self, tp: Partition) -> int | None:
        """Return the lowest pinned offset of ``tp`` (None: none)."""
        pins = self._pinned.get(tp)
        return min(pins) if pins else None

    def release(self, partition: int) -> None:
        """Make what was processed of every topic's ``partition`` committable (it was flushed)."""
        for tp, offset in self._next.items():
            if tp.partition == partition:
                self._committable[tp] = offset

    def release_all(self) -> None:
        """Make everything processed committable (everything was flushed)."""
        self._committable.update(self._next)

    def partitions(self) -> Iterator[Partition]:
        """Yield the partitions with a processed record."""
        return iter(list(self._next))

    async def admit(self, tp: Partition, offset: int) -> bool:
        """Tell whether the record at ``offset`` is the next one to process.

        False for a record processed before (a redelivery after a seek, or below the
        committed offset) and for records above a hole, which are read again after a seek.
        """
        expected = await self.expected_now(tp)
        if expected is None:  # nothing known of where it starts: take it from here
            return True
        if offset < expected:
            return False
        waiting = self._rewinding.get(tp)
        if waiting is not None:
            return await self._after_rewind(tp, offset, expected, waiting)
        if offset == expected:
            return True
        # Transaction markers leave such gaps after every commit under read_committed: say
        # it loudly only once the re-read shows records were really skipped.
        log.info(
            "%s[%d]: record %d came before %d..%d: reading from %d again",
            tp.topic, tp.partition, offset, expected, offset - 1, expected,
        )  # fmt: skip
        self._rewinding[tp] = _Rewinding(trigger=offset, last=offset)
        await self.seek_to(tp, expected)
        return False

    async def _after_rewind(
        self, tp: Partition, offset: int, expected: int, waiting: _Rewinding
    ) -> bool:
        if not waiting.restarted(offset):  # still records fetched before the seek
            waiting.last, waiting.skipped = offset, waiting.skipped + 1
            if waiting.skipped >= REWIND_AGAIN_AFTER:
                waiting.skipped = 0
                await self.seek_to(tp, expected)
            return False
        del self._rewinding[tp]  # offsets went down: the re-read has started
        if offset > expected:
            starts = (*waiting.starts, offset)
            if len(starts) < REREADS_FOR_A_GAP or len(set(starts)) > 1:
                # The first record after a seek may be dropped as well: read once more.
                log.info(
                    "%s[%d]: the re-read started at %d, not %d: reading from %d again",
                    tp.topic, tp.partition, offset, expected, expected,
                )  # fmt: skip
                self._rewinding[tp] = _Rewinding(trigger=offset, last=offset, starts=starts)
                await self.seek_to(tp, expected)
                return False
            moved = await self._commit_passed(tp, expected, offset)
            if moved is not None and moved > offset:
                # The worker before this one processed these too (its transaction committed
                # after the assignment's lookup): processed again, they would come out twice.
                self._next[tp] = moved
                return False
            held = None if moved is not None else await self.held_between(tp, expected, offset)
            if held is not None:
                # The consumer dropped the first record after each seek: read once more.
                if len(starts) % WARN_EVERY_REREADS == REREADS_FOR_A_GAP % WARN_EVERY_REREADS:
                    log.warning(
                        "%s[%d]: %d re-reads started at %d, yet the broker holds record %d:"
                        " reading from %d again",
                        tp.topic, tp.partition, len(starts), offset, held, expected,
                    )  # fmt: skip
                self._rewinding[tp] = _Rewinding(trigger=offset, last=offset, starts=starts)
                await self.seek_to(tp, expected)
                return False
            if moved is None:  # else the commit moved up to this record (logged there)
                log.info(
                    "%s[%d]: offsets %d..%d are not in the log (compacted or markers)",
                    tp.topic, tp.partition, expected, offset - 1,
                )  # fmt: skip
        else:
            log.warning(
                "%s[%d]: records %d..%d had been skipped by the consumer: read them again",
                tp.topic, tp.partition, expected, waiting.trigger - 1,
            )  # fmt: skip
        return True

    async def _commit_passed(self, tp: Partition, expected: int, offset: int) -> int | None:
        """Return the group's committed offset for ``tp`` if it has reached ``offset`` since
        the assignment's lookup (a transaction of the worker before this one committed
        ``expected..offset - 1`` late); None if it has not, or if it cannot be asked."""
        if self.starts_of is None:
            return None
        try:
            start = (await self.starts_of([tp])).get(tp)
        except Exception as exc:  # noqa: BLE001  (the broker is asked for records next)
            log.info(
                "%s[%d]: could not ask for the group's commit (%r)", tp.topic, tp.partition, exc
            )
            return None
        if start is None or start < offset:
            return None
        log.info(
            "%s[%d]: the group's commit has moved to %d since the assignment:"
            " offsets %d..%d were processed",
            tp.topic, tp.partition, start, expected, start - 1,
        )  # fmt: skip
        return start

    async def held_between(self, tp: Partition, start: int, end: int) -> int | None:
        """Return the offset of the first record the broker holds for this worker's readers
        in ``start..end - 1``; None when it holds none there (transaction markers, compacted
        records) or when it cannot tell (no ``first_visible``, or the broker did not answer:
        logged)."""
        if self.first_visible is None:
            return None
        try:
            first = await self.first_visible(tp, start)
        except Exception as exc:  # noqa: BLE001  (the callers decide as they would without)
            log.info(
                "%s[%d]: could not look at offsets %d..%d on the broker (%r)",
                tp.topic, tp.partition, start, end - 1, exc,
            )  # fmt: skip
            return None
        return first if first is not None and first < end else None

    async def seek_to(self, tp: Partition, offset: int) -> None:
        """Make the consumer fetch ``tp`` from ``offset`` on (records fetched but never
        handed over, found by ``learnstream.streams.observe.stall``); records processed before are
        skipped. Records are handed over from ``offset`` on again."""
        self.handed[tp] = offset
        if self.seek is not None:
            await self.seek(tp, offset)

    @asynccontextmanager
    async def record(self, tp: Partition, offset: int) -> AsyncIterator[bool]:
        """Bracket the processing of one record; yields False for one not to process now.

        The record counts as processed only if the block ends without an exception.
        """
        epoch = self._epoch
        if not await self.admit(tp, offset):
            yield False
            return
        await self._open.wait()
        self._busy += 1
        self._idle.clear()
        try:
            yield True
            if epoch == self._epoch:  # else a rebalance came between: the partition starts over
                self._next[tp] = offset + 1
        finally:
            self._busy -= 1
            if not self._busy:
                self._idle.set()

    @asynccontextmanager
    async def quiet(self) -> AsyncIterator[None]:
        """Hold new records back and wait for those in progress (when gated); then run
        ``before_commit``."""
        if not self.gated:
            self.before_commit()
            yield
            return
        async with self._committing:
            self._open.clear()
            try:
                await self._idle.wait()
                self.before_commit()
                yield
            finally:
                self._open.set()

    def forget(self, tps: Iterable[Partition]) -> None:
        """Drop revoked partitions: their next owner starts from the committed offsets."""
        self._epoch += 1
        for tp in tps:
            for known in self._per_partition():
                known.pop(tp, None)

    def assign(self, tps: Iterable[Partition] = ()) -> None:
        """Start over on a new assignment of ``tps``: Faust seeks every assigned partition to
        its committed offset (aiokafka's eager protocol hands all of them out again), so
        nothing known from before holds, whatever finished in between.

        Where they start is asked at once, in one lookup, so that the first record of each
        partition does not wait for its own (about 10 ms each on a local broker, one after
        another for an agent's partitions).
        """
        self._epoch += 1
        for known in self._per_partition():
            known.clear()
        if self._asking is not None:
            self._asking.cancel()
        wanted = list(tps)
        self._asking = None
        if wanted and self.starts_of is not None:
            self._asking = asyncio.ensure_future(self._ask_assigned(wanted, self._epoch))

    def _per_partition(self) -> tuple[dict[Partition, Any], ...]:
        """Return every map this keeps per partition (what a revocation or assignment drops)."""
        return (
            self._next,
            self._committable,
            self._rewinding,
            self.handed,
            self._start,
            self._pinned,
        )
