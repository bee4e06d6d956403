"""Read a topic from its beginning to its current end (CLI tools, tests, the demo)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

__all__ = ["read_topic", "read_until"]


#: How often a reader's metadata refreshes: an assigned consumer's only way to see a topic
#: created after it started without aiokafka's private client (default: every 5 minutes).
_METADATA_AGE_MS = 1000
#: How long to wait for the partitions of a topic the cluster already lists.
_NEW_TOPIC_WAIT_S = 5.0


async def _consumer(bootstrap: str, isolation_level: str) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level=isolation_level,
        metadata_max_age_ms=_METADATA_AGE_MS,
    )
    await consumer.start()
    return consumer


async def _partitions(consumer: AIOKafkaConsumer, topic: str) -> set[int]:
    """Return ``topic``'s partitions; none if the cluster does not have the topic."""
    partitions: set[int] | None = consumer.partitions_for_topic(topic)
    if partitions or topic not in await consumer.topics():  # topics(): fresh, not cached
        return partitions or set()
    deadline = asyncio.get_running_loop().time() + _NEW_TOPIC_WAIT_S
    while not partitions and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)  # brand new: listed by the consumer's next refresh
        partitions = consumer.partitions_for_topic(topic)
    return partitions or set()


async def read_topic(
    bootstrap: str, topic: str, *, isolation_level: str = "read_uncommitted", max_wait: float = 30.0
) -> list[ConsumerRecord[bytes, bytes]]:
    """Return every record of ``topic`` up to the end offsets seen when called."""
    return [r async for r in _records(bootstrap, topic, isolation_level, max_wait)]


async def _records(
    bootstrap: str, topic: str, isolation_level: str, max_wait: float
) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    consumer = await _consumer(bootstrap, isolation_level)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(await _partitions(consumer, topic))]
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
    bootstrap: str, topic: str, count: int, max_wait: float = 60.0, poll: float = 0.5
) -> list[ConsumerRecord[bytes, bytes]]:
    """Re-read ``topic`` until it holds at least ``count`` records or ``max_wait`` passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_wait
    records = await read_topic(bootstrap, topic)
    while len(records) < count and loop.time() < deadline:
        await asyncio.sleep(poll)
        records = await read_topic(bootstrap, topic)
    return records
