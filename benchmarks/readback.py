"""Read results back from the broker: record counts, sample timestamps, latencies, the
records a run's tables wrote to their changelogs."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime
from statistics import quantiles
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from benchmarks.load import Progress
from learnstream.agents.seams.faust_compat import refresh_metadata
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.reader import read_topic

__all__ = [
    "OutRecord",
    "changelog_counts",
    "changelog_table",
    "count_records",
    "count_topic",
    "latency_ms",
    "read_out",
    "wait_for_records",
    "window",
]

STALL_S = 120.0
CHANGELOG = "-changelog"


@dataclass(frozen=True)
class OutRecord:
    """One output record: its broker timestamp (seconds) and its decoded sample, if any."""

    timestamp: float
    sample: dict[str, Any] | None


async def count_records(consumer: AIOKafkaConsumer, topic: str) -> int:
    """Return the sum of the end offsets of ``topic`` (0 while it does not exist)."""
    partitions = consumer.partitions_for_topic(topic)
    if not partitions:
        await refresh_metadata(consumer)
        partitions = consumer.partitions_for_topic(topic) or set()
    tps = [TopicPartition(topic, p) for p in partitions]
    return sum((await consumer.end_offsets(tps)).values()) if tps else 0


async def count_topic(bootstrap: str, topic: str) -> int:
    """Return how many records ``topic`` holds (its end offsets summed)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        return await count_records(consumer, topic)
    finally:
        await consumer.stop()


def changelog_table(topic: str, app_id: str) -> str | None:
    """Return the table whose changelog ``topic`` is, if it is one of app ``app_id``'s
    (Faust names it ``<app id>-<table>-changelog``)."""
    prefix = f"{app_id}-"
    if topic.startswith(prefix) and topic.endswith(CHANGELOG):
        return topic[len(prefix) : -len(CHANGELOG)] or None
    return None


async def changelog_counts(bootstrap: str, app_id: str) -> dict[str, dict[str, int]]:
    """Return, per table of app ``app_id``, what its changelog topic holds.

    ``records``: the records read back (tombstones included, transaction markers never);
    ``tombstones``: those with no value; ``keys``: the distinct keys among them (a table
    that wrote each key once has as many records as keys); ``offsets``: the end offsets
    summed, which count record *batches* on the embedded broker and also transaction
    markers under exactly_once on Kafka. A run's topics are new, so the counts are what
    the run wrote (nothing was compacted away while the log's active segment holds it all).
    """
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        topics = {
            t: table for t in await consumer.topics() if (table := changelog_table(t, app_id))
        }
        ends = {t: await count_records(consumer, t) for t in sorted(topics)}
    finally:
        await consumer.stop()
    counts = {}
    for topic, end in ends.items():
        records = await read_topic(bootstrap, topic, max_wait=300) if end else []
        counts[topics[topic]] = {
            "records": len(records),
            "tombstones": sum(r.value is None for r in records),
            "keys": len({r.key for r in records}),
            "offsets": end,
        }
    return counts


async def wait_for_records(
    bootstrap: str, topic: str, target: int, max_wait: float, progress: Progress
) -> bool:
    """Poll ``topic`` until it holds ``target`` records.

    Return False after ``max_wait`` seconds, or once the count has not moved for
    ``STALL_S`` seconds (the worker is stuck or dead-lettering: waiting longer is useless).
    """
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    deadline = time.monotonic() + max_wait
    last_note, last_count, moved = 0.0, -1, time.monotonic()
    try:
        while time.monotonic() < deadline and time.monotonic() - moved < STALL_S:
            count = await count_records(consumer, topic)
            if count >= target:
                return True
            if count != last_count:
                last_count, moved = count, time.monotonic()
            if time.monotonic() - last_note > 5:
                progress(f"{count:,}/{target:,} records on {topic}")
                last_note = time.monotonic()
            await asyncio.sleep(0.25)
        progress(f"gave up at {last_count:,}/{target:,} records on {topic}")
        return False
    finally:
        await consumer.stop()


async def read_out(bootstrap: str, topic: str, decode: bool) -> list[OutRecord]:
    """Read ``topic`` from the beginning; decode samples when asked."""
    records = await read_topic(bootstrap, topic, max_wait=300)
    return [OutRecord(r.timestamp / 1000, decode_any(r.value) if decode else None) for r in records]


def window(records: list[OutRecord]) -> float:
    """Return the seconds from the first to the last output record."""
    stamps = [r.timestamp for r in records]
    return max(stamps) - min(stamps) if stamps else 0.0


def latency_ms(records: list[OutRecord], wanted: set[str]) -> dict[str, float]:
    """Return p50/p95/p99/max of (sample broker timestamp - event publish time), in ms.

    ``meta.event_time`` is the source event's ``timestamp``, which the paced publisher sets
    to the moment it hands the record to the producer.
    """
    lags = []
    for record in records:
        sample = record.sample
        if sample is None or sample["sample_id"] not in wanted:
            continue
        published = datetime.fromisoformat(sample["meta"]["event_time"]).timestamp()
        lags.append((record.timestamp - published) * 1000)
    if len(lags) < 2:
        return {"samples": float(len(lags))}
    cuts = quantiles(lags, n=100, method="inclusive")
    return {
        "samples": float(len(lags)),
        "p50": cuts[49],
        "p95": cuts[94],
        "p99": cuts[98],
        "max": max(lags),
    }
