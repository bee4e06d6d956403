"""Read a topic: whole or by record timestamp, to its end at start (bounded) or live (tail).

``read_topic`` serves CLI tools, tests and the demo; ``read_range`` / ``tail`` the exporter
and the trainers' consumer API (streams/io/consumer.py). ``broker`` is a KafkaConnection
(TLS, SASL) or a bare bootstrap string, read in plaintext.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from learnstream.streams.io.connection import Broker, connection_of

__all__ = [
    "RangeProgress",
    "consumer_at_end",
    "read_range",
    "read_topic",
    "read_until",
    "tail",
    "topic_partitions",
]


#: How often a reader's metadata refreshes: an assigned consumer's only way to see a topic
#: created after it started without aiokafka's private client (default: every 5 minutes).
_METADATA_AGE_MS = 1000
#: Fetch limits of range reads and tails: aiokafka prefetches while the caller works, up to
#: 50 MiB by default; this keeps an export's memory flat whatever the topic's size.
_FLAT = {"fetch_max_bytes": 4 * 1024 * 1024, "max_partition_fetch_bytes": 1024 * 1024}
#: How long to wait for the partitions of a topic the cluster already lists.
_NEW_TOPIC_WAIT_S = 5.0


async def _consumer(broker: Broker, isolation_level: str, **options: int) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(
        **connection_of(broker).client_options(),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level=isolation_level,
        metadata_max_age_ms=_METADATA_AGE_MS,
        **options,
    )
    await consumer.start()
    return consumer


async def topic_partitions(consumer: AIOKafkaConsumer, topic: str) -> set[int]:
    """Return ``topic``'s partitions; none if the cluster does not have the topic."""
    partitions: set[int] | None = consumer.partitions_for_topic(topic)
    if partitions or topic not in await consumer.topics():  # topics(): fresh, not cached
        return partitions or set()
    deadline = asyncio.get_running_loop().time() + _NEW_TOPIC_WAIT_S
    while not partitions and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)  # brand new: listed by the consumer's next refresh
        partitions = consumer.partitions_for_topic(topic)
    return partitions or set()


async def consumer_at_end(broker: Broker, topic: str) -> AIOKafkaConsumer:
    """Return a started consumer of every partition of ``topic``, positioned at its end now.

    The end is resolved before returning, so nothing written after the call is missed.
    Raises LookupError when the broker does not have ``topic``.
    """
    consumer = await _consumer(broker, "read_uncommitted")
    try:
        tps = [TopicPartition(topic, p) for p in sorted(await topic_partitions(consumer, topic))]
        if not tps:
            raise LookupError(f"the broker has no topic {topic}")
        consumer.assign(tps)
        await consumer.seek_to_end(*tps)
        for tp in tps:
            await consumer.position(tp)
    except BaseException:
        await consumer.stop()
        raise
    return consumer


async def read_topic(
    broker: Broker, topic: str, *, isolation_level: str = "read_uncommitted", max_wait: float = 30.0
) -> list[ConsumerRecord[bytes, bytes]]:
    """Return every record of ``topic`` up to the end offsets seen when called."""
    return [r async for r in _records(broker, topic, isolation_level, max_wait)]


async def _records(
    broker: Broker, topic: str, isolation_level: str, max_wait: float
) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    consumer = await _consumer(broker, isolation_level)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(await topic_partitions(consumer, topic))]
        if not tps:
            return
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        remaining = {tp for tp in tps if ends[tp] > 0}
        async with asyncio.timeout(max_wait):
            while remaining:
                for tp, records in (await consumer.getmany(*remaining, timeout_ms=500)).items():
                    for record in records:
                        yield record
                    if await consumer.position(tp) >= ends[tp]:
                        remaining.discard(tp)
    finally:
        await consumer.stop()


async def read_until(
    broker: Broker, topic: str, count: int, max_wait: float = 60.0, poll: float = 0.5
) -> list[ConsumerRecord[bytes, bytes]]:
    """Re-read ``topic`` until it holds at least ``count`` records or ``max_wait`` passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_wait
    records = await read_topic(broker, topic)
    while len(records) < count and loop.time() < deadline:
        await asyncio.sleep(poll)
        records = await read_topic(broker, topic)
    return records


@dataclass
class RangeProgress:
    """How far a range read is: offsets to read at start, offsets still left, why it ended."""

    total: int = 0
    left: int = 0
    idle: bool = False  # ended by the idle timeout with offsets still left
    partitions: int = 0  # of the topic; 0 when the broker does not have it


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


async def _seek(consumer: AIOKafkaConsumer, tps: list[TopicPartition], since: int | None) -> None:
    """Seek each partition to its first record at or after ``since`` (or its end)."""
    if since is None:
        await consumer.seek_to_beginning(*tps)
        return
    found = await consumer.offsets_for_times(dict.fromkeys(tps, since))
    for tp in tps:
        if found.get(tp) is None:  # nothing at or after since: start at the end
            await consumer.seek_to_end(tp)
        else:
            consumer.seek(tp, found[tp].offset)


async def read_range(
    broker: Broker,
    topic: str,
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    progress: RangeProgress | None = None,
    idle_timeout: float = 10.0,
    isolation_level: str = "read_committed",
    live_only: bool = False,
) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    """Yield the records of ``topic`` with ``since <= timestamp < until``, up to today's end.

    The end offsets are taken at start: records written later are not read (use
    :func:`tail`). Stops early after ``idle_timeout`` seconds with no record, saying so in
    ``progress.idle``. The timestamp is the record's (CreateTime: set when it was written).

    ``live_only`` reads what compaction will leave: no tombstones, and no record whose key
    has a tombstone after it (``learnstream erase``), whenever the tombstone was written. That
    takes a first pass over the same offsets for the tombstones, so the read costs two.
    """
    progress = progress if progress is not None else RangeProgress()
    low, high = _ms(since), _ms(until)
    consumer = await _consumer(broker, isolation_level, **_FLAT)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(await topic_partitions(consumer, topic))]
        progress.partitions = len(tps)
        if not tps:
            return
        consumer.assign(tps)
        await _seek(consumer, tps, low)
        ends = await consumer.end_offsets(tps)
        at = {tp: await consumer.position(tp) for tp in tps}
        offsets = sum(max(0, ends[tp] - at[tp]) for tp in tps)
        progress.total = progress.left = offsets * (2 if live_only else 1)
        erased: dict[tuple[int, bytes], int] = {}
        if live_only:
            erased = await _tombstones(consumer, ends, dict(at), progress, idle_timeout, offsets)
            if progress.idle:  # an erasure may be among the unread: yield nothing
                return
            for tp, offset in at.items():
                consumer.seek(tp, offset)
        async for record in _bounded(consumer, ends, at, progress, idle_timeout):
            # Some brokers (the embedded Tansu) answer every offsets_for_times with 0, so the
            # seek may start at the beginning: this filter is what keeps the range there.
            if live_only and _erased(record, erased):
                continue
            if (low is None or record.timestamp >= low) and (
                high is None or record.timestamp < high
            ):
                yield record
    finally:
        await consumer.stop()


def _erased(record: ConsumerRecord[bytes, bytes], tombstones: dict[tuple[int, bytes], int]) -> bool:
    """Tell whether ``record`` is a tombstone or has one at a later offset."""
    if record.value is None:
        return True
    if record.key is None:
        return False
    return tombstones.get((record.partition, record.key), -1) > int(record.offset)


async def _tombstones(
    consumer: AIOKafkaConsumer,
    ends: dict[TopicPartition, int],
    at: dict[TopicPartition, int],
    progress: RangeProgress,
    idle_timeout: float,
    after: int,
) -> dict[tuple[int, bytes], int]:
    """Return the offset of the last tombstone of each (partition, key) up to ``ends``."""
    found: dict[tuple[int, bytes], int] = {}
    async for record in _bounded(consumer, ends, at, progress, idle_timeout, after):
        if record.value is None and record.key is not None:
            found[(record.partition, record.key)] = record.offset
    return found


async def _bounded(
    consumer: AIOKafkaConsumer,
    ends: dict[TopicPartition, int],
    at: dict[TopicPartition, int],
    progress: RangeProgress,
    idle_timeout: float,
    after: int = 0,
) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    """Yield records until every partition reaches its end offset or nothing comes for a while.

    ``after``: offsets a later pass will read, counted in ``progress.left`` too.
    """
    remaining = {tp for tp in ends if at[tp] < ends[tp]}
    loop = asyncio.get_running_loop()
    quiet_since = loop.time()
    while remaining:
        batch = await consumer.getmany(*remaining, timeout_ms=500)
        for records in batch.values():
            for record in records:
                yield record
            quiet_since = loop.time()
        for tp in list(remaining):
            at[tp] = await consumer.position(tp)
            if at[tp] >= ends[tp]:
                remaining.discard(tp)
        progress.left = after + sum(max(0, ends[tp] - at[tp]) for tp in remaining)
        if remaining and loop.time() - quiet_since > idle_timeout:
            progress.idle = True
            return


async def tail(
    broker: Broker,
    topic: str,
    since: datetime | None = None,
    *,
    isolation_level: str = "read_committed",
) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    """Yield the records of ``topic`` from ``since`` (default: from now on), never ending.

    Partitions are those the topic has at start; records before ``since`` are skipped here
    too (brokers that cannot look a timestamp up start at the beginning). Tombstones are
    skipped; a record already yielded cannot be taken back when its tombstone comes later.
    """
    low = _ms(since)
    consumer = await _consumer(broker, isolation_level, **_FLAT)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(await topic_partitions(consumer, topic))]
        if not tps:
            return
        consumer.assign(tps)
        if low is None:
            await consumer.seek_to_end(*tps)
        else:
            await _seek(consumer, tps, low)
        while True:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                for record in records:
                    if record.value is not None and (low is None or record.timestamp >= low):
                        yield record
    finally:
        await consumer.stop()
