"""Table writes held in memory until the next flush: a key written k times between two
flushes is one changelog record (write-behind).

Faust writes a changelog record on every table change. The join changes a few keys many
times per commit interval (a plan's state per record of the plan, a parked entry written and
deleted once its plan comes), so most of those records are overwritten before anyone reads
them. :class:`BufferedTable` keeps the latest value (or the deletion) of each key written since
the last flush, by the source partition whose record wrote it; every read sees it first.

:class:`WriteBehind` flushes every buffered writer of the worker together, one partition at a
time: after a record of that partition once ``windows.flush_interval`` has passed since its
last flush (so an idle partition's sweeper tick flushes it too), and every partition when a
commit starts (``Progress.hold``: before the commit picks its offsets). A partition's offsets
are committed only as far as its last flush (``Progress.release``), so a kill -9 replays the
records whose writes were still in memory, as it replays the quality windows' counts; under
exactly_once the flush's changelog records ride in the transaction that commits the offsets.
When the producer is stopping, nothing is flushed and nothing more released: the next owner
of the partitions replays those records.

Flushing early is always safe (it is what writing at once did); only committing past an
unflushed write would lose it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from faust.streams import current_event
from faust.types import EventT
from faust.types.tables import TableT

from learnstream.agents.faust_compat import partitioned_items, processing
from learnstream.streams.offsets.progress import Progress

__all__ = ["BufferedTable", "WriteBehind", "Writer"]

_DELETED = object()  # the buffered value of a key deleted since the last flush
_ABSENT = object()


class Writer(Protocol):
    """State held in memory per source partition until it is flushed."""

    def partitions(self) -> set[int]:
        """Return the partitions with writes not flushed yet."""
        ...

    def flush(self, partition: int) -> None:
        """Write what is held for ``partition`` to the tables (their changelogs)."""
        ...

    def forget(self, partitions: set[int]) -> None:
        """Drop what is held for revoked ``partitions``: their records are replayed."""
        ...


class BufferedTable:
    """A Faust table whose writes wait in memory until :meth:`flush`; reads see them first.

    Every write must happen in the stream iteration of a record (as Faust's own writes): the
    record's partition is where the key's changelog record goes, and the record is the
    context the flush writes in.
    """

    def __init__(self, table: TableT[Any, Any]) -> None:
        self.table = table
        self._held: dict[Any, Any] = {}  # key -> latest value, or _DELETED
        self._keys: dict[int, set[Any]] = {}  # partition -> keys held for it
        self._partition_of: dict[Any, int] = {}  # key -> the partition it is held for
        self._events: dict[int, EventT[Any]] = {}  # partition -> a record that wrote it

    def get(self, key: Any, default: Any = None) -> Any:
        """Return the value of ``key``: the one held, else the table's."""
        held = self._held.get(key, _ABSENT)
        if held is _ABSENT:
            return self.table.get(key, default)
        return default if held is _DELETED else held

    def __contains__(self, key: object) -> bool:
        held = self._held.get(key, _ABSENT)
        return key in self.table if held is _ABSENT else held is not _DELETED

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        self._hold(key, value)

    def pop(self, key: Any, default: Any = None) -> Any:
        """Delete ``key`` (a tombstone at the flush, if the table holds it); return its value."""
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            return default
        self._hold(key, _DELETED)
        return value

    def items(self) -> Iterator[tuple[Any, Any]]:
        """Yield every (key, value) as reads see them: the table's, with what is held over it."""
        held = dict(self._held)
        for key, value in self.table.items():
            if key not in held:
                yield key, value
        for key, value in held.items():
            if value is not _DELETED:
                yield key, value

    def partitioned(self) -> Iterator[tuple[Any, Any, int | None]]:
        """Yield (key, value, partition) as :func:`partitioned_items` does for the table,
        with what is held over it (each held key under the partition it is held for)."""
        held = dict(self._held)
        for key, value, partition in partitioned_items(self.table):
            if key not in held:
                yield key, value, partition
        for key, value in held.items():
            if value is not _DELETED:
                yield key, value, self._partition_of.get(key)

    def partitions(self) -> set[int]:
        return set(self._keys)

    def flush(self, partition: int) -> None:
        """Write each key held for ``partition`` once (its latest value, or its deletion)."""
        keys, event = self._keys.pop(partition, set()), self._events.pop(partition, None)
        if not keys or event is None:
            return
        with processing(event):
            for key in keys:
                value = self._held.pop(key, _ABSENT)
                if value is _ABSENT:  # flushed with another partition's keys already
                    continue
                self._partition_of.pop(key, None)
                if value is _DELETED:
                    self.table.pop(key, None)  # no tombstone for a key it never held
                else:
                    self.table[key] = value

    def forget(self, partitions: set[int]) -> None:
        for partition in partitions:
            for key in self._keys.pop(partition, set()):
                self._held.pop(key, None)
                self._partition_of.pop(key, None)
            self._events.pop(partition, None)

    def _hold(self, key: Any, value: Any) -> None:
        event = current_event()
        if event is None:  # as Faust itself refuses
            raise RuntimeError("Cannot modify table outside of agent/stream.")
        partition = event.message.partition
        self._held[key] = value
        self._keys.setdefault(partition, set()).add(key)
        self._partition_of[key] = partition
        self._events[partition] = event


@dataclass
class WriteBehind:
    """Every buffered writer of the worker, flushed together one partition at a time, so
    a partition's offsets are released only past what all of them wrote."""

    progress: Progress
    #: Seconds between flushes of a partition (``windows.flush_interval``).
    flush_interval: float
    #: Tell whether the producer is stopping: what a flush wrote would not be sent.
    stopping: Callable[[], bool]
    writers: list[Writer] = field(default_factory=list)
    #: Seconds for flush intervals (monotonic).
    clock: Callable[[], float] = time.monotonic
    _flushed: dict[int, float] = field(default_factory=dict)  # partition -> last flush

    def add(self, writer: Writer) -> None:
        """Flush ``writer`` with the others from now on; commits wait for the flushes."""
        if not self.writers:
            self.progress.hold(self.flush_all)
        self.writers.append(writer)

    def after_record(self, event: EventT[Any]) -> None:
        """Flush the record's partition if ``flush_interval`` passed since its last flush."""
        partition, moment = event.message.partition, self.clock()
        if moment - self._flushed.setdefault(partition, moment) >= self.flush_interval:
            self.flush(partition, moment)

    def flush(self, partition: int, moment: float) -> None:
        """Flush ``partition`` in every writer; release its offsets."""
        for writer in self.writers:
            writer.flush(partition)
        self._flushed[partition] = moment
        self.progress.release(partition)

    def flush_all(self) -> None:
        """Flush every partition (a commit starts); skipped when the producer is stopping.

        A stopping producer buffer would not send the changelog records any more: the
        writes stay unwritten, and the offsets uncommitted, so the next owner replays them.
        """
        if self.stopping():
            return
        moment = self.clock()
        for partition in sorted(set().union(*(w.partitions() for w in self.writers))):
            self.flush(partition, moment)
        self.progress.release_all()

    def forget(self, partitions: set[int]) -> None:
        """Drop what is held for revoked ``partitions`` (Faust committed what it could)."""
        for writer in self.writers:
            writer.forget(partitions)
        for partition in partitions:
            self._flushed.pop(partition, None)
