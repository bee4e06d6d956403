"""The worker's consumer on a real broker asks for short fetches only while it hands over
records it keeps up with (seam 15, agents/seams/faust_compat.py::bound_fetch_wait)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition

from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import BrokerSettings, Settings, TopicSettings
from learnstream.streams.io.admin import create_topics
from learnstream.streams.io.app import create_app
from tests.support.apps import close_consumer_loop

pytestmark = pytest.mark.integration


async def test_fetches_are_short_while_fetched_records_wait_and_long_once_handed_over(
    broker: Any, namespace: str, tmp_path: Path
) -> None:
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    name = topics.name("plans")
    await _produce(broker.bootstrap, name, 3)
    fetching = BrokerSettings(fetch_max_wait_ms=400, fetch_wait_keeping_up_ms=30)
    settings = Settings(data_dir=str(tmp_path), broker=fetching, topics=topics)
    runtime = wire(create_app(settings, f"kafka://{broker.bootstrap}", embedded=False), settings)
    thread = runtime.app.consumer._thread
    consumer = thread._create_worker_consumer(thread.transport)
    try:
        await consumer.start()
        fetcher = consumer._fetcher
        tp = TopicPartition(name, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        await _until(lambda: tp in fetcher._records, "the records fetched")
        # prefetch backoff over, the next fetch leaves the partition out while it waits
        await _until(lambda: fetcher._fetch_max_wait_ms == 30, "a short fetch")
        taken = await consumer.getmany(tp, timeout_ms=5_000)
        assert [record.value for record in taken[tp]] == [b"0", b"1", b"2"]
        await _until(lambda: fetcher._fetch_max_wait_ms == 400, "a long fetch")
    finally:
        await consumer.stop()
        close_consumer_loop(runtime.app)


async def _until(check: Callable[[], bool], what: str) -> None:
    for _ in range(200):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {what} in 10 s")


async def _produce(bootstrap: str, name: str, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_batch_size=1)
    await producer.start()
    try:
        for n in range(count):  # one record per batch: the embedded broker counts batches
            await producer.send_and_wait(name, b"%d" % n, key=b"k", partition=0)
    finally:
        await producer.stop()
