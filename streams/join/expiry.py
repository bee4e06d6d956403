"""Which terminal plans can expire when: an in-memory index over the ``plan_state`` table.

Walking (and re-validating) the whole table on every tick would make a tick's cost grow with
the plans held, not with the plans due (benchmarks/RESULTS.md, findings behind the design).
The index keeps
one heap per partition of (terminal_since, plan_id) for terminal plans only, so a tick pops
what is due and nothing else.

It is a cache of the table, never the truth: the worker notes what it stores, a due entry is
checked against the table before anything is deleted (a plan re-opened since is skipped), and
after a rebalance the index is dropped and rebuilt from the table on the next tick, once,
since another worker may have changed the partitions this one gets back.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

import orjson

from streams.offsets.partitioner import partition_for

__all__ = ["ExpiryIndex", "partition_of", "stored_plan_id", "terminal_since"]


def partition_of(key: str, partitions: int) -> int:
    """Return the partition Kafka's default partitioner gives ``key`` (murmur2, like Java)."""
    return partition_for(key.encode(), partitions)


def _parsed(raw: bytes | Mapping[str, Any] | None) -> Mapping[str, Any]:
    return orjson.loads(raw) if isinstance(raw, bytes) else (raw or {})


def terminal_since(raw: bytes | Mapping[str, Any] | None) -> datetime | None:
    """Return when the stored plan state ``raw`` became terminal (None: not terminal)."""
    if isinstance(raw, bytes) and b'"terminal_since"' not in raw:  # most plans: no parse
        return None
    since = _parsed(raw).get("terminal_since")
    return datetime.fromisoformat(since) if isinstance(since, str) else None


def stored_plan_id(raw: bytes | Mapping[str, Any] | None) -> str | None:
    """Return the plan id as the runtime spelled it in the stored state ``raw``.

    That spelling is the input records' key, so it says which partition the state's
    changelog records went to; the table key (``plan_key``) may be a stand-in.
    """
    plan = _parsed(raw).get("snapshot", {}).get("plan", {})
    plan_id = plan.get("plan_id") if isinstance(plan, Mapping) else None
    return plan_id if isinstance(plan_id, str) else None


class ExpiryIndex:
    """Terminal plans per partition, ordered by the time they became terminal.

    Kept small, since a worker may hold a million terminal plans: one (epoch second, plan id)
    pair per entry, about 150 bytes. A plan stored again while terminal (a late correction)
    is noted again; the duplicate is harmless, the table is checked before a delete.
    """

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self.built = False
        self._heaps: dict[int, list[tuple[int, str]]] = {}

    def __len__(self) -> int:
        return sum(len(heap) for heap in self._heaps.values())

    def note(self, plan_id: str, since: datetime | None, record_key: str | None = None) -> None:
        """Note that ``plan_id`` is terminal since ``since`` (None: not terminal, ignored).

        ``record_key`` is the key of the input records that wrote the state (the runtime's
        own plan id; default ``plan_id``): its partition is the state's changelog partition.
        """
        if since is None:
            return
        partition = partition_of(record_key or plan_id, self.partitions)
        heapq.heappush(self._heaps.setdefault(partition, []), (int(since.timestamp()), plan_id))

    def rebuild(self, items: Iterable[tuple[str, Any]]) -> None:
        """Index every terminal plan of ``items`` (plan_id, stored state): one full scan."""
        self.invalidate()
        for plan_id, raw in items:
            since = terminal_since(raw)
            if since is not None:
                self.note(plan_id, since, stored_plan_id(raw))
        self.built = True

    def invalidate(self) -> None:
        """Forget everything: the next sweep rebuilds from the table (after a rebalance)."""
        self._heaps.clear()
        self.built = False

    def due(self, partition: int, now: datetime, ttl: timedelta) -> Iterator[str]:
        """Pop and yield the plan ids of ``partition`` terminal for ``ttl`` or longer.

        Whole seconds: a plan may come out up to a second early, so the caller checks the
        stored state (``plan_state.expired``) before it deletes anything.
        """
        heap = self._heaps.get(partition)
        limit = (now - ttl).timestamp()
        while heap and heap[0][0] <= limit:
            yield heapq.heappop(heap)[1]
