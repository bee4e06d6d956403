"""Events parked for a key, and the index that finds them by key and by grace deadline.

A parked event is stored under its own key (:func:`entry_key`: the join key and the record's
place), so parking one event writes one changelog record and completing it one tombstone,
whatever else waits for the same plan. The index is what the worker holds in memory: the
entries by join key (a completion reads its key's entries without parsing them) and a heap of
grace deadlines per partition (a sweep pops what is due instead of scanning the table).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict

from learnstream.streams.join.outcome import Source

__all__ = [
    "ENTRY_KEY_SEPARATOR",
    "IN_MEMORY",
    "SCAN_SLICE",
    "ParkedEvent",
    "ParkedIndex",
    "Place",
    "entry_key",
    "parse_entries",
]

#: (topic, partition, offset): where a record sits, which names it once and for all.
Place = tuple[str, int, int]
#: Joins the key and the place in an entry's table key; a topic name cannot hold it.
ENTRY_KEY_SEPARATOR = "|"


class ParkedEvent(BaseModel):
    """An input record waiting for its key's state, with enough to replay or dead-letter it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    source: Source
    topic: str
    partition: int
    offset: int
    key: str | None
    raw: str
    event_time: AwareDatetime
    #: When the worker fetched it: grace counts from here, and only an end of the
    #: corrections input asked for after it can settle it (streams/join/watermark.py).
    parked_at: AwareDatetime
    #: The plan was known when the event was parked (it waited for the corrections input).
    plan_known: bool = False

    @property
    def place(self) -> Place:
        """Return where the record sits: a redelivered copy has the same place."""
        return self.topic, self.partition, self.offset

    def order(self) -> tuple[datetime, str, int, int]:
        """Return the replay order: event time, then place (ties between topics are stable)."""
        return self.event_time, self.topic, self.partition, self.offset

    def to_table(self) -> bytes:
        """Return the JSON bytes stored in the table and its changelog."""
        return self.__pydantic_serializer__.to_json(self)


def entry_key(key: str, place: Place) -> str:
    """Return the table key of the entry parked under join key ``key`` at ``place``."""
    topic, partition, offset = place
    return ENTRY_KEY_SEPARATOR.join((key, topic, str(partition), str(offset)))


def parse_entries(table_key: str, raw: object) -> tuple[str, list[ParkedEvent]]:
    """Return the join key and entries a stored ``(table key, value)`` holds.

    One entry per table key; a list under a bare join key is the layout that parked all of a
    plan's entries in one value, still read so an upgrade loses nothing.
    """
    value = orjson.loads(raw) if isinstance(raw, bytes | str) else raw
    if isinstance(value, list):
        return table_key, [ParkedEvent.model_validate(item) for item in value]
    return table_key.split(ENTRY_KEY_SEPARATOR, 1)[0], [ParkedEvent.model_validate(value)]


#: Stored values a scan of the table reads before the join hands the event loop back.
SCAN_SLICE = 2_000
#: Where an entry held in memory only is stored: nowhere (agents/joins/plan_join.py ``hold``).
IN_MEMORY = ""


class ParkedIndex:
    """Every parked entry by join key, and their grace deadlines per partition.

    The table is the truth for the entries it stores: the index is built from it once (after
    a restart or a rebalance) and then kept in step by the one writer, the join. Entries the
    join holds in memory only (table key :data:`IN_MEMORY`) are the index's alone: a
    rebalance drops them, and their records, never committed past, are read again. A
    deadline popped for a key whose entries were completed meanwhile is skipped by the
    caller (:meth:`of` is then empty).
    """

    def __init__(self) -> None:
        self.built = False
        #: the table scan under way (``start``, ``step``) and the values it could not read
        self._scan: Iterator[tuple[Any, ...]] | None = None
        self.unreadable = 0
        #: join key -> place -> (entry, the table key it is stored under)
        self._entries: dict[str, dict[Place, tuple[ParkedEvent, str]]] = {}
        self._deadlines: dict[int, list[tuple[datetime, str]]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[str]:
        """Yield every join key with an entry parked (a copy: callers may change the index)."""
        return iter(list(self._entries))

    def of(self, key: str) -> list[ParkedEvent]:
        """Return the entries parked under ``key`` (unordered)."""
        return [entry for entry, _ in self._entries.get(key, {}).values()]

    def stored_under(self, key: str, place: Place) -> str:
        """Return the table key the entry of ``key`` at ``place`` is stored under
        (:data:`IN_MEMORY`: none)."""
        held = self._entries.get(key, {}).get(place)
        return held[1] if held is not None else entry_key(key, place)

    def held(self, key: str, place: Place) -> tuple[ParkedEvent, str] | None:
        """Return the entry of ``key`` at ``place`` and where it is stored, if indexed."""
        return self._entries.get(key, {}).get(place)

    def add(
        self, key: str, entry: ParkedEvent, grace: timedelta, table_key: str | None = None
    ) -> bool:
        """Hold ``entry`` under ``key``; return False when that record is parked already.

        ``table_key``: where the table stores it (default its own :func:`entry_key`).
        """
        entries = self._entries.setdefault(key, {})
        if entry.place in entries:
            return False
        entries[entry.place] = (
            entry,
            entry_key(key, entry.place) if table_key is None else table_key,
        )
        self._count += 1
        deadlines = self._deadlines.setdefault(entry.partition, [])
        heapq.heappush(deadlines, (entry.parked_at + grace, key))
        return True

    def remove(self, key: str, places: Iterable[Place]) -> None:
        """Forget the entries of ``key`` at ``places`` (their deadlines lapse on their own)."""
        entries = self._entries.get(key)
        if entries is None:
            return
        for place in places:
            self._count -= entries.pop(place, None) is not None
        if not entries:
            del self._entries[key]

    def moved(self, key: str, place: Place, table_key: str) -> None:
        """Note that the entry of ``key`` at ``place`` is now stored under ``table_key``."""
        held = self._entries.get(key, {}).get(place)
        if held is not None:
            self._entries[key][place] = (held[0], table_key)

    def retry(self, partition: int, key: str, when: datetime) -> None:
        """Make ``key`` due again on ``partition`` at ``when`` (its sweep did not finish)."""
        heapq.heappush(self._deadlines.setdefault(partition, []), (when, key))

    def due(self, partition: int, now: datetime) -> Iterator[str]:
        """Pop and yield the keys of ``partition`` with an entry whose grace ended by ``now``."""
        deadlines = self._deadlines.get(partition)
        while deadlines and deadlines[0][0] <= now:
            yield heapq.heappop(deadlines)[1]

    def rebuild(self, items: Iterable[tuple[Any, ...]], grace: timedelta) -> int:
        """Index every entry of ``items`` (table key, stored value[, ...]) in one go.

        Return how many stored values could not be read: they are left out (one bad record
        must not stop the join of every other key).
        """
        self.start(items)
        while not self.step(SCAN_SLICE, grace):
            pass
        return self.unreadable

    def start(self, items: Iterable[tuple[Any, ...]]) -> None:
        """Forget the index and begin a scan of ``items``; ``step`` continues it."""
        self.invalidate()
        self._scan = iter(items)

    @property
    def scanning(self) -> bool:
        """Whether a scan has begun and not finished."""
        return self._scan is not None

    def step(self, count: int, grace: timedelta) -> bool:
        """Index up to ``count`` more stored values of the scan; return whether the index is
        built. A value that cannot be read is left out and counted (``unreadable``)."""
        if self._scan is None:
            return self.built
        for _ in range(count):
            item = next(self._scan, None)
            if item is None:
                self._scan, self.built = None, True
                break
            try:
                key, entries = parse_entries(item[0], item[1])
            except ValueError:
                self.unreadable += 1
                continue
            for entry in entries:
                self.add(key, entry, grace, item[0])
        return self.built

    def invalidate(self) -> None:
        """Forget everything and stop any scan: the next use rebuilds from the table (after a
        rebalance)."""
        self._entries.clear()
        self._deadlines.clear()
        self._count = 0
        self._scan = None
        self.unreadable = 0
        self.built = False
