"""Preload the memory suite through the ``plan_state`` changelog (``--preload changelog``).

A worker takes about 965 plans/s through the ``plans`` topic, so 10M plans would take about
three hours. This writes, instead, the records a worker would have written to its
``plan_state`` table changelog for those plans, and the worker restores its table from them:

* topic ``<app id>-plan_state-changelog`` (Faust's name for the table's changelog; the bench
  sets the app id per run, benchmarks/context.py), compacted, as many partitions as the input
  topics (streams/io/tables.py declares every table with the input topics' partition count);
* key: the table key, ``plan_key(plan_id)``, as JSON (``"<uuid>"``, quotes included: Faust
  serializes a table's keys with its ``json`` codec, whatever the app's key serializer);
* value: ``PlanState.to_table()``, the JSON bytes PlanStore stores (agents/joins/planstore.py);
* partition: Faust writes a changelog record to the partition of the input record being
  processed, and the runtime keys a plan snapshot by its plan id: Kafka's default partitioner
  of that key (streams/offsets/partitioner.py), as the sweeper's expiry index assumes.

Values come from a few hundred real PlanStates, each built by the project's own code from a
``plan_records`` snapshot (decode_plan, merge_snapshot), then varied per plan: every UUID
(plan, context, steps, intent, project), every free-text tag and the plan's time are new,
so no two values are alike and each keeps its template's length. Every other plan is
completed, as in ``plan_records``, so the expiry index rebuilt from the table holds half.
Measured on 400 templates (seed 1): PlanState values average about 1,170 bytes (1,080 to
1,270), keys 38 bytes; the run records its own average (``value_bytes_avg``).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.join.rules import plan_key
from learnstream.streams.mplp.decode import decode_plan
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.offsets.partitioner import partition_for
from learnstream.streams.sim.workload import Record
from learnstream.streams.state.plan import merge_snapshot

__all__ = [
    "TEMPLATES",
    "ChangelogRecord",
    "Template",
    "changelog_record",
    "changelog_topic",
    "create_changelog",
    "produce_changelog",
    "templates_of",
    "varied_records",
]

#: Real PlanStates the preloaded values are varied from.
TEMPLATES = 400
#: The plan_state table's name (streams/io/tables.py).
TABLE = "plan_state"
_UUID = rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_TAG = rb"\(ref [a-z]{8}\)"  # benchmarks/load.py unique_texts
_LETTERS = bytes(ord("a") + i % 26 for i in range(256))  # random byte -> a letter


def changelog_topic(app_id: str, table: str = TABLE) -> str:
    """Return the changelog topic Faust uses for ``table`` of app ``app_id``."""
    return f"{app_id}-{table}-changelog"


@dataclass(frozen=True)
class ChangelogRecord:
    """One changelog record: where it goes, its key and value bytes."""

    partition: int
    key: bytes
    value: bytes


def changelog_record(record: Record, at: datetime, partitions: int) -> ChangelogRecord:
    """Return the plan_state changelog record a worker writes for a plan it sees first.

    ``record`` is a plan snapshot as the runtime publishes it (``plan_records``), ``at`` its
    Kafka timestamp (the fallback time of a snapshot without one).
    """
    snapshot = decode_plan(record.value, InputNotes())
    state = merge_snapshot(None, snapshot, at)
    if state is None:  # pragma: no cover - nothing is held, so nothing is newer
        raise ValueError("a first snapshot always makes a state")
    key = orjson.dumps(plan_key(snapshot.plan.plan_id))
    return ChangelogRecord(partition_for(record.key, partitions), key, state.to_table())


@dataclass(frozen=True)
class Template:
    """A real PlanState value cut at what varies: UUIDs, text tags and the plan's time.

    ``slots[i]`` (b"id", b"tag" or b"time") goes between ``pieces[i]`` and ``pieces[i + 1]``;
    the first id slot is the plan id.
    """

    pieces: tuple[bytes, ...]
    slots: tuple[bytes, ...]
    terminal: bool
    size: int


def _slot(found: bytes) -> bytes:
    if found.startswith(b"("):
        return b"tag"
    return b"time" if b"T" in found else b"id"


def _template(value: bytes) -> Template:
    state = orjson.loads(value)
    moment = re.escape(state["updated_at"].encode())
    parts = re.split(b"(" + b"|".join((_UUID, _TAG, moment)) + b")", value)
    pieces, found = tuple(parts[0::2]), parts[1::2]
    slots = tuple(_slot(f) for f in found)
    plan_id = state["snapshot"]["plan"]["plan_id"].encode()
    if b"id" not in slots or found[slots.index(b"id")] != plan_id:
        raise ValueError("the first UUID of a stored state is not its plan id")
    return Template(pieces, slots, "terminal_since" in state, len(value))


def templates_of(records: list[Record], at: datetime, partitions: int) -> list[Template]:
    """Return the templates of the stored states of ``records`` (``plan_records`` snapshots)."""
    return [_template(changelog_record(r, at, partitions).value) for r in records]


def _uuid4(hexed: str) -> str:
    variant = "89ab"[int(hexed[16], 16) & 3]
    return f"{hexed[:8]}-{hexed[8:12]}-4{hexed[13:16]}-{variant}{hexed[17:20]}-{hexed[20:32]}"


def _time(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")  # what pydantic writes for a UTC time


def varied_records(
    templates: list[Template], count: int, seed: int, start: datetime, partitions: int
) -> Iterator[ChangelogRecord]:
    """Yield ``count`` changelog records, plan ``i`` varied from template ``i % len``.

    Plan ``i`` is stamped ``start + i`` ms, like ``plan_records``; templates alternate
    proposed and completed as their snapshots do, so half the plans are terminal.
    """
    rng = random.Random(seed)
    for i in range(count):
        tpl = templates[i % len(templates)]
        ids = sum(1 for s in tpl.slots if s == b"id")
        hexed = rng.randbytes(16 * ids).hex()
        letters = rng.randbytes(8 * len(tpl.slots)).translate(_LETTERS)
        moment = _time(start + timedelta(milliseconds=i)).encode()
        out, n = [tpl.pieces[0]], 0
        plan_id = ""
        for k, slot in enumerate(tpl.slots):
            if slot == b"id":
                made = _uuid4(hexed[32 * n : 32 * n + 32])
                plan_id, n = plan_id or made, n + 1
                out.append(made.encode())
            elif slot == b"tag":
                out.append(b"(ref " + letters[8 * k : 8 * k + 8] + b")")
            else:
                out.append(moment)
            out.append(tpl.pieces[k + 1])
        runtime_key = plan_id.encode()  # a lower-case UUID v4: its own plan_key
        key = b'"' + runtime_key + b'"'
        yield ChangelogRecord(partition_for(runtime_key, partitions), key, b"".join(out))


async def create_changelog(bootstrap: str, name: str, topics: TopicSettings) -> None:
    """Create the changelog topic as the worker would: compacted, the input partitions."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
    await admin.start()
    try:
        config = {"cleanup.policy": "compact"}
        replicas = topics.replication_factor or 1
        new = NewTopic(name, topics.partitions, replicas, topic_configs=config)
        with contextlib.suppress(TopicAlreadyExistsError):  # a rerun of the same place
            await admin.create_topics([new])
    finally:
        await admin.close()


@dataclass
class Produced:
    """What ``produce_changelog`` wrote and how long its phases took."""

    records: int = 0
    value_bytes: int = 0
    generate_s: float = 0.0
    produce_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Return the figures for the results JSON."""
        return {
            "records": self.records,
            "value_bytes_avg": round(self.value_bytes / max(self.records, 1), 1),
            "generate_s": round(self.generate_s, 1),
            "produce_s": round(self.produce_s, 1),
        }


#: Records built at a time (the generation time is counted apart from the sending).
_CHUNK = 20_000
_IN_FLIGHT = 32  # batches awaited at once


async def produce_changelog(
    bootstrap: str,
    topic: str,
    records: Iterator[ChangelogRecord],
    total: int,
    partitions: int,
    progress: Callable[[str], None],
) -> Produced:
    """Write ``records`` to ``topic`` in big gzip batches, one open batch per partition.

    ``produce_s`` is the wall time of it all, generation included (``generate_s``).
    """
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        compression_type="gzip",
        linger_ms=200,
        max_batch_size=512 * 1024,
        request_timeout_ms=120_000,
    )
    await producer.start()
    done, started, step = Produced(), time.monotonic(), max(total // 20, _CHUNK)
    batches = {p: producer.create_batch() for p in range(partitions)}
    pending: list[asyncio.Future[Any]] = []

    async def flush(partition: int) -> None:
        batch = batches[partition]
        batch.close()
        pending.append(await producer.send_batch(batch, topic, partition=partition))
        batches[partition] = producer.create_batch()
        if len(pending) >= _IN_FLIGHT:
            await asyncio.gather(*pending)
            pending.clear()

    try:
        while True:
            made = time.monotonic()
            chunk = [r for _, r in zip(range(_CHUNK), records, strict=False)]
            done.generate_s += time.monotonic() - made
            if not chunk:
                break
            for rec in chunk:
                if batches[rec.partition].append(key=rec.key, value=rec.value, timestamp=None):
                    continue
                await flush(rec.partition)
                batches[rec.partition].append(key=rec.key, value=rec.value, timestamp=None)
            before, done.records = done.records, done.records + len(chunk)
            done.value_bytes += sum(len(r.value) for r in chunk)
            if done.records // step > before // step:
                rate = done.records / (time.monotonic() - started)
                progress(f"changelog: {done.records:,}/{total:,} plans written, {rate:,.0f}/s")
        for partition in range(partitions):
            if batches[partition].record_count():
                await flush(partition)
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    done.produce_s = time.monotonic() - started
    return done


def now_utc() -> datetime:
    """Return the time plans are stamped from (kept apart so a test can fix it)."""
    return datetime.now(UTC)
