"""``RuntimePublisher.flush()``: what was published before it is on the broker when it returns.

A runtime awaits it between a correction and the execution it should count for, since
Kafka orders records within a partition only (streams/io/publisher.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.readback import count_topic
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.admin import create_topics
from learnstream.streams.io.publisher import RuntimePublisher

pytestmark = pytest.mark.integration


async def test_flush_returns_once_every_record_published_is_on_the_broker(
    broker: Any, namespace: str
) -> None:
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    name = topics.name("delta_intents")
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded, linger_ms=200
    ) as pub:
        for i in range(20):
            assert pub.publish_raw("delta_intents", b"plan-1", b"%d" % i)
        await pub.flush()
        # Asked at once: a linger of 200 ms would still hold them without the flush.
        assert await count_topic(broker.bootstrap, name) == 20
        assert pub.stats.failed == 0


async def test_flush_needs_a_started_publisher(namespace: str) -> None:
    pub = RuntimePublisher("127.0.0.1:9", TopicSettings(prefix=namespace))
    with pytest.raises(RuntimeError, match="not started"):
        await pub.flush()
