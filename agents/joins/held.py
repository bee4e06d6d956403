"""Table writes held in memory for a while under at_least_once, so a key changed k times in
that span costs one changelog record, not k.

A held value is safe the way a parked entry held in memory is (agents/joins/plan_join.py): the
records whose effect it carries keep their offsets *pinned* (streams/offsets/progress.py), so
no commit passes them until the value is in the table, and a kill -9 reads them again
against what the table held. ``flush`` writes the values of a partition held ``hold`` or
longer; call it while a record of that partition is processed (a sweep tick; ``put`` does it
for its own partition), as Faust sends a table write to the changelog partition of the
record under way (a key is on the same partition number in every co-partitioned topic). The
last commit before the partitions go, a rebalance's or a stopping worker's, writes everything
held first (``write_all``), so the next owner does not read those records again; a crash
loses what is held, and its records come again. Exactly-once holds nothing (no pins): a
transaction must carry every write of the records it commits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import faust
from faust.types import TP

from learnstream.agents.seams.faust_compat import (
    current_partition,
    partitioned_items,
    writing_to,
)

__all__ = ["FLUSH_STEP", "HeldWrites", "Pins"]

#: Values a ``put`` or a tick writes at most, of those held long enough. A burst of plans
#: comes due ``hold`` later all at once, and no one record should wait for all of it to be
#: written. Timed, a held value costs ~23 µs to write (a flush of 106 took 3.8 ms), so this
#: bounds a record's wait to about a millisecond; it is not what sets the latency tail
#: (benchmarks/RESULTS.md, findings behind the design). What is left waits for the next put
#: or tick (its records stay pinned).
FLUSH_STEP = 32


class Pins(Protocol):
    """Keeps commits of a partition from passing a record held in memory (Progress)."""

    def pin(self, tp: TP, offset: int) -> None: ...
    def unpin(self, tp: TP, offset: int) -> None: ...


@dataclass
class _Held:
    """A value not written yet: since when, its partition, the records pinned for it."""

    raw: Any
    since: datetime
    partition: int
    pins: list[tuple[TP, int]] = field(default_factory=list)


class HeldWrites:
    """A table seen through the values held in memory for it (``get`` reads them first)."""

    def __init__(
        self, table: faust.types.TableT[str, Any], pins: Pins | None, hold: timedelta
    ) -> None:
        self.table = table
        self.pins = pins if hold > timedelta(0) else None
        self.hold = hold
        self._held: dict[str, _Held] = {}
        #: Per partition, the held keys oldest first: (since, key).
        self._order: dict[int, deque[tuple[datetime, str]]] = {}

    @property
    def holds(self) -> bool:
        """Tell whether values may wait in memory (at_least_once with a hold)."""
        return self.pins is not None

    def get(self, key: str) -> Any:
        """Return the value held for ``key``, else the table's (None: neither)."""
        held = self._held.get(key)
        return held.raw if held is not None else self.table.get(key)

    def put(
        self, key: str, raw: Any, records: Iterable[tuple[TP, int]], now: datetime
    ) -> int | None:
        """Hold ``raw`` for ``key`` with ``records`` pinned, or write it at once when it
        cannot be held (no hold, no records, no record under way); return the partition
        it is held under (None: written). What of that partition was held long enough is
        written first: a busy partition needs no tick for it."""
        pinned, partition = list(records), current_partition()
        if self.pins is None or not pinned or partition is None:
            self.write(key, raw)
            return None
        self.flush(partition, now, FLUSH_STEP)
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = _Held(raw, now, partition)
            self._order.setdefault(partition, deque()).append((now, key))
        held.raw = raw
        for tp, offset in pinned:
            self.pins.pin(tp, offset)
            held.pins.append((tp, offset))
        return partition

    def write(self, key: str, raw: Any) -> None:
        """Write ``raw`` for ``key`` now (what was held for it is then written too)."""
        self.table[key] = raw
        self._release(key)

    def delete(self, key: str) -> None:
        """Delete ``key`` (a tombstone, if the table had it) and what is held for it."""
        self.table.pop(key, None)
        self._release(key)

    def flush(self, partition: int, now: datetime, limit: int | None = None) -> int:
        """Write the values of ``partition`` held ``hold`` or longer, oldest first and at
        most ``limit`` of them (None: all), and unpin their records; return how many were
        written."""
        order, written = self._order.get(partition), 0
        while order and now - order[0][0] >= self.hold and (limit is None or written < limit):
            since, key = order.popleft()
            held = self._held.get(key)
            if held is None or held.since != since:  # written or deleted meanwhile
                continue
            self.write(key, held.raw)
            written += 1
        return written

    def write_all(self) -> int:
        """Write every value held, each to its partition, and unpin its records (the
        last commit before the partitions go: the next owner must not read them again);
        return how many."""
        written = 0
        for partition, order in list(self._order.items()):
            held = [self._held[key] for _, key in order if key in self._held]
            if held:  # each has a record pinned: its topic is the table's source
                with writing_to(held[0].pins[0][0].topic, partition):
                    latest = max(h.since for h in held)
                    written += self.flush(partition, latest + self.hold)
        return written

    def count(self, partition: int | None = None) -> int:
        """Return how many values wait in memory (of ``partition``, or all)."""
        if partition is None:
            return len(self._held)
        return sum(1 for held in self._held.values() if held.partition == partition)

    def items(self) -> Iterator[tuple[str, Any, int | None]]:
        """Yield (key, value, partition) of every value this worker owns: those held, then
        the table's others (what an index is rebuilt from)."""
        held = {key: (h.raw, h.partition) for key, h in self._held.items()}
        for key, (raw, partition) in held.items():
            yield key, raw, partition
        for item in partitioned_items(self.table):
            if item[0] not in held:
                yield item

    def drop(self, partitions: set[int]) -> list[str]:
        """Forget what is held for revoked ``partitions``; return their keys. Their records
        were not committed past, so whoever owns them next reads them again; the pins stay
        until the next assignment (Progress drops them then)."""
        dropped = [key for key, held in self._held.items() if held.partition in partitions]
        for key in dropped:
            del self._held[key]
        for partition in partitions:
            self._order.pop(partition, None)
        return dropped

    def _release(self, key: str) -> None:
        """Forget what is held for ``key`` (written or gone) and unpin its records."""
        held = self._held.pop(key, None)
        if held is None or self.pins is None:
            return
        for tp, offset in held.pins:
            self.pins.unpin(tp, offset)
