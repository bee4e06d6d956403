"""Which terminal plans can expire when: an in-memory index over the ``plan_state`` table.

Walking (and re-validating) the whole table on every tick would make a tick's cost grow with
the plans held, not with the plans due (benchmarks/RESULTS.md, findings behind the design).
The index keeps the terminal plans only, per partition and minute they became terminal, so a
tick pops what is due and nothing else.

It is a cache of the table, never the truth: the worker notes what it stores, a due entry is
checked against the table before anything is deleted (a plan re-opened since is skipped), and
after a rebalance the index is dropped and rebuilt from the table, since another worker may
have changed the partitions this one gets back.

A rebuild scans the whole table, which at millions of plans takes minutes (benchmarks/
RESULTS.md, memory): far longer than a consumer's session timeout if it held the event loop.
So the sweeper scans in slices (``scan``): each tick continues the scan for a bounded time,
handing the loop back between slices of ``SCAN_SLICE`` entries, and pops what is already
known to be due meanwhile. Plans stored while a scan runs are noted as usual; one seen twice
is harmless.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

import orjson

from learnstream.streams.offsets.partitioner import partition_for

__all__ = [
    "EXPIRY_BUCKET",
    "SCAN_SLICE",
    "ExpiryIndex",
    "partition_of",
    "stored_plan_id",
    "terminal_entry",
    "terminal_since",
]

#: Terminal plans are indexed by the minute they became terminal: they expire up to that late.
EXPIRY_BUCKET = timedelta(minutes=1)
#: Table entries a scan reads before it hands the event loop back (about 25 ms of parsing).
SCAN_SLICE = 2_000

#: What a scan reads of one stored value: (since when it is due-able, its record key), or None.
Entry = tuple[datetime, str | None] | None


def partition_of(key: str, partitions: int) -> int:
    """Return the partition Kafka's default partitioner gives ``key`` (murmur2, like Java)."""
    return partition_for(key.encode(), partitions)


def _parsed(raw: bytes | Mapping[str, Any] | None) -> Mapping[str, Any]:
    return orjson.loads(raw) if isinstance(raw, bytes) else (raw or {})


def terminal_since(raw: bytes | Mapping[str, Any] | None) -> datetime | None:
    """Return when the stored plan state ``raw`` became terminal (None: not terminal)."""
    entry = terminal_entry(raw)
    return entry[0] if entry is not None else None


def terminal_entry(raw: bytes | Mapping[str, Any] | None) -> Entry:
    """Return (terminal since, runtime plan id) of the stored plan state ``raw``, or None if
    it is not terminal; the value is parsed once (a rebuild reads millions)."""
    if isinstance(raw, bytes) and b'"terminal_since"' not in raw:  # most plans: no parse
        return None
    parsed = _parsed(raw)
    since = parsed.get("terminal_since")
    if not isinstance(since, str):
        return None
    return datetime.fromisoformat(since), stored_plan_id(parsed)


def stored_plan_id(raw: bytes | Mapping[str, Any] | None) -> str | None:
    """Return the plan id as the runtime spelled it in the stored state ``raw``.

    That spelling is the input records' key, so it says which partition the state's
    changelog records went to; the table key (``plan_key``) may be a stand-in.
    """
    plan = _parsed(raw).get("snapshot", {}).get("plan", {})
    plan_id = plan.get("plan_id") if isinstance(plan, Mapping) else None
    return plan_id if isinstance(plan_id, str) else None


class ExpiryIndex:
    """Terminal plans per partition, in buckets of the minute they became terminal.

    A worker may hold millions of terminal plans, so an entry is the plan id's 16 bytes in
    its bucket's byte string (table keys are UUIDs, ``canonical_id``), about 20 bytes with
    the bucket's share; an id that is no UUID is kept as text. A bucket comes due only once
    every plan in it has outlived the ttl, so a plan expires up to a bucket late, never early.
    A plan stored again while terminal (a late correction) is noted again; the duplicate is
    harmless, the table is checked before a delete.
    """

    def __init__(self, partitions: int, bucket: timedelta = EXPIRY_BUCKET) -> None:
        self.partitions = partitions
        self.bucket = int(bucket.total_seconds())
        self.built = False
        #: the table scan under way (``scan``), and how it reads one stored value
        self._scan: Iterator[tuple[Any, ...]] | None = None
        self._read: Callable[[Any], Entry] = terminal_entry
        #: partition -> bucket number -> packed UUIDs; ids that are no UUID, as text
        self._buckets: dict[int, dict[int, bytearray]] = {}
        self._texts: dict[int, dict[int, list[str]]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def note(
        self,
        plan_id: str,
        since: datetime | None,
        record_key: str | None = None,
        partition: int | None = None,
    ) -> None:
        """Note that ``plan_id`` is terminal since ``since`` (None: not terminal, ignored).

        ``partition`` is the one that holds the state (the partition of the record that
        wrote it). Unknown (None), it is guessed from ``record_key``, the key of the input
        records that wrote the state (the runtime's own plan id; default ``plan_id``), as
        Kafka's default partitioner places it.
        """
        if since is None:
            return
        if partition is None:
            partition = partition_of(record_key or plan_id, self.partitions)
        self._add(partition, self.bucket_of(since), plan_id)

    def bucket_of(self, since: datetime) -> int:
        """Return the bucket a plan terminal since ``since`` is noted in."""
        return int(since.timestamp()) // self.bucket

    def retry(self, partition: int, plan_ids: Iterable[str]) -> None:
        """Make ``plan_ids`` of ``partition`` due at once again (popped, but not dealt with)."""
        for plan_id in plan_ids:
            self._add(partition, 0, plan_id)  # bucket 0: the epoch's, due on every tick

    def _add(self, partition: int, number: int, plan_id: str) -> None:
        packed = _packed(plan_id)
        if packed is None:
            self._texts.setdefault(partition, {}).setdefault(number, []).append(plan_id)
        else:
            self._buckets.setdefault(partition, {}).setdefault(number, bytearray()).extend(packed)
        self._count += 1

    def rebuild(
        self, items: Iterable[tuple[Any, ...]], read: Callable[[Any], Entry] = terminal_entry
    ) -> None:
        """Index every entry of ``items`` (key, stored value[, partition that holds it]) in
        one go (small tables, tests).

        ``read`` says what a stored value means (default: a plan state, ``terminal_entry``;
        a MAP session's quiet time and id: agents/joins/window_store.py)."""
        self.start(items, read)
        while not self.step(SCAN_SLICE):
            pass

    def start(
        self, items: Iterable[tuple[Any, ...]], read: Callable[[Any], Entry] = terminal_entry
    ) -> None:
        """Forget the index and begin a scan of ``items``; ``step`` or ``scan`` continue it."""
        self.invalidate()
        self._scan, self._read = iter(items), read

    @property
    def scanning(self) -> bool:
        """Whether a scan has begun and not finished."""
        return self._scan is not None

    def step(self, count: int) -> bool:
        """Index up to ``count`` more entries of the scan; return whether the index is built."""
        if self._scan is None:
            return self.built
        read, note = self._read, self.note
        for _ in range(count):
            try:
                item = next(self._scan, None)
            except Exception:  # a read the store failed: scan again from the start next time
                self.invalidate()
                raise
            if item is None:
                self._scan, self.built = None, True
                break
            entry = read(item[1])
            if entry is not None:  # (key, value) or (key, value, partition that holds it)
                note(item[0], entry[0], entry[1], item[2] if len(item) > 2 else None)
        return self.built

    async def scan(self, budget: float, clock: Callable[[], float] = time.monotonic) -> bool:
        """Continue the scan for about ``budget`` seconds, handing the loop back after each
        slice; return whether the index is built. A rebalance (``invalidate``) ends it."""
        deadline = clock() + budget
        while not self.step(SCAN_SLICE) and self._scan is not None:
            await asyncio.sleep(0)  # other agents' records, heartbeats, the web server
            if self._scan is None or clock() >= deadline:
                break
        return self.built

    def invalidate(self) -> None:
        """Forget everything and stop any scan: the next sweep rebuilds from the table (after
        a rebalance; the scan's iterator may belong to partitions this worker lost)."""
        self._scan = None
        self._buckets.clear()
        self._texts.clear()
        self._count = 0
        self.built = False

    def drop(self, partition: int) -> None:
        """Forget what is noted for ``partition`` (revoked: what it holds goes with it)."""
        packed, texts = self._buckets.pop(partition, {}), self._texts.pop(partition, {})
        self._count -= sum(len(ids) // 16 for ids in packed.values())
        self._count -= sum(len(ids) for ids in texts.values())

    def due(self, partition: int, now: datetime, ttl: timedelta) -> Iterator[str]:
        """Pop and yield the plan ids of ``partition`` whose whole bucket outlived ``ttl``.

        Buckets come out oldest first; within one, in the order the plans were noted.
        """
        last = int((now - ttl).timestamp()) // self.bucket - 1  # the newest bucket wholly due
        packed, texts = self._buckets.get(partition, {}), self._texts.get(partition, {})
        for number in sorted(n for n in {*packed, *texts} if n <= last):
            ids = packed.pop(number, bytearray())
            for start in range(0, len(ids), 16):
                self._count -= 1
                yield str(uuid.UUID(bytes=bytes(ids[start : start + 16])))
            for plan_id in texts.pop(number, []):
                self._count -= 1
                yield plan_id


def _packed(plan_id: str) -> bytes | None:
    """Return the 16 bytes of ``plan_id`` if it is a UUID in its canonical text, else None."""
    try:
        parsed = uuid.UUID(plan_id)
    except ValueError:
        return None
    return parsed.bytes if str(parsed) == plan_id else None
