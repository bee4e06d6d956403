"""Workloads for the benchmarks, and the fast / paced publishers that put them on the broker."""

from __future__ import annotations

import asyncio
import random
import string
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.sim.workload import Record, Workload, build_workload

__all__ = [
    "Progress",
    "bench_workload",
    "publish_fast",
    "publish_paced",
    "restamp",
    "split_plans",
    "unique_texts",
]

#: Free-text fields of the simulated events: real agent requests are all different, so each
#: gets a unique tag (letters only: it changes no PII pre-filter decision, it only defeats
#: the anonymizer's LRU cache, which the simulator's handful of templates would always hit).
TEXT_KEYS = frozenset(
    {"objective", "title", "text", "reason", "change_summary", "feedback_text", "error"}
)

Progress = Callable[[str], None]


def _tag(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase, k=8))


def _tagged_field(key: str, value: Any, rng: random.Random) -> Any:
    if key in TEXT_KEYS and isinstance(value, str):
        return f"{value} (ref {_tag(rng)})"
    return unique_texts(value, rng)


def unique_texts(value: Any, rng: random.Random) -> Any:
    """Return a copy of a JSON value whose free-text fields end with a unique tag."""
    if isinstance(value, dict):
        return {k: _tagged_field(k, v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [unique_texts(v, rng) for v in value]
    return value


def bench_workload(
    min_events: int, seed: int, *, pii_ratio: float = 0.3, unique: bool = True
) -> Workload:
    """Return ``build_workload``'s mix, its free texts made unique unless told otherwise."""
    workload = build_workload(min_events, seed=seed, pii_ratio=pii_ratio)
    if not unique:
        return workload
    rng = random.Random(seed)
    records = [
        replace(r, value=orjson.dumps(unique_texts(orjson.loads(r.value), rng)))
        for r in workload.records
    ]
    return Workload(records=records, expected=workload.expected, plans=workload.plans)


def split_plans(records: list[Record]) -> tuple[list[Record], list[Record]]:
    """Return (plan snapshots, everything else), each in publish order."""
    plans = [r for r in records if r.topic == "plans"]
    return plans, [r for r in records if r.topic != "plans"]


def _producer(bootstrap: str, embedded: bool) -> AIOKafkaProducer:
    options: dict[str, Any] = {"acks": "all", "request_timeout_ms": 120_000}
    if embedded:  # the embedded broker counts batches, not records, in its offsets
        options["max_batch_size"] = 1
    else:
        options["linger_ms"] = 5
    return AIOKafkaProducer(bootstrap_servers=bootstrap, **options)


async def publish_fast(
    bootstrap: str,
    topics: TopicSettings,
    records: list[Record],
    embedded: bool,
    progress: Progress | None = None,
) -> float:
    """Publish ``records`` as fast as the broker takes them; return the seconds it took."""
    producer = _producer(bootstrap, embedded)
    await producer.start()
    started = time.monotonic()
    try:
        pending: list[asyncio.Future[Any]] = []
        for i, record in enumerate(records, 1):
            pending.append(
                await producer.send(topics.name(record.topic), record.value, key=record.key)
            )
            if len(pending) >= 5_000:
                await asyncio.gather(*pending)
                pending.clear()
                if progress is not None:
                    progress(f"published {i:,}/{len(records):,}")
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    return time.monotonic() - started


def restamp(value: bytes, moment: datetime) -> bytes:
    """Return an MPLP event with its ``timestamp`` set to ``moment`` (the publish time)."""
    event = orjson.loads(value)
    event["timestamp"] = moment.isoformat().replace("+00:00", "Z")
    return orjson.dumps(event)


async def publish_paced(
    bootstrap: str, topics: TopicSettings, records: list[Record], rate: float, embedded: bool
) -> float:
    """Publish events at ``rate`` per second, each stamped with its publish time.

    Returns the achieved rate (events per second).
    """
    producer = _producer(bootstrap, embedded)
    await producer.start()
    started = time.monotonic()
    try:
        pending = []
        for i, record in enumerate(records):
            ahead = started + i / rate - time.monotonic()
            if ahead > 0:
                await asyncio.sleep(ahead)
            value = restamp(record.value, datetime.now(UTC))
            pending.append(await producer.send(topics.name(record.topic), value, key=record.key))
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    return len(records) / max(time.monotonic() - started, 1e-9)
