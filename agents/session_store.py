"""The ``map_sessions`` table: MAP session states, and when each goes quiet.

The join's key space for sessions (agents/plan_join.py :class:`KeySpace`): the state of a
session under its join key (``session:<id>``), and an in-memory index of when each session was
last heard of, so a tick pops the sessions that went quiet instead of scanning the table. The
index is a cache: after a rebalance it is rebuilt from the table on the next tick, and the
join's ``expire`` hook checks the state itself before anything ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import orjson
from faust.types import TableT

from streams.join.expiry import ExpiryIndex
from streams.join.sessions import SessionState

__all__ = ["SessionStore"]


def _touched_at(raw: Any) -> datetime | None:
    touched = orjson.loads(raw).get("touched_at") if raw else None
    return datetime.fromisoformat(touched) if isinstance(touched, str) else None


def _session_id(raw: Any) -> str | None:
    session = orjson.loads(raw).get("session_id") if raw else None
    return session if isinstance(session, str) else None


class SessionStore:
    """Read, write and delete session states; pop the sessions quiet for ``timeout``."""

    def __init__(self, table: TableT[str, Any], partitions: int, timeout: timedelta) -> None:
        self.table = table
        self.timeout = timeout
        self.quiet = ExpiryIndex(partitions)

    def get(self, key: str) -> SessionState | None:
        """Return the state of the session ``key``, if the table holds one."""
        raw = self.table.get(key)
        return SessionState.from_table(raw) if raw else None

    def store(self, key: str, state: SessionState) -> bool:
        """Write ``state`` and note when it goes quiet; return whether it wrote."""
        raw = state.to_table()
        if self.table.get(key) == raw:
            return False
        self.table[key] = raw
        # the records' key (the runtime's session id) says the partition the state is on
        self.quiet.note(key, state.touched_at, state.session_id)
        return True

    def forget(self, key: str) -> None:
        """Delete the session ``key`` (a tombstone in the changelog)."""
        self.table.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self.table.get(key))

    def due(self, partition: int, now: datetime) -> Iterable[str]:
        """Pop the sessions of ``partition`` last heard of ``timeout`` ago (or longer)."""
        if not self.quiet.built:  # first tick, or after a rebalance: one scan of the table
            self.quiet.rebuild(self.table.items(), _touched_at, _session_id)
        return list(dict.fromkeys(self.quiet.due(partition, now, self.timeout)))

    def retry(self, partition: int, keys: Iterable[str]) -> None:
        """Make popped sessions due again on the next tick."""
        self.quiet.retry(partition, keys)

    def invalidate(self) -> None:
        """Forget the index (partitions were revoked): rebuilt on the next tick."""
        self.quiet.invalidate()
