"""How far this worker has read the corrections input, per partition: the join's watermark.

A decision or an execute counts the corrections of its plan made at or before its own time
(``PlanState.as_of``). That count is final only once the worker has processed every
correction the broker held when the event was fetched, whatever order it happens to read
two topics in. Corrections are rare, so in steady state the input is read to its end and
nothing waits.

Reading a correction made *later* than the event is not enough: event times within a
partition are not in offset order (runtimes' clocks differ, and a kill -9 run caught an
execute labelled ``good`` because another plan's later correction had been read before its
own earlier one). So only offsets count.

Nor is the end the consumer last fetched: aiokafka leaves a partition with buffered
records out of its next fetch, so that end can be older than the event (a kill -9 run
caught an execute labelled ``good`` that way too). An end counts for an event only if the
ListOffsets round that asked for it started after the event was fetched, as the consent
fence's do (streams/fence.py). Rounds are shared: one answers every event fetched before it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime

from faust.types import TP

from agents.emitter import now
from streams.progress import Progress

__all__ = ["Ask", "Watermark"]

log = logging.getLogger("learnstream")

#: Ask the broker for the end offsets of these partitions of the corrections topic.
Ask = Callable[[list[int]], Awaitable[dict[int, int]]]


async def _unwired(partitions: list[int]) -> dict[int, int]:
    raise RuntimeError("no end-offset asker is wired to the corrections watermark")


class Watermark:
    """The corrections topic's progress per partition, and who waits for it.

    Inputs are co-partitioned, so an event of partition p waits for partition p of the
    corrections topic only. ``ask`` answers ends. Entries waiting are completed after the
    next correction read (``due``) or by the next grace sweep, which runs every
    ``join.sweep_interval`` and completes whatever an answer has settled meanwhile.
    """

    def __init__(self, topic: str, progress: Progress, ask: Ask = _unwired) -> None:
        self.topic, self.progress, self.ask = topic, progress, ask
        self.failures = 0  # rounds that failed
        self._read: dict[int, int] = {}
        self._wanted: set[int] = set()  # partitions rounds ask for
        self._ends: dict[int, tuple[datetime, int]] = {}  # partition -> (round start, end)
        self._rounds: dict[datetime, asyncio.Task[bool]] = {}  # in flight, by start
        #: partition -> plan key -> when its earliest waiting entry was fetched (or parked)
        self.waiting: dict[int, dict[str, datetime]] = {}

    def advance(self, partition: int, offset: int) -> None:
        """Note that the correction at ``offset`` was read."""
        self._read[partition] = max(self._read.get(partition, 0), offset + 1)

    async def fresh(self, partition: int, since: datetime) -> None:
        """Return once an end of ``partition`` asked for after ``since`` is known, or the
        round asking for it failed (then nothing fetched after ``since`` settles yet)."""
        self._wanted.add(partition)
        for _ in range(2):  # the round in flight may not have asked for ``partition``
            if self._known_since(partition, since):
                return
            if not await asyncio.shield(self._round_after(since)):
                return  # the round failed (counted and logged)

    def settled(self, partition: int, since: datetime) -> bool:
        """Tell whether an event of ``partition`` fetched at ``since`` has every correction
        the broker held then read; without an end asked for after ``since``, ask (in the
        background) and say no."""
        self._wanted.add(partition)
        if not self._known_since(partition, since):
            self._round_after(since)
            return False
        return self._read_to(partition)

    def wait(self, partition: int, plan_id: str, since: datetime) -> None:
        """Remember that ``plan_id`` has an entry fetched at ``since`` waiting on ``partition``."""
        waiting = self.waiting.setdefault(partition, {})
        waiting[plan_id] = min(since, waiting.get(plan_id, since))

    def done(self, partition: int, plan_id: str) -> None:
        """Forget that ``plan_id`` waits on ``partition``."""
        self.waiting.get(partition, {}).pop(plan_id, None)

    def due(self, partition: int) -> list[str]:
        """Return the waiting plans of ``partition`` whose earliest entry is now settled."""
        waiting = self.waiting.get(partition, {})
        return [plan for plan, since in waiting.items() if self.settled(partition, since)]

    def forget(self, partitions: Iterable[int]) -> None:
        """Drop what was known of revoked partitions (their next owner starts afresh)."""
        for partition in partitions:
            self._read.pop(partition, None)
            self._wanted.discard(partition)
            self._ends.pop(partition, None)
            self.waiting.pop(partition, None)

    def _known_since(self, partition: int, since: datetime) -> bool:
        known = self._ends.get(partition)
        return known is not None and known[0] > since

    def _read_to(self, partition: int) -> bool:
        """Tell whether this worker has read up to the newest end it was told of."""
        tp = TP(self.topic, partition)
        read = max(
            self._read.get(partition, 0),
            self.progress.next_offset(tp) or 0,
            self.progress.committed(tp) or 0,
        )
        return read >= self._ends[partition][1]

    def _round_after(self, since: datetime) -> asyncio.Task[bool]:
        """Return a round in flight that started after ``since``, or start one."""
        for started, task in self._rounds.items():
            if started > since:
                return task
        started = now()
        task = asyncio.ensure_future(self._round(started))
        self._rounds[started] = task
        return task

    async def _round(self, started: datetime) -> bool:
        """Ask for the wanted partitions' ends; say whether the broker answered."""
        partitions = sorted(self._wanted)
        try:
            ends = await self.ask(partitions)
        except Exception as exc:  # noqa: BLE001  (the waiters keep waiting; grace bounds it)
            self.failures += 1
            log.warning("corrections watermark: end offsets unavailable (%s)", type(exc).__name__)
            return False
        finally:
            self._rounds.pop(started, None)
        for partition, end in ends.items():
            known = self._ends.get(partition)
            if known is None or known[0] < started:
                self._ends[partition] = (started, end)
        return True
