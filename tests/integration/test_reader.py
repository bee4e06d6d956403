"""streams/io/reader.py reads a topic to its end, a topic created after it started included,
through aiokafka's public API only (no private client: agents/seams/faust_compat.py)."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from learnstream.streams.io.reader import _consumer, read_topic, topic_partitions

pytestmark = pytest.mark.integration


async def create(bootstrap: str, topic: str, partitions: int) -> None:
    """Create ``topic`` and return once the broker lists it (under load Apache Kafka answers
    the creation before its metadata has the topic: a reader asking then finds no topic)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
        deadline = asyncio.get_running_loop().time() + 30
        while topic not in await admin.list_topics():
            assert asyncio.get_running_loop().time() < deadline, f"{topic} never listed"
            await asyncio.sleep(0.1)
    finally:
        await admin.close()


async def test_a_missing_topic_reads_as_empty_without_waiting(broker, namespace) -> None:
    started = asyncio.get_running_loop().time()
    assert await read_topic(broker.bootstrap, f"{namespace}nowhere") == []
    assert asyncio.get_running_loop().time() - started < 3


async def test_a_topic_created_after_the_reader_started_is_found(broker, namespace) -> None:
    topic = f"{namespace}late"
    consumer = await _consumer(broker.bootstrap, "read_uncommitted")
    try:
        assert consumer.partitions_for_topic(topic) is None
        await create(broker.bootstrap, topic, 3)
        assert await topic_partitions(consumer, topic) == {0, 1, 2}
    finally:
        await consumer.stop()


async def test_every_record_is_read_to_the_end(broker, namespace) -> None:
    topic = f"{namespace}records"
    await create(broker.bootstrap, topic, 2)
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    try:
        for n in range(6):
            await producer.send_and_wait(topic, f"v{n}".encode(), partition=n % 2)
    finally:
        await producer.stop()
    records = await read_topic(broker.bootstrap, topic)
    assert sorted(r.value for r in records) == [f"v{n}".encode() for n in range(6)]
