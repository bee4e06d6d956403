"""Every Confirm decision becomes a sample: cancellations and targets other than a plan.

Seed 002 §4.3's ``processDecision`` emits ``plan_approved`` for an approval and
``plan_rejected`` for anything else (a cancellation too), with the payload
``{confirm_id, plan_id: target.plan_id, decided_by}``: no ``plan_id`` when the target is a
context or an extension. None of that is a schema violation: a cancellation is a
confirm_decision labelled as no verdict on the plan (``builders.DECISION_LABELS``), a decision
on another target a confirm_decision that joins no plan, and neither resolves an intent.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft7Validator

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.encoding.codecs import (
    AvroSampleCodec,
    JsonSampleCodec,
    SampleCodec,
    decode_any,
)
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.join.rules import on_decision
from learnstream.streams.mplp.decode import RecordOrigin, decode_decision
from learnstream.streams.mplp.models import DecisionEvent, PlanSnapshot
from learnstream.streams.samples.builders import TAXONOMY_DECISIONS
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.state.plan import PlanState, merge_snapshot
from tests.conftest import mplp_schema_dir
from tests.support.avro_consumer import plain_read
from tests.support.mplp_learning import learning_validators, mplp_errors
from tests.unit import test_builders as tb
from tests.unit.test_mplp_inputs import ANY_UUID, FORMATS, official

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
KAFKA_TIME = datetime(2026, 3, 1, 11, 30, tzinfo=UTC)
OTHER_TARGETS = ("context", "trace", "extension", "other")
TARGET_ID = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
CODECS: dict[str, SampleCodec] = {"json": JsonSampleCodec(), "avro": AvroSampleCodec()}
#: What a cancellation's confirm_decision says: no approval, no rejection, no verdict.
CANCELLED_LABELS = {
    "decision": "cancelled",
    "feedback_type": "score",
    "quality_label": "acceptable",
    "human_feedback_label": "not_reviewed",
}


def confirm(
    status: str = "cancelled", target_type: str = "plan", target_id: str = tb.PLAN_ID
) -> dict[str, Any]:
    """Return a Confirm as seed 002 §6.1 builds it, after ``addDecision(status)``."""
    return {
        "meta": {"protocolVersion": "1.0.0"},
        "confirm_id": tb.CONFIRM_ID,
        "target_type": target_type,
        "target_id": target_id,
        "status": status,
        "requested_by_role": "role-planner-001",
        "requested_at": "2026-03-01T11:00:00Z",
        "reason": "Requesting approval",
        "decisions": [
            {
                "decision_id": tb.DELTA_ID,
                "status": status,
                "decided_by_role": "role-reviewer-001",
                "decided_at": "2026-03-01T11:29:00Z",
                "reason": "No longer needed",
            }
        ],
    }


def process_decision(
    obj: dict[str, Any], *, riding: bool = True, project: str | None = tb.PROJECT_ID
) -> tuple[str, dict[str, Any]]:
    """Return (event type, event) as seed 002 §4.3 emits them for the Confirm ``obj``: no
    event_id or timestamp, ``plan_id`` only when the target is a plan; ``riding``: the
    Confirm rides along (``confirm``, docs/architecture.md §3)."""
    decision = obj["decisions"][-1]
    kind = "plan_approved" if decision["status"] == "approved" else "plan_rejected"
    payload: dict[str, Any] = {
        "confirm_id": obj["confirm_id"],
        "decided_by": decision["decided_by_role"],
    }
    if obj["target_type"] == "plan":
        payload["plan_id"] = obj["target_id"]
    if riding:
        payload["confirm"] = obj
    event: dict[str, Any] = {
        "event_family": "pipeline_stage",
        "event_type": kind,
        "payload": payload,
    }
    if project is not None:
        event["project_id"] = project
    return kind, event


def decoded(kind: str, event: dict[str, Any], offset: int = 7) -> DecisionEvent:
    """Decode ``event`` as the worker does, from offset ``offset`` of its topic."""
    origin = RecordOrigin(f"mplp.{kind}", 0, offset, KAFKA_TIME)
    return decode_decision(json.dumps(event).encode(), kind, origin=origin)


def state_of(plan_id: str = tb.PLAN_ID) -> PlanState:
    snap = tb.snapshot().model_dump(mode="json", exclude_none=True)
    snap["plan"]["plan_id"] = plan_id
    state = merge_snapshot(None, PlanSnapshot.model_validate(snap), tb.T0)
    assert state is not None
    return state


def labels(sample: LearningSample) -> dict[str, str]:
    return {
        "decision": sample.output["status"],
        "feedback_type": sample.feedback.type,
        "quality_label": sample.feedback.quality_label,
        "human_feedback_label": sample.meta.human_feedback_label,
    }


def families(samples: list[LearningSample]) -> list[str]:
    return [s.sample_family for s in samples]


@pytest.fixture(scope="module")
def validators() -> dict[str, Draft7Validator]:
    """The official learning schemas (the shipped copies unless overridden: no skip)."""
    return learning_validators(mplp_schema_dir() / "learning")


# --- cancelled ---------------------------------------------------------------------------


def test_a_cancelled_confirm_is_a_confirm_decision_and_no_intent_resolution() -> None:
    """The architecture §3 payload with the Confirm riding along, status ``cancelled``."""
    event = {
        "event_id": tb.DECISION_EVENT,
        "event_family": "pipeline_stage",
        "event_type": "plan_rejected",
        "timestamp": "2026-03-01T11:30:00Z",
        "project_id": tb.PROJECT_ID,
        "payload": {
            "plan_id": tb.PLAN_ID,
            "confirm_id": tb.CONFIRM_ID,
            "decided_by_role": "role-reviewer-001",
            "confirm": confirm("cancelled"),
        },
    }
    decision = decode_decision(orjson.dumps(event), "plan_rejected")
    assert (decision.decision, decision.judges_plan) == ("cancelled", False)
    outcome = on_decision(decision, state_of(), NOW)  # the plan known and settled
    assert (families(outcome.samples), outcome.park) == (["confirm_decision"], False)
    (sample,) = outcome.samples
    assert labels(sample) == CANCELLED_LABELS
    assert sample.output == {
        "decision": "unknown",
        "status": "cancelled",
        "decided_by_role": "role-reviewer-001",
        "reasoning": "No longer needed",
    }
    assert sample.input["target_type"] == "plan"
    assert sample.meta.plan_id == tb.PLAN_ID


def test_a_cancellation_as_seed_002_emits_it_is_one_confirm_decision() -> None:
    """``plan_rejected``, ``decided_by``, no event id or time, the cancelled Confirm along."""
    kind, event = process_decision(confirm("cancelled"))
    assert kind == "plan_rejected"
    assert not {"event_id", "timestamp"} & set(event)
    decision = decoded(kind, event)
    for state in (None, state_of()):  # with or without the plan: the same one sample
        outcome = on_decision(decision, state, NOW)
        assert (families(outcome.samples), outcome.park) == (["confirm_decision"], False)
        assert labels(outcome.samples[0]) == CANCELLED_LABELS
        assert outcome.samples[0].meta.event_time == "2026-03-01T11:30:00Z"  # Kafka's time


def test_a_cancellation_naming_no_project_waits_for_the_plan_then_goes_out_once() -> None:
    _, event = process_decision(confirm("cancelled"), project=None)
    decision = decoded("plan_rejected", event)
    waiting = on_decision(decision, None, NOW)
    assert (waiting.samples, waiting.park) == ([], True)  # only the plan names the project
    replayed = on_decision(decision, state_of(), NOW, confirmed=False)
    assert families(replayed.samples) == ["confirm_decision"]
    assert replayed.samples[0].meta.project_id == tb.PROJECT_ID  # the plan's
    assert labels(replayed.samples[0]) == CANCELLED_LABELS
    assert not replayed.park


def test_a_plain_rejection_still_judges_the_plan() -> None:
    """The label rule of a cancellation does not leak into a rejection of the same shape."""
    _, event = process_decision(confirm("rejected"))
    outcome = on_decision(decoded("plan_rejected", event), state_of(), NOW)
    assert [(s.sample_family, s.feedback.quality_label) for s in outcome.samples] == [
        ("confirm_decision", "poor"),
        ("intent_resolution", "poor"),
    ]
    assert outcome.samples[0].meta.human_feedback_label == "rejected"


# --- targets other than a plan ------------------------------------------------------------


@pytest.mark.parametrize("target", OTHER_TARGETS)
@pytest.mark.parametrize(
    ("status", "quality", "human"),
    [
        ("approved", "good", "approved"),
        ("rejected", "poor", "rejected"),
        ("cancelled", "acceptable", "not_reviewed"),
    ],
)
def test_another_target_is_a_confirm_decision_without_a_plan(
    target: str, status: str, quality: str, human: str
) -> None:
    kind, event = process_decision(confirm(status, target, TARGET_ID))
    assert "plan_id" not in event["payload"]
    decision = decoded(kind, event)
    assert (decision.target_type, decision.join_plan_id) == (target, None)
    outcome = on_decision(decision, None, NOW)  # no plan state, and none needed
    assert (families(outcome.samples), outcome.park) == (["confirm_decision"], False)
    sample = outcome.samples[0]
    assert (sample.feedback.quality_label, sample.meta.human_feedback_label) == (quality, human)
    assert sample.output["status"] == status
    assert sample.output["decision"] == TAXONOMY_DECISIONS[status]
    assert sample.input == {
        "confirm_id": tb.CONFIRM_ID,
        "target_type": target,
        "target_id": TARGET_ID,
        "risk_label": "unknown",
        "requested_by_role": "role-planner-001",
        "request_reason": "Requesting approval",
        "decision_count": 1,
    }
    assert sample.meta.plan_id is None
    assert sample.meta.project_id == tb.PROJECT_ID


def test_a_trace_naming_its_plan_makes_no_intent_resolution() -> None:
    """A payload plan_id beside a trace Confirm does not make it a verdict on the plan."""
    kind, event = process_decision(confirm("approved", "trace", TARGET_ID))
    event["payload"]["plan_id"] = tb.PLAN_ID
    decision = decoded(kind, event)
    assert decision.join_plan_id is None
    outcome = on_decision(decision, state_of(), NOW)
    assert families(outcome.samples) == ["confirm_decision"]
    assert outcome.samples[0].input["plan_id"] == tb.PLAN_ID


def test_a_trace_naming_an_unheld_plan_and_no_project_waits_for_the_plans_consent() -> None:
    """Privacy: only the plan can say whose consent applies, so the decision waits for it
    (as a decision on the plan itself does) instead of leaving under the global switch."""
    kind, event = process_decision(confirm("approved", "trace", TARGET_ID), project=None)
    event["payload"]["plan_id"] = tb.PLAN_ID
    decision = decoded(kind, event)
    waiting = on_decision(decision, None, NOW)
    assert (waiting.samples, waiting.park) == ([], True)
    completed = on_decision(decision, state_of(), NOW)
    assert families(completed.samples) == ["confirm_decision"]
    assert completed.samples[0].meta.project_id == tb.PROJECT_ID  # the plan's
    assert not completed.park


def test_seed_002_payload_of_another_target_without_the_confirm() -> None:
    """``{confirm_id, decided_by}`` only: the target is unknown, and not a plan."""
    _, event = process_decision(confirm("approved", "context", TARGET_ID), riding=False)
    assert sorted(event["payload"]) == ["confirm_id", "decided_by"]
    decision = decoded("plan_approved", event)
    assert (decision.target_type, decision.join_plan_id) == (None, None)
    outcome = on_decision(decision, None, NOW)
    assert [(s.sample_family, s.feedback.quality_label) for s in outcome.samples] == [
        ("confirm_decision", "good")
    ]
    # the target is not known: the official enum's "other"
    assert outcome.samples[0].input == {
        "confirm_id": tb.CONFIRM_ID,
        "target_type": "other",
        "risk_label": "unknown",
    }
    assert not outcome.park


# --- the samples are MPLP, in JSON and in Avro --------------------------------------------


def _every_kind() -> list[LearningSample]:
    samples = []
    for status in ("approved", "rejected", "cancelled"):
        for target in ("plan", *OTHER_TARGETS):
            kind, event = process_decision(confirm(status, target, TARGET_ID), project=None)
            samples += on_decision(decoded(kind, event), state_of(TARGET_ID), NOW).samples
    return samples


SAMPLES = [s.to_dict() for s in _every_kind()]


def test_every_status_and_target_is_covered() -> None:
    confirms = [s for s in SAMPLES if s["sample_family"] == "confirm_decision"]
    assert len(confirms) == 15
    assert len({(s["input"]["target_type"], s["output"]["status"]) for s in confirms}) == 15
    assert sum(s["sample_family"] == "intent_resolution" for s in SAMPLES) == 2  # plan only
    assert {s["meta"]["human_feedback_label"] for s in confirms} == {
        "approved",
        "rejected",
        "not_reviewed",
    }


@pytest.mark.parametrize("fmt", ["json", "avro"])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s["sample_id"][:8])
def test_samples_validate_against_the_official_learning_schemas(
    validators: dict[str, Draft7Validator], sample: dict[str, Any], fmt: str
) -> None:
    data = CODECS[fmt].encode(sample)
    consumed = plain_read(data) if fmt == "avro" else json.loads(data)
    assert consumed == sample
    assert mplp_errors(validators, consumed) == []
    assert validate_sample(consumed) == []  # ours too: feedback block, UUID v4 ids
    assert decode_any(data) == sample


def test_the_validation_would_catch_a_label_outside_the_official_enum(
    validators: dict[str, Draft7Validator],
) -> None:
    cancelled = next(s for s in SAMPLES if s["output"].get("status") == "cancelled")
    broken = {**cancelled, "meta": {**cancelled["meta"], "human_feedback_label": "cancelled"}}
    assert any("'cancelled' is not one of" in e for e in mplp_errors(validators, broken))


# --- the property: whatever the official schema allows, never a schema_violation ------------


CONFIRM_SCHEMA = official(mplp_schema_dir(), "mplp-confirm.schema.json")
DECISION_SCHEMA = CONFIRM_SCHEMA["properties"]["decisions"]["items"]


def _check_decision(
    generated: dict[str, Any], decision: dict[str, Any], riding: bool, project: str | None
) -> None:
    """Send ``decision`` on ``generated`` as processDecision does; check what it comes to."""
    obj = {**generated, "decisions": [*generated.get("decisions", []), decision]}
    obj["status"] = decision["status"]  # processDecision: confirm.status = decision.status
    kind, event = process_decision(obj, riding=riding, project=project)
    try:
        got = decoded(kind, event)
    except InvalidEvent as exc:
        raise AssertionError(f"{exc.reason}: {exc} for {json.dumps(obj)[:2000]}") from None
    on_plan = obj["target_type"] == "plan"
    told = decision["status"] if riding else ("approved" if kind == "plan_approved" else "rejected")
    assert got.decision == told
    state = state_of(obj["target_id"]) if on_plan else None
    outcome = on_decision(got, state, NOW)
    expected = ["confirm_decision"]
    if on_plan and told != "cancelled":
        expected.append("intent_resolution")
    assert (families(outcome.samples), outcome.park) == (expected, False)
    sample = outcome.samples[0]
    assert sample.output["status"] == told
    assert sample.meta.plan_id == (canonical_id(obj["target_id"]) if on_plan else None)
    assert validate_sample(sample.to_dict()) == []


@pytest.mark.parametrize("riding", [True, False], ids=["with_confirm", "seed_payload_only"])
def test_decisions_of_official_confirms_are_never_schema_violations(riding: bool) -> None:
    """Confirms and decisions generated from the official schema, each pair checked with
    every target and every decision status pinned, so that every combination is run on
    each generated pair (generating is the slow part; checking is cheap)."""
    seen = Counter[tuple[str, str]]()

    @settings(
        max_examples=10,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        from_schema(CONFIRM_SCHEMA, custom_formats=FORMATS),
        from_schema(DECISION_SCHEMA, custom_formats=FORMATS),
        st.none() | ANY_UUID,
    )
    def run(generated: dict[str, Any], decision: dict[str, Any], project: str | None) -> None:
        for target in ("plan", *OTHER_TARGETS):
            for status in ("approved", "rejected", "cancelled"):
                confirm = {**generated, "target_type": target}
                _check_decision(confirm, {**decision, "status": status}, riding, project)
                seen[target, status] += 1

    run()
    combinations = [
        (t, s) for t in ("plan", *OTHER_TARGETS) for s in ("approved", "rejected", "cancelled")
    ]
    assert sorted(seen) == sorted(combinations)
    assert min(seen.values()) >= 10
