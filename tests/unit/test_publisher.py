"""The runtime publisher validates, keys by plan_id and never blocks (no broker needed).

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import orjson
import pytest
from pydantic import ValidationError

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.sim.simulate import Simulator


def _publisher(buffer_size: int = 3) -> RuntimePublisher:
    # Not started: records stay in the buffer, which is what these tests look at.
    return RuntimePublisher("127.0.0.1:1", TopicSettings(prefix="x."), buffer_size=buffer_size)


async def test_full_buffer_drops_and_reports_instead_of_blocking():
    pub, sim = _publisher(buffer_size=3), Simulator(seed=1)
    snaps = [sim.plan(datetime.now(UTC)) for _ in range(5)]
    accepted = [pub.publish_plan(snap) for snap in snaps]
    assert accepted == [True, True, True, False, False]
    assert (pub.stats.accepted, pub.stats.dropped) == (3, 2)


async def test_records_are_keyed_by_plan_id_on_their_topic():
    pub, sim = _publisher(buffer_size=10), Simulator(seed=2)
    snap, now = sim.plan(datetime.now(UTC)), datetime.now(UTC)
    pub.publish_plan(snap)
    pub.publish_decision(sim.decision(snap, False, now))
    pub.publish_delta(sim.delta(snap, now))
    pub.publish_stage(sim.stage(snap, "completed", now))
    queued = [pub._queue.get_nowait() for _ in range(4)]
    plan_key = snap["plan"]["plan_id"].encode()
    assert [(topic, key) for topic, key, _ in queued] == [
        ("x.mplp.plans", plan_key),
        ("x.mplp.plan_rejected", plan_key),
        ("x.mplp.delta_intents", plan_key),
        ("x.mplp.pipeline_stage", plan_key),
    ]


async def test_core_events_are_keyed_by_the_plan_they_name_else_by_themselves():
    pub, sim = _publisher(buffer_size=10), Simulator(seed=4)
    snap, now = sim.plan(datetime.now(UTC)), datetime.now(UTC)
    analysis = sim.impact_analysis(sim.delta(snap, now), now)
    cost = sim.core_event("cost_budget", now, {"total_tokens": 120})
    named = {k: v for k, v in analysis["payload"].items() if k != "plan_id"}
    delta_only = analysis | {"payload": named}  # names its delta alone
    assert pub.publish_core_event(analysis)
    assert pub.publish_core_event(cost)
    assert pub.publish_core_event(delta_only, key=snap["plan"]["plan_id"])
    queued = [pub._queue.get_nowait() for _ in range(3)]
    assert [(topic, key) for topic, key, _ in queued] == [
        ("x.mplp.core_events", snap["plan"]["plan_id"].encode()),
        ("x.mplp.core_events", cost["event_id"].encode()),
        ("x.mplp.core_events", snap["plan"]["plan_id"].encode()),  # the delta's partition
    ]
    assert "plan_id" not in orjson.loads(queued[2][2])["payload"]
    assert orjson.loads(queued[0][2])["payload"]["delta_id"] == analysis["payload"]["delta_id"]
    with pytest.raises(ValidationError):
        pub.publish_core_event(cost | {"event_family": "weather"})  # not a family of the schema


async def test_invalid_event_is_rejected_at_the_caller():
    pub, sim = _publisher(), Simulator(seed=3)
    snap = sim.plan(datetime.now(UTC))
    snap["plan"]["plan_id"] = "plan 123"  # ids: UUID v4 or a token like plan-123, no spaces
    with pytest.raises(ValidationError, match="without whitespace"):
        pub.publish_plan(snap)
    assert pub.stats.accepted == 0


async def test_seed_shaped_records_are_accepted_and_keyed_as_sent():
    pub, sim = _publisher(buffer_size=10), Simulator(seed=5)
    snap = sim.plan(datetime.now(UTC))
    snap["plan"]["plan_id"] = "plan-123"
    snap["plan"]["meta"] = {"protocol_version": "1.0.0", "schema_version": "1.0.0"}
    assert pub.publish_plan(snap)
    decision = {  # seed 002 §4.3: no event_id, no timestamp, decided_by
        "event_family": "pipeline_stage",
        "event_type": "plan_approved",
        "payload": {"confirm_id": "confirm-1", "plan_id": "plan-123", "decided_by": "reviewer"},
    }
    assert pub.publish_decision(decision)
    stage = {
        "event_id": "evt-9",
        "event_family": "pipeline_stage",
        "event_type": "pipeline_stage_completed",
        "timestamp": "2026-03-01T12:00:00",
        "pipeline_id": "pipe-1",
        "stage_id": "import",
        "stage_status": "completed",
    }
    assert pub.publish_stage(stage)
    queued = [pub._queue.get_nowait() for _ in range(3)]
    assert [key for _, key, _ in queued] == [b"plan-123", b"plan-123", b"pipe-1"]
    sent = orjson.loads(queued[1][2])
    assert sent["payload"]["decided_by_role"] == "reviewer"
    assert uuid.UUID(sent["event_id"]).version == 4
    assert datetime.fromisoformat(sent["timestamp"]).tzinfo is not None


async def test_bare_plan_is_wrapped_into_a_snapshot():
    pub, sim = _publisher(), Simulator(seed=4)
    plan = sim.plan(datetime.now(UTC))["plan"]
    assert pub.publish_plan(plan)
    _, key, value = pub._queue.get_nowait()
    assert key == plan["plan_id"].encode()
    assert b'"plan":{' in value


async def test_the_producer_is_idempotent_except_on_the_embedded_broker():
    """A batch the producer sends again after a broker died unanswered is stored once only
    by an idempotent producer; the embedded broker (one record per batch) has none."""
    topics = TopicSettings(prefix="x.")
    kafka = RuntimePublisher("127.0.0.1:1", topics)
    embedded = RuntimePublisher("127.0.0.1:1", topics, one_record_per_batch=True)
    forced = RuntimePublisher("127.0.0.1:1", topics, one_record_per_batch=True, idempotent=True)
    # aiokafka keeps an idempotent producer's sequence numbers in its transaction manager
    assert kafka._producer._txn_manager is not None
    assert embedded._producer._txn_manager is None
    assert forced._producer._txn_manager is not None
    leader_only = RuntimePublisher("127.0.0.1:1", topics, acks=1)  # needs no acks=all
    assert leader_only._producer._txn_manager is None
