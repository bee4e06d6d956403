"""End to end on a real broker: publisher -> worker -> exact samples, DLQ, no PII."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.sim.simulate import BAD_RECORDS, PII_SAMPLES, Simulator

pytestmark = pytest.mark.integration


async def _publish_scenario(bootstrap: str, topics: TopicSettings, embedded: bool) -> dict:
    """Publish the scenario; return {name: snapshot} and the expected (family, quality, plan)."""
    sim, t0 = Simulator(seed=11, pii_ratio=1.0), datetime.now(UTC)
    project, opted_out = sim.uuid(), sim.uuid()
    snaps = {
        name: sim.plan(t0, project)
        for name in (
            "approved",
            "rejected",
            "corrected",
            "clean_run",
            "failed_run",
            "late",
            "never",
        )
    }
    snaps["opted_out"] = sim.plan(t0, opted_out)
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        pub.publish_consent(opted_out, enabled=False)
        await asyncio.sleep(1.0)  # consent is a separate stream: let it land first
        pub.publish_decision(sim.decision(snaps["late"], True, t0))  # before its plan
        pub.publish_decision(sim.decision(snaps["never"], True, t0))  # plan never comes
        for name, snap in snaps.items():
            if name not in ("late", "never"):
                pub.publish_plan(snap)
        pub.publish_decision(sim.decision(snaps["approved"], True, t0))
        pub.publish_decision(sim.decision(snaps["rejected"], False, t0))
        pub.publish_decision(sim.decision(snaps["opted_out"], True, t0))
        pub.publish_delta(sim.delta(snaps["corrected"], t0 + timedelta(seconds=1), impact=True))
        pub.publish_stage(sim.stage(snaps["clean_run"], "started", t0))
        pub.publish_stage(sim.stage(snaps["clean_run"], "completed", t0))
        pub.publish_stage(sim.stage(snaps["failed_run"], "failed", t0))
        for field, value, _ in BAD_RECORDS:
            pub.publish_raw(field, b"bad-key", value)
        await asyncio.sleep(2.0)
        pub.publish_stage(sim.stage(snaps["corrected"], "completed", t0 + timedelta(seconds=2)))
        pub.publish_plan(snaps["late"])
    assert pub.stats.dropped == 0
    assert pub.stats.failed == 0
    return snaps


def _expected(snaps: dict) -> Counter:
    pid = {name: snap["plan"]["plan_id"] for name, snap in snaps.items()}
    return Counter(
        [
            ("confirm_decision", "good", pid["approved"]),
            ("intent_resolution", "good", pid["approved"]),
            ("confirm_decision", "poor", pid["rejected"]),
            ("intent_resolution", "poor", pid["rejected"]),
            ("confirm_decision", "good", pid["late"]),
            ("intent_resolution", "good", pid["late"]),
            ("confirm_decision", "good", pid["never"]),
            ("error_correction", "acceptable", pid["corrected"]),
            ("delta_impact", "good", pid["corrected"]),
            ("pipeline_outcome", "acceptable", pid["corrected"]),
            ("pipeline_outcome", "good", pid["clean_run"]),
            ("pipeline_outcome", "poor", pid["failed_run"]),
        ]
    )


async def test_scenario_yields_exact_samples_and_dead_letters(broker, start_worker, namespace):
    topics = TopicSettings(prefix=namespace)
    start_worker(LEARNSTREAM_JOIN__GRACE="6", LEARNSTREAM_SAMPLE_FORMAT="avro")
    snaps = await _publish_scenario(broker.bootstrap, topics, broker.embedded)
    expected = _expected(snaps)

    records = await read_until(broker.bootstrap, topics.name("samples"), sum(expected.values()))
    await asyncio.sleep(3.0)  # anything extra (a duplicate, an opted-out sample) shows up now
    records = await read_topic(broker.bootstrap, topics.name("samples"))
    samples = [decode_any(r.value) for r in records]
    got = Counter(
        (s["sample_family"], s["feedback"]["quality_label"], s["meta"]["plan_id"]) for s in samples
    )
    assert got == expected

    from learnstream.streams.encoding.schemas import validate_sample

    for sample in samples:
        assert validate_sample(sample) == [], sample["sample_family"]
        assert records[0].value[:2] == b"\xc3\x01"  # Avro single-object encoding
    wire = json.dumps(samples)
    for kind, value in PII_SAMPLES.items():
        assert value not in wire, f"raw {kind} leaked into a sample"
    assert "<EMAIL_ADDRESS>" in wire
    assert "<PHONE_NUMBER>" in wire
    assert "prod.env" not in wire
    assert "deploy.secret" not in wire
    assert "hunter2" not in wire

    dead = await read_until(broker.bootstrap, topics.name("dlq"), len(BAD_RECORDS) + 1)
    reasons = Counter(dict(r.headers)["reason"].decode() for r in dead)
    assert reasons == Counter([reason for *_, reason in BAD_RECORDS] + ["plan_state_missing"])
    missing = next(r for r in dead if dict(r.headers)["reason"] == b"plan_state_missing")
    assert json.loads(missing.value)["payload"]["plan_id"] == snaps["never"]["plan"]["plan_id"]
    assert dict(missing.headers)["source_topic"].decode() == topics.name("plan_approved")

    events = await read_topic(broker.bootstrap, topics.name("events"))
    announced = {json.loads(e.value)["payload"]["sample_id"] for e in events}
    assert announced == {s["sample_id"] for s in samples}
