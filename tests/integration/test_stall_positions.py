"""The stall watch on a real aiokafka consumer: positions, log starts, and the re-read."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

import faust
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from faust.types import TP

from learnstream.agents.seams.faust_compat import (
    fetch_positions,
    log_starts,
    seek_on_consumer_thread,
)
from learnstream.agents.seams.stall_watch import Stalls
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.admin import create_topics
from learnstream.streams.offsets.progress import Progress
from tests.support.apps import close_consumer_loop

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

    def highwater(self, tp: Any) -> int | None:
        return self.consumer.highwater(TopicPartition(tp.topic, tp.partition))


async def test_positions_follow_what_was_fetched_and_logs_start_at_their_first_record(
    broker: Any, namespace: str
) -> None:
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    name = topics.name("plans")
    await _produce(broker.bootstrap, name, 3)
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition(name, 0)
        consumer.assign([tp, TopicPartition(name, 1)])
        await consumer.seek_to_beginning(tp)
        assert await _values(consumer, tp, 3) == [b"0", b"1", b"2"]
        positions = await fetch_positions(OnThisLoop(consumer))
        assert positions[TP(name, 0)] == 3
        assert positions.get(TP(name, 1), 0) == 0  # nothing there: at its start, or resetting
        assert await log_starts(OnThisLoop(consumer), [TP(name, 0)]) == {TP(name, 0): 0}
    finally:
        await consumer.stop()


@asynccontextmanager
async def watched(broker: Any, namespace: str, monkeypatch: pytest.MonkeyPatch, name: str):
    """Yield a Faust app with one agent on ``plans`` (3 records on its partition 0) whose
    consumer thread runs calls on a real aiokafka consumer, assigned that partition, and the
    partition; everything is stopped after."""
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    topic = topics.name("plans")
    await _produce(broker.bootstrap, topic, 3)
    app = faust.App(name, broker="kafka://127.0.0.1:9", store="memory://")
    app.agent(app.topic(topic, value_serializer="raw"), name="plans")(_never_started)
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        monkeypatch.setattr(app.consumer, "_thread", OnThisLoop(consumer))
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        yield app, consumer, tp
    finally:
        await consumer.stop()
        monkeypatch.undo()  # the consumer's own thread back, to close its loop
        close_consumer_loop(app)


async def test_records_fetched_and_never_handed_over_are_fetched_again(
    broker: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Faust handed record 0 of a fetched batch over and dropped 1 and 2 (a rebalance or a
    flow stop mid-batch): the stall watch seeks back and the broker gives them again."""
    async with watched(broker, namespace, monkeypatch, "stall-it") as (app, consumer, tp):
        assert await _values(consumer, tp, 3) == [b"0", b"1", b"2"]
        progress = Progress(gated=False)
        progress.seek = seek_on_consumer_thread(app.consumer)
        progress.handed[TP(tp.topic, 0)] = 1  # only record 0 reached the agents
        stalls = Stalls(app, progress)
        stalls.watch.after_s = 0.0
        await stalls.check()
        await stalls.check()
        assert await _values(consumer, tp, 2) == [b"1", b"2"]


async def test_a_partition_behind_its_high_watermark_is_fetched_afresh(
    broker: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The high watermark is read from the real consumer, and the seek to the position of a
    partition fetching nothing is taken: the records behind it come."""
    async with watched(broker, namespace, monkeypatch, "idle-it") as (app, consumer, tp):
        batch = await consumer.getmany(tp, timeout_ms=5000, max_records=1)
        assert [r.value for r in batch[tp]] == [b"0"]
        assert consumer.highwater(tp) == 3  # records 1 and 2 are on the broker
        progress, sought = Progress(gated=False), []
        seek = seek_on_consumer_thread(app.consumer)

        async def seek_and_note(at: Any, offset: int) -> None:
            sought.append((at, offset))
            await seek(at, offset)

        progress.seek = seek_and_note
        progress.handed[TP(tp.topic, 0)] = 1
        stalls = Stalls(app, progress)
        stalls.idle.after_s = 0.0
        await stalls.check()
        await stalls.check()
        assert sought == [(TP(tp.topic, 0), 1)]  # its position, read from the real consumer
        assert await _values(consumer, tp, 2) == [b"1", b"2"]  # the seek was taken


async def _produce(bootstrap: str, name: str, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_batch_size=1)
    await producer.start()
    try:
        for n in range(count):  # one record per batch: the embedded broker counts batches
            await producer.send_and_wait(name, b"%d" % n, key=b"k", partition=0)
    finally:
        await producer.stop()


async def _values(consumer: AIOKafkaConsumer, tp: TopicPartition, count: int) -> list[bytes]:
    """Fetch until ``count`` values came, or for 10 s."""
    fetched: list[bytes] = []
    for _ in range(5):
        if len(fetched) >= count:
            break
        batch = await consumer.getmany(tp, timeout_ms=2000)
        fetched += [r.value for r in batch.get(tp, [])]
    return fetched


async def _never_started(stream: Any) -> None:
    async for _ in stream:  # pragma: no cover - the app never starts
        pass
