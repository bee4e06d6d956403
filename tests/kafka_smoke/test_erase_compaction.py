"""Erasure on Apache Kafka: after `learnstream erase` and the log cleaner's compaction, export
and the consumer API return none of the erased project's samples and pairs, and every other
project's. The topics get a short segment.ms, a low dirty ratio and a short
delete.retention.ms, so the cleaner runs within seconds; the test polls for its result with
a deadline, never a fixed wait."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from click.testing import CliRunner

from learnstream.agents.cli.erase import erase
from learnstream.agents.cli.trainers import export
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.consumer import aiter_pairs, aiter_samples
from learnstream.streams.io.reader import read_topic
from learnstream.streams.samples.ids import canonical_id
from tests.integration.test_erase import feedback, publish, records_of
from tests.support.kafka_server import ApacheKafka

pytestmark = pytest.mark.kafka

#: Compaction within seconds: segments roll on the next append after 100 ms, any dirty
#: share is worth cleaning, and tombstones themselves go 100 ms after a clean.
FAST_COMPACTION = {
    "cleanup.policy": "compact",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "100",
    "min.compaction.lag.ms": "0",
}
#: How long the log cleaner may take (its default backoff between passes is 15 s).
COMPACTION_DEADLINE_S = 240.0
ERASED, KEPT = "proj-a", "proj-b"


@pytest.fixture(scope="module")
def bootstrap(request: pytest.FixtureRequest) -> Iterator[str]:
    """Use the session's Apache Kafka (make test-kafka), else start one for this module."""
    if os.environ.get("LEARNSTREAM_TEST_BROKER") == "kafka" or os.environ.get(
        "KAFKA_BOOTSTRAP_SERVERS"
    ):
        yield request.getfixturevalue("broker").bootstrap
        return
    with ApacheKafka() as kafka:
        yield kafka.bootstrap


async def _create(bootstrap: str, topics: TopicSettings) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = [topics.name(f) for f in ("samples", "preference_pairs", "reward_samples")]
        await admin.create_topics(
            [NewTopic(n, topics.partitions, 1, topic_configs=FAST_COMPACTION) for n in names]
        )
    finally:
        await admin.close()


async def _roll(bootstrap: str, topics: TopicSettings) -> None:
    """Append a tombstone of an unused key to every partition: the active segment, which the
    cleaner never touches, rolls once it is older than segment.ms."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for f in ("samples", "preference_pairs", "reward_samples"):
            for partition in range(topics.partitions):
                key = f"roll-{uuid.uuid4()}".encode()
                await producer.send_and_wait(topics.name(f), None, key=key, partition=partition)
    finally:
        await producer.stop()


async def _erased_left(bootstrap: str, topics: TopicSettings) -> int:
    """Return how many records of the erased project the topics still hold, raw."""
    project = canonical_id(ERASED)
    samples = await read_topic(bootstrap, topics.name("samples"))
    pairs = await read_topic(bootstrap, topics.name("preference_pairs"))
    rewards = await read_topic(bootstrap, topics.name("reward_samples"))
    left = [
        r for r in samples if r.value and decode_any(r.value)["meta"].get("project_id") == project
    ]
    left += [r for r in pairs if r.value and json.loads(r.value)["project_id"] == project]
    left += [r for r in rewards if r.value and ERASED in json.loads(r.value)["prompt"]]
    return len(left)


async def test_erased_project_is_gone_after_compaction(bootstrap: str, tmp_path: Path) -> None:
    topics = TopicSettings(prefix=f"t{uuid.uuid4().hex[:10]}.", partitions=2)
    await _create(bootstrap, topics)
    for fmt, numbers in (("avro", range(3)), ("json", range(3, 5))):
        for project in (ERASED, KEPT):
            records = records_of([feedback(n, project) for n in numbers], fmt)
            records["rewards"] = [  # say whose reward it is, to check the topic raw
                (key, value.replace(b'"prompt":"p"', f'"prompt":"{project}"'.encode()))
                for key, value in records["rewards"]
            ]
            await publish(bootstrap, topics, records)
    assert await _erased_left(bootstrap, topics) == 15
    env = {
        "LEARNSTREAM_BROKER_URL": f"kafka://{bootstrap}",
        "LEARNSTREAM_TOPICS__PREFIX": topics.prefix,
    }
    done = await asyncio.to_thread(
        CliRunner().invoke, erase, ["--project", ERASED, "--yes"], env=env
    )
    assert done.exit_code == 0, done.output
    assert done.output.startswith("tombstoned 15 records"), done.output

    loop = asyncio.get_running_loop()
    deadline, left = loop.time() + COMPACTION_DEADLINE_S, 15
    while left and loop.time() < deadline:
        await _roll(bootstrap, topics)
        await asyncio.sleep(1.0)
        left = await _erased_left(bootstrap, topics)
    assert left == 0, f"{left} erased records still on the topics after {COMPACTION_DEADLINE_S} s"

    kept = sorted(f"{KEPT}-turn-{n}" for n in range(5))
    out = tmp_path / "mplp.jsonl"
    done = await asyncio.to_thread(
        CliRunner().invoke, export, ["--format", "mplp", "--out", str(out)], env=env
    )
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["input"]["correlation_id"] for r in rows) == kept
    samples = [s async for s in aiter_samples(bootstrap=bootstrap, topic=topics.name("samples"))]
    assert sorted(s.input["correlation_id"] for s in samples) == kept
    pairs = [
        p async for p in aiter_pairs(bootstrap=bootstrap, topic=topics.name("preference_pairs"))
    ]
    assert sorted(str(p.intent_id) for p in pairs) == kept
    again = await asyncio.to_thread(
        CliRunner().invoke, erase, ["--project", ERASED, "--yes"], env=env
    )
    assert again.output.startswith("tombstoned 0 records"), again.output
