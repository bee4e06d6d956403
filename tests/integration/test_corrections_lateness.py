"""``LEARNSTREAM_JOIN__CORRECTIONS_LATENESS`` on a real broker: a correction made before an
execution but landing after the worker read it still counts, when it lands within the lateness.

Kafka orders records within a partition only, so this happens to runtimes that send a
correction and an execution back to back to their two topics (benchmarks/ordering.py).
Without the lateness the worker labels such an execution ``good``: it counts what the broker
held when it read the execution (streams/join/watermark.py, tests/unit/test_watermark.py).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.sim.simulate import Simulator

pytestmark = pytest.mark.integration


async def test_a_correction_landing_within_the_lateness_labels_the_execution(
    broker, start_worker, namespace
):
    topics = TopicSettings(prefix=namespace)
    start_worker(LEARNSTREAM_JOIN__CORRECTIONS_LATENESS="2s", LEARNSTREAM_SAMPLE_FORMAT="json")
    sim, t0 = Simulator(seed=5, pii_ratio=0.0), datetime.now(UTC)
    snap = sim.plan(t0)
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        pub.publish_plan(snap)
        pub.publish_decision(sim.decision(snap, True, t0))
        # Both decision samples out: the worker is caught up and reads the next record at once.
        await read_until(broker.bootstrap, topics.name("samples"), 2)
        pub.publish_stage(sim.stage(snap, "started", t0 + timedelta(milliseconds=2)))
        pub.publish_stage(sim.stage(snap, "completed", t0 + timedelta(milliseconds=3)))
        await pub.flush()
        await asyncio.sleep(0.5)  # the worker has read the execution by now; then the
        pub.publish_delta(sim.delta(snap, t0 + timedelta(milliseconds=1)))  # earlier correction
    assert (pub.stats.dropped, pub.stats.failed) == (0, 0)

    records = await read_until(broker.bootstrap, topics.name("samples"), 4)
    await asyncio.sleep(2.0)  # a second label of the execution would show up now
    samples = [
        decode_any(r.value) for r in await read_topic(broker.bootstrap, topics.name("samples"))
    ]
    assert len(records) >= 4
    got = Counter((s["sample_family"], s["feedback"]["quality_label"]) for s in samples)
    assert got == Counter(
        [
            ("confirm_decision", "good"),
            ("intent_resolution", "good"),
            ("error_correction", "acceptable"),
            ("pipeline_outcome", "acceptable"),
        ]
    )
