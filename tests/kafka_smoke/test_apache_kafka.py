"""Smoke-test the real Apache Kafka 4.x harness: plain, transactional and restart round trips."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from faust.types import TP

from learnstream.agents.seams.prober import Prober
from tests.support.kafka_server import ApacheKafka

pytestmark = pytest.mark.kafka

RECORDS = 10
TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def kafka() -> Iterator[ApacheKafka]:
    """Start one broker for the module and always stop it."""
    server = ApacheKafka()
    try:
        server.start()
        yield server
    finally:
        server.stop()


async def _create_topic(bootstrap: str, topic: str, partitions: int = 2) -> None:
    """Create ``topic`` with replication factor 1."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()


async def _produce(
    bootstrap: str, topic: str, values: list[bytes], transactional_id: str | None = None
) -> None:
    """Produce ``values`` to ``topic``, inside one committed transaction if an id is given."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=transactional_id, acks="all"
    )
    await producer.start()
    try:
        if transactional_id is None:
            for value in values:
                await producer.send_and_wait(topic, value)
            return
        async with producer.transaction():
            for value in values:
                await producer.send(topic, value)
    finally:
        await producer.stop()


async def _consume(
    bootstrap: str, topic: str, expected: int, isolation_level: str = "read_uncommitted"
) -> list[bytes]:
    """Read ``topic`` from the beginning until ``expected`` records arrived or time ran out."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"smoke-{topic}",
        auto_offset_reset="earliest",
        isolation_level=isolation_level,
    )
    await consumer.start()
    got: list[bytes] = []
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT_S
        while len(got) < expected and loop.time() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            got.extend(msg.value for msgs in batches.values() for msg in msgs if msg.value)
    finally:
        await consumer.stop()
    return got


def _values(prefix: str) -> list[bytes]:
    """Return ``RECORDS`` distinct payloads."""
    return [f"{prefix}-{i}".encode() for i in range(RECORDS)]


def test_plain_produce_consume(kafka: ApacheKafka) -> None:
    """Produce 10 records and consume the same 10 back."""
    values = _values("plain")

    async def scenario() -> list[bytes]:
        await _create_topic(kafka.bootstrap, "smoke-plain")
        await _produce(kafka.bootstrap, "smoke-plain", values)
        return await _consume(kafka.bootstrap, "smoke-plain", RECORDS)

    assert sorted(asyncio.run(scenario())) == sorted(values)


def test_transactional_produce_read_committed(kafka: ApacheKafka) -> None:
    """Commit a transaction and see its records with a read_committed consumer."""
    values = _values("txn")

    async def scenario() -> list[bytes]:
        await _create_topic(kafka.bootstrap, "smoke-txn")
        await _produce(kafka.bootstrap, "smoke-txn", values, transactional_id="smoke-txn-1")
        return await _consume(kafka.bootstrap, "smoke-txn", RECORDS, "read_committed")

    assert sorted(asyncio.run(scenario())) == sorted(values)


def test_the_prober_reads_past_markers_and_aborted_records(kafka: ApacheKafka) -> None:
    """What ``Progress`` asks before it takes a hole for markers (agents/seams/prober.py): a
    committed transaction leaves a marker after its records, an aborted one its records and
    a marker, which a read_committed reader never sees; read_uncommitted sees the aborted."""
    topic = "smoke-probe"

    async def scenario() -> tuple[list[int | None], list[int | None]]:
        await _create_topic(kafka.bootstrap, topic, partitions=1)
        producer = AIOKafkaProducer(
            bootstrap_servers=kafka.bootstrap, transactional_id="smoke-probe-1", acks="all"
        )
        await producer.start()
        try:
            for commit in (True, False, True):  # offsets 0 + marker 1, 2 + 3, 4 + 5
                await producer.begin_transaction()
                await (await producer.send(topic, b"x", partition=0))
                if commit:
                    await producer.commit_transaction()
                else:
                    await producer.abort_transaction()
        finally:
            await producer.stop()
        answers = []
        for isolation in ("read_committed", "read_uncommitted"):
            prober = Prober(kafka.bootstrap, isolation)
            try:
                answers.append([await prober.first_visible(TP(topic, 0), o) for o in (1, 5)])
            finally:
                await prober.stop()
        return answers[0], answers[1]

    committed, uncommitted = asyncio.run(scenario())
    assert committed == [4, None]  # the marker and the aborted record: not records
    assert uncommitted == [2, None]  # the aborted record is one for this reader


def test_restart_keeps_data(kafka: ApacheKafka) -> None:
    """Records produced before a hard kill and restart are still consumable after it."""
    values = _values("durable")
    bootstrap = kafka.bootstrap
    asyncio.run(_create_topic(bootstrap, "smoke-restart"))
    asyncio.run(_produce(bootstrap, "smoke-restart", values))

    kafka.kill()
    assert not kafka.is_running
    assert kafka.restart() == bootstrap

    got = asyncio.run(_consume(bootstrap, "smoke-restart", RECORDS))
    assert sorted(got) == sorted(values)
