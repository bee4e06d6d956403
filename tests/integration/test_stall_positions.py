"""The stall watch reads fetch positions and log starts from a real aiokafka consumer."""

from __future__ import annotations

from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from faust.types import TP

from agents.faust_compat import fetch_positions, log_starts
from streams.admin import create_topics
from streams.settings import TopicSettings

pytestmark = pytest.mark.integration


class OnThisLoop:
    """Faust's consumer thread, reduced to running calls on the test's own loop."""

    def __init__(self, consumer: AIOKafkaConsumer) -> None:
        self._thread = self
        self.consumer = consumer

    def _ensure_consumer(self) -> AIOKafkaConsumer:
        return self.consumer

    async def call_thread(self, fun: Any, *args: Any) -> Any:
        return await fun(*args)


async def test_positions_follow_what_was_fetched_and_logs_start_at_their_first_record(
    broker: Any, namespace: str
) -> None:
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    name = topics.name("plans")
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, max_batch_size=1)
    await producer.start()
    try:
        for n in range(3):  # one record per batch: the embedded broker counts batches
            await producer.send_and_wait(name, b"%d" % n, key=b"k", partition=0)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition(name, 0)
        consumer.assign([tp, TopicPartition(name, 1)])
        await consumer.seek_to_beginning(tp)
        fetched: list[bytes] = []
        while len(fetched) < 3:
            batch = await consumer.getmany(tp, timeout_ms=2000)
            fetched += [r.value for r in batch.get(tp, [])]
        assert fetched == [b"0", b"1", b"2"]
        positions = await fetch_positions(OnThisLoop(consumer))
        assert positions[TP(name, 0)] == 3
        assert positions.get(TP(name, 1), 0) == 0  # nothing there: at its start, or resetting
        assert await log_starts(OnThisLoop(consumer), [TP(name, 0)]) == {TP(name, 0): 0}
    finally:
        await consumer.stop()
