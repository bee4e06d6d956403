"""The prober reads where a partition's first visible record is, from the broker itself
(agents/seams/prober.py): what ``Progress`` asks before it takes a hole for markers."""

from __future__ import annotations

import pytest
from aiokafka import AIOKafkaProducer
from faust.types import TP

from learnstream.agents.seams.prober import Prober
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.admin import create_topics

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def test_the_prober_finds_the_first_record_at_or_after_an_offset(broker, namespace):
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    name = topics.name("pipeline_stage")
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, max_batch_size=1)
    await producer.start()
    try:
        for n in range(4):  # offsets 0..3 of partition 2
            await producer.send_and_wait(name, b"%d" % n, partition=2)
    finally:
        await producer.stop()
    prober = Prober(broker.bootstrap, "read_uncommitted")
    try:
        tp = TP(name, 2)
        assert await prober.first_visible(tp, 0) == 0
        assert await prober.first_visible(tp, 2) == 2
        assert await prober.first_visible(tp, 4) is None  # the end: nothing at or after
        assert await prober.first_visible(TP(name, 1), 0) is None  # an empty partition
    finally:
        await prober.stop()
