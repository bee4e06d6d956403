"""Smoke-test the real Apache Kafka 4.x harness: plain, transactional and restart round trips."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from faust.types import TP

from learnstream.agents.seams.faust_compat import note_fetched_ends
from learnstream.agents.seams.prober import Prober
from learnstream.streams.offsets.fetched import FetchedEnds
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


def test_a_fetch_answers_the_read_committed_end_while_a_transaction_is_open(
    kafka: ApacheKafka,
) -> None:
    """What the watermark and the fence take from a fetch (seam 17 of
    agents/seams/faust_compat.py): the last stable offset, the end ListOffsets answers a
    read_committed asker, for a consumer of either isolation level; not the high watermark
    an open transaction has moved on."""
    topic = "smoke-fetched"
    tp = TopicPartition(topic, 0)

    async def ends_read(isolation: str) -> tuple[int, int]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=kafka.bootstrap, isolation_level=isolation, fetch_max_wait_ms=50
        )
        ends: FetchedEnds[TopicPartition] = FetchedEnds([topic])
        await consumer.start()
        try:
            note_fetched_ends(consumer, ends)
            consumer.assign([tp])
            await consumer.seek_to_beginning()
            since = ends.clock()
            answered = ends.after([tp], since)
            while not answered.done():
                await consumer.getmany(timeout_ms=100)
            return (ends.ends([tp], since) or {})[tp], consumer.highwater(tp) or -1
        finally:
            await consumer.stop()

    async def scenario() -> list[tuple[int, int]]:
        await _create_topic(kafka.bootstrap, topic, partitions=1)
        await _produce(kafka.bootstrap, topic, [b"a", b"b"])  # offsets 0, 1
        producer = AIOKafkaProducer(
            bootstrap_servers=kafka.bootstrap, transactional_id="smoke-fetched-1", acks="all"
        )
        await producer.start()
        try:
            await producer.begin_transaction()
            await (await producer.send(topic, b"open", partition=0))  # offset 2, not committed
            read = [
                await ends_read(isolation) for isolation in ("read_uncommitted", "read_committed")
            ]
            await producer.commit_transaction()  # its marker at offset 3
        finally:
            await producer.stop()
        read.append(await ends_read("read_uncommitted"))
        return read

    open_uncommitted, open_committed, after = asyncio.run(scenario())
    assert open_uncommitted[0] == open_committed[0] == 2  # the last stable offset
    assert open_uncommitted[1] == 3  # the high watermark is past the open record
    assert after[0] == 4  # committed: record and marker
