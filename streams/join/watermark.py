"""How far this worker has read the corrections input, per partition: the join's watermark.

A decision or an execute counts the corrections of its plan made at or before its own time
(``PlanState.as_of``). That count is final only once the worker has processed every
correction the broker held when the event was fetched, whatever order it happens to read
two topics in. Corrections are rare, so in steady state the input is read to its end and
nothing waits.

Reading a correction made *later* than the event is not enough: event times within a
partition are not in offset order (runtimes' clocks differ, so another plan's later
correction can be read before an earlier one, and counting by event time would label an
execute ``good`` that should be ``acceptable``; RELIABILITY.md, findings behind the design).
So only offsets count.

Nor is the end the consumer last fetched: aiokafka leaves a partition with buffered
records out of its next fetch, so that end can be older than the event. An end counts for
an event only if the ListOffsets round that asked for it started after the event was
fetched, as for the consent fence: both use the shared rounds of streams/offsets/rounds.py,
one of which answers every event fetched before it.

A fetch answers the same question: each response carries the last stable offset of every
partition it asked for, and a quiet corrections partition is in every fetch to its broker. So
an end from a fetch *sent* after the event was fetched counts too (streams/offsets/fetched.py),
and a decision waits for whichever answers first, a round or the consumer's next fetch.

What the broker did not hold yet does not count: Kafka orders records within a partition
only, so a correction a runtime sent just before an execute can land just after it
(benchmarks/ordering.py). ``join.corrections_lateness`` moves the moment an end must be asked
after from the fetch to ``lateness`` past it, as Kafka Streams' ``max.task.idle.ms`` lets a
task wait for an input: every decision and execute then waits that long.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import NamedTuple

from learnstream.streams.offsets.fetched import FetchedEnds
from learnstream.streams.offsets.progress import Progress
from learnstream.streams.offsets.rounds import Rounds

__all__ = ["Ask", "Watermark"]

#: Ask the broker for the end offsets of these partitions of the corrections topic.
Ask = Callable[[list[int]], Awaitable[Mapping[int, int]]]
#: The time every part reads (agents/clock.py).
Clock = Callable[[], datetime]


class _Partition(NamedTuple):
    """A topic partition as Progress keys them (equal to the consumer's own, Faust's TP)."""

    topic: str
    partition: int


class Watermark:
    """The corrections topic's progress per partition, and who waits for it.

    Inputs are co-partitioned, so an event of partition p waits for partition p of the
    corrections topic only. ``ask`` answers ends, in shared rounds (streams/offsets/rounds.py).
    Entries waiting are completed after the next correction read (``due``) or by the next
    grace sweep, which runs every ``join.sweep_interval`` and completes whatever an answer
    has settled meanwhile. ``fetched``, when given, holds the ends the worker's own fetches
    carried (its clock and ``clock`` read the same moments).
    """

    def __init__(
        self,
        topic: str,
        progress: Progress,
        ask: Ask,
        clock: Clock,
        lateness: timedelta = timedelta(0),
        fetched: FetchedEnds[tuple[str, int]] | None = None,
    ) -> None:
        self.topic, self.progress, self.ask, self.clock = topic, progress, ask, clock
        self.fetched = fetched
        #: Corrections reaching the broker this long after an event was fetched count for it.
        self.lateness = lateness
        self.rounds: Rounds[int, datetime] = Rounds(ask, clock, "corrections watermark")
        self._read: dict[int, int] = {}
        #: partition -> plan key -> when its earliest waiting entry was fetched (or parked),
        #: in that order unless the partition is in ``_unsorted``
        self.waiting: dict[int, dict[str, datetime]] = {}
        self._unsorted: set[int] = set()
        #: partition -> the latest moment told to ``wait`` there, kept when that plan is done
        #: (a bound: no plan waiting there waits from a later one)
        self._newest: dict[int, datetime] = {}

    @property
    def failures(self) -> int:
        """Return how many end-offset rounds failed."""
        return self.rounds.failures

    def advance(self, partition: int, offset: int) -> None:
        """Note that the correction at ``offset`` was read."""
        self._read[partition] = max(self._read.get(partition, 0), offset + 1)

    async def fresh(self, partition: int, since: datetime) -> None:
        """Return once an end of ``partition`` asked for after ``since`` (and the lateness) is
        known, or the round asking for it failed (then nothing fetched after ``since``
        settles yet)."""
        since = self._counting_from(since)
        pause = (since - self.clock()).total_seconds()
        if pause > 0:  # only with a lateness: an end asked before this would not count
            await asyncio.sleep(pause)
        self.rounds.wanted.add(partition)
        for _ in range(2):  # the round in flight may not have asked for ``partition``
            if self._end(partition, since) is not None:
                return
            asked = self.rounds.after(since)
            if self.fetched is None:
                answered = await asyncio.shield(asked)
            else:  # a fetch sent after ``since`` may answer first
                moment = self._on_clock_of(self.fetched, since)
                answered = await self.fetched.or_round(asked, [self._tp(partition)], moment)
            if not answered:
                return  # the round failed (counted and logged)

    def settled(self, partition: int, since: datetime) -> bool:
        """Tell whether an event of ``partition`` fetched at ``since`` has every correction
        the broker held then (and within the lateness) read; without an end asked for after
        that, ask (in the background, once the lateness is over) and say no."""
        since = self._counting_from(since)
        self.rounds.wanted.add(partition)
        end = self._end(partition, since)
        if end is None:
            if since <= self.clock():  # a round started earlier would not count: a later look asks
                self.rounds.after(since)
            return False
        return self._read_to(partition) >= end

    def wait(self, partition: int, plan_id: str, since: datetime) -> None:
        """Remember that ``plan_id`` has an entry fetched at ``since`` waiting on ``partition``."""
        waiting = self.waiting.setdefault(partition, {})
        held, newest = waiting.get(plan_id), self._newest.get(partition, since)
        if held is not None and held <= since:
            return
        if held is not None or since < newest:  # not at the end of the moments' order
            self._unsorted.add(partition)
        waiting[plan_id] = since
        self._newest[partition] = max(since, newest)

    def done(self, partition: int, plan_id: str) -> None:
        """Forget that ``plan_id`` waits on ``partition``."""
        waiting = self.waiting.get(partition, {})
        waiting.pop(plan_id, None)
        if not waiting:
            self._newest.pop(partition, None)
            self._unsorted.discard(partition)

    def waiting_count(self) -> int:
        """Return how many plans wait, over every partition."""
        return sum(len(plans) for plans in self.waiting.values())

    def due(self, partition: int) -> list[str]:
        """Return the waiting plans of ``partition`` whose earliest entry is now settled.

        An entry fetched earlier is settled by any end that settles a later one (the same
        end, asked after both), so the settled are the oldest: they are read in the order
        of their moments, up to the first that is not. Asking every waiting plan cost ~4 µs
        each on every correction read, half of a core with thousands waiting
        (benchmarks/RESULTS.md, findings behind the design). The newest is asked too: the
        end that settles it is asked for now, as it was when every plan was asked."""
        waiting = self.waiting.get(partition)
        if not waiting:
            return []
        if partition in self._unsorted:
            self._unsorted.discard(partition)
            waiting = self.waiting[partition] = dict(sorted(waiting.items(), key=_moment))
        due = []
        for plan, since in waiting.items():
            if not self.settled(partition, since):
                self.settled(partition, self._newest[partition])
                break
            due.append(plan)
        return due

    def forget(self, partitions: Iterable[int]) -> None:
        """Drop what was known of revoked partitions (their next owner starts afresh)."""
        partitions = list(partitions)
        self.rounds.forget(partitions)
        for partition in partitions:
            self._read.pop(partition, None)
            self.waiting.pop(partition, None)
            self._newest.pop(partition, None)
            self._unsorted.discard(partition)

    def _end(self, partition: int, since: datetime) -> int | None:
        """Return an end of ``partition`` asked for after ``since``: by a round or a fetch
        (the lower, when both: either counts, and the lower settles sooner)."""
        asked = self.rounds.end(partition, since)
        if self.fetched is None:
            return asked
        tp = self._tp(partition)
        fetched = self.fetched.ends([tp], self._on_clock_of(self.fetched, since))
        if fetched is None:
            return asked
        return fetched[tp] if asked is None else min(asked, fetched[tp])

    def _on_clock_of(self, fetched: FetchedEnds[tuple[str, int]], moment: datetime) -> float:
        """Return ``moment`` on the clock ``fetched`` stamps fetches with."""
        return fetched.clock() - (self.clock() - moment).total_seconds()

    def _tp(self, partition: int) -> _Partition:
        return _Partition(self.topic, partition)

    def _counting_from(self, fetched: datetime) -> datetime:
        """Return the moment after which an end counts for an event fetched at ``fetched``."""
        return fetched + self.lateness if self.lateness else fetched

    def _read_to(self, partition: int) -> int:
        """Return how far this worker has read ``partition`` of the corrections topic."""
        tp = self._tp(partition)
        return max(
            self._read.get(partition, 0),
            self.progress.next_offset(tp) or 0,
            self.progress.committed(tp) or 0,
        )


def _moment(item: tuple[str, datetime]) -> datetime:
    return item[1]
