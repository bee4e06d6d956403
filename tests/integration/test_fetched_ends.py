"""A consumer's fetch responses answer where a partition ends, as a ListOffsets request does
(seam 17 of agents/seams/faust_compat.py): what the corrections watermark and the consent
fence take when a fetch answers before their round."""

from __future__ import annotations

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from learnstream.agents.seams.faust_compat import note_fetched_ends
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.admin import create_topics
from learnstream.streams.offsets.fetched import FetchedEnds

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def fetched_end(
    consumer: AIOKafkaConsumer, ends: FetchedEnds[TopicPartition], tp: TopicPartition
) -> int:
    """Return ``tp``'s end from a fetch sent from now on, reading what comes meanwhile."""
    since = ends.clock()
    answered = ends.after([tp], since)
    while not answered.done():
        await consumer.getmany(tp, timeout_ms=100)
    got = ends.ends([tp], since)
    assert got is not None
    return got[tp]


async def test_each_fetch_notes_the_end_a_list_offsets_request_answers(broker, namespace):
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    name, other = topics.name("delta_intents"), topics.name("pipeline_stage")
    tp = TopicPartition(name, 1)
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=broker.bootstrap, group_id=None, fetch_max_wait_ms=50
    )
    ends: FetchedEnds[TopicPartition] = FetchedEnds([name])
    await producer.start()
    await consumer.start()
    try:
        note_fetched_ends(consumer, ends)
        consumer.assign([tp, TopicPartition(other, 1)])
        await consumer.seek_to_beginning()
        assert await fetched_end(consumer, ends, tp) == 0  # empty
        for n in range(3):
            await producer.send_and_wait(name, b"%d" % n, partition=1)
        await producer.send_and_wait(other, b"not watched", partition=1)
        end = await fetched_end(consumer, ends, tp)
        assert end == (await consumer.end_offsets([tp]))[tp]
        assert end >= 1  # the embedded broker counts batches, Apache Kafka records (3)
        assert ends.ends([TopicPartition(other, 1)], 0.0) is None  # not a watched topic
        later = ends.clock()  # the fetcher runs on this loop: none is answered before an await
        assert ends.ends([tp], later) is None
    finally:
        await consumer.stop()
        await producer.stop()
