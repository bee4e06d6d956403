"""Every seed example that is an event or object goes through a real worker and yields its
samples, never a dead letter (seed 002 §2, §4.2, §4.3, §6.2, §7; seeds 000/001 §4).

Records are published as raw bytes, exactly in the seeds' shapes (no publisher validation):
``plan-123`` style ids, ``meta.protocolVersion``, ``decided_by``, no ``event_id`` or
``timestamp`` (§4.3), zone-less times (§6.2's ``datetime.now()``). The seeds show no Plan
JSON, so plans are official-schema Plans with the seeds' ids (and seed 000's
``original_intent``).

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.sample import LearningSample
from tests.conftest import mplp_schema_dir
from tests.support.avro_consumer import plain_read
from tests.support.mplp_learning import learning_validators, mplp_errors

pytestmark = pytest.mark.integration

PLAN_123 = "plan-123"  # seed 002 §6.2
PLAN_7 = "plan-550e8400-e29b-41d4-a716-446655440001"  # seed 002 §7
PLAN_2 = "7c9e6679-7425-40de-944b-e07fc1f90ae7"  # seed 002 §2: UUID v4 ids
PLAN_41 = "plan-seed000-41"  # seed 000/001 §4.1
PLAN_42 = "plan-seed000-42"  # seed 000/001 §4.2


def plan(plan_id: str, meta: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "meta": meta,
        "plan_id": plan_id,
        "context_id": "context-001",
        "title": "Fix login 500 error",
        "objective": "Fix the login 500 error",
        "status": "proposed",
        "steps": [{"step_id": "step-001", "description": "Reproduce", "status": "pending"}],
        **extra,
    }


SEED_7_CONFIRM = {  # seed 002 §7, verbatim
    "meta": {"protocolVersion": "1.0.0", "source": "mplp-runtime"},
    "confirm_id": "confirm-550e8400-e29b-41d4-a716-446655440004",
    "target_type": "plan",
    "target_id": "plan-550e8400-e29b-41d4-a716-446655440001",
    "status": "approved",
    "requested_by_role": "role-planner-001",
    "requested_at": "2025-12-07T00:00:00.000Z",
    "reason": "Requesting approval to fix login 500 error",
    "decisions": [
        {
            "decision_id": "decision-001",
            "status": "approved",
            "decided_by_role": "role-reviewer-001",
            "decided_at": "2025-12-07T00:05:00.000Z",
            "reason": "Plan looks good, approved for execution",
        }
    ],
}
SEED_62_CONFIRM = {  # seed 002 §6.2: Confirm(...).model_dump_json() of its Python SDK
    "confirm_id": "9b2f7c1e-3d4a-4e5b-8c6d-7e8f9a0b1c2d",
    "target_type": "plan",
    "target_id": "plan-123",
    "status": "pending",
    "requested_by_role": "role-planner-001",
    "requested_at": "2025-12-07T00:00:00.123456",
    "reason": "Requesting approval for login fix plan",
    "decisions": [],
}
SEED_2_CONFIRM = {  # seed 002 §2.1: the required fields only
    "meta": {"protocolVersion": "1.0.0"},
    "confirm_id": "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e",
    "target_type": "plan",
    "target_id": PLAN_2,
    "status": "rejected",
    "requested_by_role": "role-planner-001",
    "requested_at": "2025-12-07T00:00:00.000Z",
}


def seed_43(kind: str, plan_id: str, confirm_id: str, **payload: Any) -> dict[str, Any]:
    """Seed 002 §4.3's eventBus.emit: no event_id, no timestamp, ``decided_by``."""
    return {
        "event_family": "pipeline_stage",
        "event_type": kind,
        "payload": {
            "confirm_id": confirm_id,
            "plan_id": plan_id,
            "decided_by": "role-reviewer-001",
            **payload,
        },
    }


def stage(plan_id: str, official: bool) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_id": f"evt-stage-{plan_id}",
        "event_family": "pipeline_stage",
        "event_type": "pipeline_stage_completed",
        "timestamp": "2025-12-07T00:10:00",
        "payload": {"plan_id": plan_id},
    }
    if official:
        event |= {"pipeline_id": "pipeline-1", "stage_id": "execute", "stage_status": "completed"}
    else:
        event["payload"] |= {"stage": "execute", "status": "completed"}
    return event


SEED_42_DELTA = {  # seed 000/001 §4.2: deltaIntent.{changes, feedback_text, corrected_fields}
    "event_id": "evt-delta-42",
    "event_family": "delta_intent",
    "event_type": "delta_intent_created",
    "timestamp": "2025-12-07T00:06:00Z",
    "payload": {
        "delta_id": "delta-42",
        "intent_id": "intent-42",
        "plan_id": PLAN_42,
        "change_summary": "Add a rollback step",
        "feedback_text": "You forgot the rollback",
        "corrected_fields": ["steps"],
        "changes": {"steps_added": 1},
    },
}
OFFICIAL_META = {"protocol_version": "1.0.0", "schema_version": "1.0.0"}
SEED_META = {"protocolVersion": "1.0.0"}
PLANS = [
    plan(PLAN_123, SEED_META),
    plan(PLAN_7, OFFICIAL_META),
    plan(PLAN_2, OFFICIAL_META),
    plan(PLAN_41, SEED_META, original_intent="Users get a 500 when they log in"),
    plan(PLAN_42, OFFICIAL_META),
]
DECISIONS = [
    ("plan_approved", PLAN_123, seed_43("plan_approved", PLAN_123, "confirm-1")),
    (
        "plan_rejected",
        PLAN_123,
        seed_43("plan_rejected", PLAN_123, SEED_62_CONFIRM["confirm_id"], confirm=SEED_62_CONFIRM),
    ),
    (  # seed 002 §7's Confirm alone: it names the plan, the confirm, the role and the reason
        "plan_approved",
        PLAN_7,
        {
            "event_family": "pipeline_stage",
            "event_type": "plan_approved",
            "payload": {"confirm": SEED_7_CONFIRM},
        },
    ),
    (
        "plan_rejected",
        PLAN_2,
        seed_43("plan_rejected", PLAN_2, SEED_2_CONFIRM["confirm_id"], confirm=SEED_2_CONFIRM),
    ),
    (  # seed 000/001 §4.1: confirm.approved
        "plan_approved",
        PLAN_41,
        seed_43(
            "plan_approved",
            PLAN_41,
            "confirm-41",
            confirm={**SEED_7_CONFIRM, "target_id": PLAN_41, "approved": True},
        ),
    ),
]
EXPECTED = Counter(
    [
        ("confirm_decision", "good", PLAN_123),
        ("intent_resolution", "good", PLAN_123),
        ("confirm_decision", "poor", PLAN_123),
        ("intent_resolution", "poor", PLAN_123),
        ("confirm_decision", "good", PLAN_7),
        ("intent_resolution", "good", PLAN_7),
        ("confirm_decision", "poor", PLAN_2),
        ("intent_resolution", "poor", PLAN_2),
        ("confirm_decision", "good", PLAN_41),
        ("intent_resolution", "good", PLAN_41),
        ("pipeline_outcome", "good", PLAN_41),
        ("error_correction", "acceptable", PLAN_42),
        ("pipeline_outcome", "acceptable", PLAN_42),
    ]
)


def raw(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode()


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    """Return the official learning schemas' validators (our agreeing copies without them)."""
    return learning_validators(mplp_schema_dir() / "learning")


def plain_consumer_read(value: bytes) -> dict[str, Any]:
    """Read a sample as a consumer without learnstream's code does, in either format."""
    return plain_read(value) if value[:2] == b"\xc3\x01" else json.loads(value)


@pytest.mark.parametrize("fmt", ["json", "avro"])
async def test_every_seed_example_yields_its_samples_and_no_dead_letter(
    broker: Any, start_worker: Any, namespace: str, fmt: str, validators: dict[str, Any]
) -> None:
    topics = TopicSettings(prefix=namespace)
    start_worker(LEARNSTREAM_SAMPLE_FORMAT=fmt)
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        for decision_type, plan_id, event in DECISIONS:  # before their plans: the join waits
            pub.publish_raw(decision_type, plan_id.encode(), raw(event))
        for snapshot in PLANS:
            pub.publish_raw("plans", snapshot["plan_id"].encode(), raw(snapshot))
        pub.publish_raw("delta_intents", PLAN_42.encode(), raw(SEED_42_DELTA))
        pub.publish_raw("pipeline_stage", PLAN_41.encode(), raw(stage(PLAN_41, official=True)))
    before_stage = sum(EXPECTED.values()) - 1
    await read_until(broker.bootstrap, topics.name("samples"), before_stage)
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        # after its correction: "modifies then executes" is acceptable (seed 000 §4.1)
        pub.publish_raw("pipeline_stage", PLAN_42.encode(), raw(stage(PLAN_42, official=False)))

    records = await read_until(broker.bootstrap, topics.name("samples"), sum(EXPECTED.values()))
    await asyncio.sleep(2.0)  # a duplicate or an extra sample would show up now
    values = [r.value for r in await read_topic(broker.bootstrap, topics.name("samples"))]
    assert all((v[:2] == b"\xc3\x01") == (fmt == "avro") for v in values)
    samples = [decode_any(v) for v in values]
    for value, sample in zip(values, samples, strict=True):
        consumed = plain_consumer_read(value)
        assert consumed == sample  # what any consumer reads is what we meant to write
        assert mplp_errors(validators, consumed) == []
    assert len(records) <= len(samples)
    refs = {canonical_id(p["plan_id"]): p["plan_id"] for p in PLANS}
    got = Counter(
        (s["sample_family"], s["feedback"]["quality_label"], refs[s["meta"]["plan_id"]])
        for s in samples
    )
    assert got == EXPECTED
    assert (await read_topic(broker.bootstrap, topics.name("dlq"))) == []

    for sample in samples:
        LearningSample.model_validate(sample)  # sample_id and every meta id: UUID v4
        plan_id = refs[sample["meta"]["plan_id"]]
        if plan_id != PLAN_2:
            assert sample["meta"]["id_refs"]["plan_id"] == plan_id
    by = {
        (s["sample_family"], refs[s["meta"]["plan_id"]], s["feedback"]["quality_label"]): s
        for s in samples
    }
    assert by[("confirm_decision", PLAN_7, "good")]["output"] == {
        "decision": "approve",
        "status": "approved",
        "decided_by_role": "role-reviewer-001",
        "reasoning": "Plan looks good, approved for execution",  # seed 002 §5: from the Confirm
    }
    assert by[("intent_resolution", PLAN_41, "good")]["input"]["intent_text"] == (
        "Users get a 500 when they log in"
    )
    assert by[("error_correction", PLAN_42, "acceptable")]["feedback"]["details"] == {
        "user_feedback": "You forgot the rollback",
        "corrected_fields": ["steps"],
    }
    assert (
        by[("confirm_decision", PLAN_123, "poor")]["input"]["requested_by_role"]
        == "role-planner-001"
    )
