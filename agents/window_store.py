"""A key space's table of windowed states (MAP sessions, runs), and when each goes quiet.

The join's key spaces beside plans (agents/plan_join.py :class:`KeySpace`): the state of a
key (``session:<id>``, ``run:<kind>:<id>``) in its table, and an in-memory index of when each
was last heard of, so a tick pops the keys that went quiet instead of scanning the table. The
index is a cache: after a rebalance it is rebuilt from the table on the next tick, and the
join's ``expire`` hook checks the state itself before anything ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from faust.types import TableT

from streams.join.expiry import ExpiryIndex

__all__ = ["WindowState", "WindowStore"]


class WindowState(Protocol):
    """What the store needs of a state: its JSON form, when it was last heard of, and the
    key of the records that wrote it (their partition is the state's)."""

    @property
    def touched_at(self) -> datetime: ...

    @property
    def record_key(self) -> str: ...

    def to_table(self) -> bytes: ...


def _touched_at(state: WindowState) -> datetime:
    return state.touched_at


def _record_key(state: WindowState) -> str:
    return state.record_key


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
        self.quiet.note(key, state.touched_at, state.record_key)
        return True

    def forget(self, key: str) -> None:
        """Delete ``key`` (a tombstone in the changelog)."""
        self.table.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self.table.get(key))

    def due(self, partition: int, now: datetime) -> Iterable[str]:
        """Pop the keys of ``partition`` last heard of ``timeout`` ago (or longer)."""
        if not self.quiet.built:  # first tick, or after a rebalance: one scan of the table
            items = ((key, self.parse(raw)) for key, raw in self.table.items() if raw)
            self.quiet.rebuild(items, _touched_at, _record_key)
        return list(dict.fromkeys(self.quiet.due(partition, now, self.timeout)))

    def retry(self, partition: int, keys: Iterable[str]) -> None:
        """Make popped keys due again on the next tick."""
        self.quiet.retry(partition, keys)

    def invalidate(self) -> None:
        """Forget the index (partitions were revoked): rebuilt on the next tick."""
        self.quiet.invalidate()
