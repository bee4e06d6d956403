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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime

import faust
from faust.types import TP

from streams.progress import Progress

__all__ = ["Watermark"]

log = logging.getLogger("learnstream")

EndOffset = Callable[[TP], int | None]


class Watermark:
    """The corrections topic's progress per partition, and who waits for it.

    ``end_offset`` gives a partition's end as the consumer last fetched it (None: unknown,
    so not read to its end). Inputs are co-partitioned, so an event of partition p waits
    for partition p of the corrections topic only.
    """

    def __init__(self, topic: str, progress: Progress, end_offset: EndOffset) -> None:
        self.topic = topic
        self.progress = progress
        self.end_offset = end_offset
        self._time: dict[int, datetime] = {}
        self._read: dict[int, int] = {}
        #: partition -> plan key -> earliest time of its entries parked until this input
        #: is read past them (this process's; the sweeper finds those of an earlier one)
        self.waiting: dict[int, dict[str, datetime]] = {}

    def advance(self, partition: int, offset: int, at: datetime | None) -> None:
        """Note that the correction at ``offset`` (made at ``at``, if known) was read."""
        self._read[partition] = max(self._read.get(partition, 0), offset + 1)
        if at is not None and (partition not in self._time or at > self._time[partition]):
            self._time[partition] = at

    def settled(self, partition: int, moment: datetime) -> bool:
        """Tell whether every correction of ``partition`` made at or before ``moment`` is read:
        only when every correction the broker holds is (see the module docstring)."""
        del moment  # event times are not in offset order: they cannot settle anything
        return self.read_to_end(partition)

    def read_to_end(self, partition: int) -> bool:
        """Tell whether this worker has processed every correction the broker holds."""
        tp = TP(self.topic, partition)
        end = self.end_offset(tp)
        if end is None:
            return False
        read = max(
            self._read.get(partition, 0),
            self.progress.next_offset(tp) or 0,
            self.progress.committed(tp) or 0,
        )
        return read >= end

    def wait(self, partition: int, plan_id: str, at: datetime) -> None:
        """Remember that ``plan_id`` has an entry made at ``at`` waiting on ``partition``."""
        waiting = self.waiting.setdefault(partition, {})
        waiting[plan_id] = min(at, waiting.get(plan_id, at))

    def done(self, partition: int, plan_id: str) -> None:
        """Forget that ``plan_id`` waits on ``partition``."""
        self.waiting.get(partition, {}).pop(plan_id, None)

    def due(self, partition: int) -> list[str]:
        """Return the waiting plans of ``partition`` whose earliest entry is now settled."""
        waiting = self.waiting.get(partition)
        if not waiting:
            return []
        return list(waiting) if self.read_to_end(partition) else []

    def forget(self, partitions: Iterable[int]) -> None:
        """Drop what was known of revoked partitions (their next owner starts afresh)."""
        for partition in partitions:
            self._time.pop(partition, None)
            self._read.pop(partition, None)
            self.waiting.pop(partition, None)


def consumer_end_offset(app: faust.App) -> EndOffset:
    """Return a lookup of a partition's end from ``app``'s consumer (None when unknown)."""

    def end_offset(tp: TP) -> int | None:
        try:  # before the first fetch, or for a partition not (yet) assigned: unknown
            end = app.consumer.highwater(tp)
        except Exception:  # noqa: BLE001
            return None
        return end if isinstance(end, int) else None

    return end_offset
