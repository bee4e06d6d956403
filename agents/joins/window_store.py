"""A key space's table of windowed states (MAP sessions, runs), and when each goes quiet.

The join's key spaces beside plans (agents/joins/plan_join.py :class:`KeySpace`): the state of a
key (``session:<id>``, ``run:<kind>:<id>``) in its table, and an in-memory index of when each
was last heard of, so a tick pops the keys that went quiet instead of scanning the table. The
index is a cache: after a rebalance it is rebuilt from the table, ``SCAN_STEP`` states a
tick, each key under the partition that holds it; the join's ``expire`` hook checks the state
itself before anything ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from faust.types import TableT

from learnstream.agents.seams.faust_compat import current_partition, partitioned_items
from learnstream.streams.join.expiry import SCAN_SLICE, ExpiryIndex

__all__ = ["SCAN_STEP", "WindowState", "WindowStore"]

#: States a tick indexes at most while the index is rebuilt (a few tens of milliseconds).
SCAN_STEP = 4 * SCAN_SLICE

log = logging.getLogger("learnstream")


class WindowState(Protocol):
    """What the store needs of a state: its JSON form, when it was last heard of, and the
    key of the records that wrote it (their partition is the state's)."""

    @property
    def touched_at(self) -> datetime: ...

    @property
    def record_key(self) -> str: ...

    def to_table(self) -> bytes: ...


class WindowStore:
    """Read, write and delete a key space's states; pop the keys quiet for ``timeout``."""

    def __init__(
        self,
        table: TableT[str, Any],
        partitions: int,
        timeout: timedelta,
        parse: Callable[[bytes], WindowState],
    ) -> None:
        self.table = table
        self.timeout = timeout
        self.parse = parse
        self.quiet = ExpiryIndex(partitions)
        #: The minute each key was last noted in ``quiet`` under: a key is noted again only
        #: when its minute moves, not on every event of a long session.
        self._noted: dict[str, int] = {}
        self._unreadable = 0  # states the rebuild under way could not read

    def get(self, key: str) -> WindowState | None:
        """Return the state of ``key``, if the table holds one."""
        raw = self.table.get(key)
        return self.parse(raw) if raw else None

    def store(self, key: str, state: WindowState) -> bool:
        """Write ``state`` and note when it goes quiet; return whether it wrote."""
        raw = state.to_table()
        if self.table.get(key) == raw:
            return False
        self.table[key] = raw
        minute = self.quiet.bucket_of(state.touched_at)
        if self._noted.get(key) != minute:
            self._noted[key] = minute
            self.quiet.note(key, state.touched_at, state.record_key, current_partition())
        return True

    def forget(self, key: str) -> None:
        """Delete ``key`` (a tombstone in the changelog)."""
        self.table.pop(key, None)
        self._noted.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self.table.get(key))

    def due(self, partition: int, now: datetime) -> Iterable[str]:
        """Pop the keys of ``partition`` last heard of ``timeout`` ago (or longer)."""
        if not self.quiet.built:  # first tick, or after a rebalance: a scan of the table
            self._rebuild()
        due = []
        for key in dict.fromkeys(self.quiet.due(partition, now, self.timeout)):
            state = self._read(key)
            if state is not None and now - state.touched_at >= self.timeout:
                due.append(key)  # else gone, or heard of since: noted again under that minute
                self._noted.pop(key, None)  # a key stored again is noted again
        return due

    def _read(self, key: str) -> WindowState | None:
        """Return the state of ``key``; one that cannot be read is logged, and None."""
        try:
            return self.get(key)
        except ValueError:
            log.error("join: the state under %s cannot be read, left as it is", key)
            return None

    def _rebuild(self) -> None:
        """Go on indexing the states the table holds, ``SCAN_STEP`` of them a tick (a tick
        must not hold the event loop for a whole table); one that cannot be read is left out
        and counted in the log (it would otherwise stop every sweep of the worker)."""
        if not self.quiet.scanning:
            self._noted.clear()
            self._unreadable = 0
            self.quiet.start(partitioned_items(self.table), self._entry)
        if self.quiet.step(SCAN_STEP) and self._unreadable:
            log.error("join: %d states of a key space cannot be read, left out", self._unreadable)

    def _entry(self, raw: Any) -> tuple[datetime, str | None] | None:
        try:
            state = self.parse(raw)
        except ValueError:
            self._unreadable += 1
            return None
        return state.touched_at, state.record_key

    def retry(self, partition: int, keys: Iterable[str]) -> None:
        """Make popped keys due again on the next tick."""
        self.quiet.retry(partition, keys)

    def invalidate(self) -> None:
        """Forget the index (partitions were revoked): rebuilt on the next tick."""
        self.quiet.invalidate()
        self._noted.clear()
