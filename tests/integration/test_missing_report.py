"""The fault suites' report of missing samples says where their input records sit.

When a kill run misses samples, the report must tell a record the group committed past
(passed over: lost) from one it never committed (stuck, or still being worked on), per
input partition, without a worker: tests/reliability/harness.py ``where_missing_came_from``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.admin import create_topics
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.sim.simulate import Simulator
from tests.reliability.harness import where_missing_came_from

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def test_the_report_tells_passed_over_records_from_uncommitted_ones(broker, namespace):
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    sim, now = Simulator(seed=3, pii_ratio=0.0), datetime.now(UTC)
    plan = sim.plan(now)
    stages = [sim.stage(plan, "completed", now) for _ in range(4)]
    name, group = topics.name("pipeline_stage"), f"ls-{namespace.rstrip('.')}"
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, max_batch_size=1)
    await producer.start()
    try:
        for stage in stages:  # offsets 0..3 of partition 1
            await producer.send_and_wait(name, orjson.dumps(stage), partition=1)
    finally:
        await producer.stop()
    # no auto-commit: stopping would commit the consumer's own position over ours
    committer = AIOKafkaConsumer(
        bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False
    )
    await committer.start()
    try:
        tp = TopicPartition(name, 1)
        committer.assign([tp])
        await committer.commit({tp: 2})  # offsets 0 and 1 passed over
    finally:
        await committer.stop()
    missing = [sample_id("pipeline_outcome", s["event_id"]) for s in (stages[0], stages[3])]

    report = await where_missing_came_from(
        broker.bootstrap, topics, group, missing, ["pipeline_stage", "plans"]
    )

    lines = report.splitlines()
    assert lines[0] == "missing samples' input records (2 found):"
    assert lines[1].strip().startswith(f"{name}[1] offsets 0..3 (2): committed 2, end ")
    assert lines[1].endswith("1 below the commit")
    assert len(lines) == 2
