"""Builders and join outcomes: every family and quality rule, pure, deterministic.

The rules are those of docs/architecture.md §4.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from learnstream.streams.join.rules import (
    IMPACT_ONLY_TYPE,
    Outcome,
    on_decision,
    on_delta,
    on_stage,
)
from learnstream.streams.mplp.models import (
    DecisionEvent,
    DeltaIntentEvent,
    PlanSnapshot,
    StageEvent,
)
from learnstream.streams.samples import builders
from learnstream.streams.samples.ids import (
    canonical_id,
    derived_uuid,
    objective_intent_id,
    sample_id,
)
from learnstream.streams.samples.sample import Feedback, LearningSample, SampleMeta, family_errors
from learnstream.streams.state.plan import PlanState, StageMark, merge_snapshot, record_stage

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
T0 = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
PLAN_ID = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
CONTEXT_ID = "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e"
STEP_ID = "6c7d8e9f-0a1b-4c2d-9e3f-4a5b6c7d8e9f"
PROJECT_ID = "0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
CONFIRM_ID = "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e"
DELTA_ID = "4d5e6f7a-8b9c-4d0e-8f1a-2b3c4d5e6f7a"
DECISION_EVENT = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
DELTA_EVENT = "7a8b9c0d-1e2f-4a3b-9c4d-5e6f7a8b9c0d"
STAGE_EVENT = "8b9c0d1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e"
META = {"producer": "learnstream/0.1.0", "protocol_version": "1.0.0", "plan_id": PLAN_ID}


def snapshot(*, intent: bool = True, status: str = "proposed") -> PlanSnapshot:
    data: dict[str, Any] = {
        "plan": {
            "meta": {"protocolVersion": "1.0.0", "updated_at": "2026-03-01T10:00:00Z"},
            "plan_id": PLAN_ID,
            "context_id": CONTEXT_ID,
            "title": "Add a cache",
            "objective": "Add a Redis cache in front of the orders API",
            "status": status,
            "steps": [{"step_id": STEP_ID, "description": "Measure latency"}],
        },
        "context": {"repo": "acme/orders"},
        "project_id": PROJECT_ID,
    }
    if intent:
        data["intent"] = {"intent_id": "intent-42", "text": "make orders faster"}
    return PlanSnapshot.model_validate(data)


def plan_state(*, deltas: int = 0, intent: bool = True) -> PlanState:
    state = merge_snapshot(None, snapshot(intent=intent), T0)
    assert state is not None
    return state.model_copy(update={"delta_ids": tuple(f"d{i}" for i in range(deltas))})


def decision(
    kind: str = "plan_approved", project: str | None = PROJECT_ID, **payload: Any
) -> DecisionEvent:
    event: dict[str, Any] = {
        "event_id": DECISION_EVENT,
        "event_family": "pipeline_stage",
        "event_type": kind,
        "timestamp": "2026-03-01T11:30:00Z",
        "payload": {
            "plan_id": PLAN_ID,
            "confirm_id": CONFIRM_ID,
            "decided_by_role": "reviewer",
            **payload,
        },
    }
    if project is not None:
        event["project_id"] = project
    return DecisionEvent.model_validate(event)


def delta(
    impact: dict[str, Any] | None = None, kind: str = "delta_intent_created"
) -> DeltaIntentEvent:
    payload: dict[str, Any] = {
        "delta_id": DELTA_ID,
        "intent_id": "intent-42",
        "plan_id": PLAN_ID,
        "delta_type": "refinement",
        "change_summary": "Add a rollback step",
        "feedback_text": "you forgot the rollback",
        "corrected_fields": ["steps"],
        "changes": {"steps_added": 1},
    }
    if impact is not None:
        payload["impact"] = impact
    return DeltaIntentEvent.model_validate(
        {
            "event_id": DELTA_EVENT,
            "event_family": "delta_intent",
            "event_type": kind,
            "timestamp": "2026-03-01T11:40:00Z",
            "project_id": PROJECT_ID,
            "payload": payload,
        }
    )


def stage(status: str = "completed", name: str = "execute", **extra: Any) -> StageEvent:
    return StageEvent.model_validate(
        {
            "event_id": STAGE_EVENT,
            "event_family": "pipeline_stage",
            "event_type": f"stage_{status}",
            "timestamp": "2026-03-01T11:50:00Z",
            "project_id": PROJECT_ID,
            "payload": {"plan_id": PLAN_ID, "stage": name, "status": status, **extra},
        }
    )


IMPACT = {
    "actual_impact_summary": "Two services redeployed",
    "impact_scope": "module",
    "comp_plan_required": False,
    "rollback_used": False,
    "risk_level": "medium",
}


def families(samples: list[LearningSample]) -> list[tuple[str, str]]:
    return [(s.sample_family, s.feedback.quality_label) for s in samples]


# --- decisions ------------------------------------------------------------------------------


def test_approval_with_plan_yields_confirm_decision_and_intent_resolution() -> None:
    outcome = on_decision(decision(), plan_state(), NOW)
    assert families(outcome.samples) == [
        ("confirm_decision", "good"),
        ("intent_resolution", "good"),
    ]
    assert outcome.park is False
    assert outcome.new_state is None
    assert outcome.samples[1].to_dict() == {
        "sample_id": sample_id("intent_resolution", DECISION_EVENT),
        "sample_family": "intent_resolution",
        "created_at": "2026-03-01T12:00:00.123456Z",
        "input": {
            "intent_id": "intent-42",
            "raw_request_summary": "make orders faster",
            "intent_text": "make orders faster",
            "context": {"repo": "acme/orders"},
        },
        "output": {
            "final_intent_summary": "Add a Redis cache in front of the orders API",
            "plan_id": PLAN_ID,
            "plan_title": "Add a cache",
            "plan_step_count": 1,
            "plan_structure": [{"description": "Measure latency", "status": "pending"}],
            "resolution_quality_label": "good",
        },
        "state": {"plan_status": "proposed", "corrections_so_far": 0},
        "feedback": {
            "source": "user",
            "type": "approval",
            "details": {"decided_by_role": "reviewer"},
            "quality_label": "good",
        },
        "meta": {
            "source_event_ids": [DECISION_EVENT],
            "project_id": PROJECT_ID,
            "human_feedback_label": "approved",
            "event_time": "2026-03-01T11:30:00Z",
            "quality_score": 1.0,
            **META,
        },
    }


def test_rejection_is_poor_and_resolution_bad() -> None:
    outcome = on_decision(decision("plan_rejected", reason="Missing a rollback"), plan_state(), NOW)
    assert families(outcome.samples) == [
        ("confirm_decision", "poor"),
        ("intent_resolution", "poor"),
    ]
    confirm, intent = (s.to_dict() for s in outcome.samples)
    assert intent["output"]["resolution_quality_label"] == "bad"
    assert intent["meta"]["human_feedback_label"] == "rejected"
    assert intent["feedback"] == {
        "source": "user",
        "type": "rejection",
        "quality_label": "poor",
        "details": {"decided_by_role": "reviewer", "reason": "Missing a rollback"},
    }
    assert confirm["output"] == {
        "decision": "reject",
        "status": "rejected",
        "decided_by_role": "reviewer",
        "reasoning": "Missing a rollback",
    }
    assert confirm["feedback"] == intent["feedback"]


def test_confirm_decision_carries_the_confirm_object() -> None:
    confirm = {
        "meta": {"protocolVersion": "1.0.0"},
        "confirm_id": CONFIRM_ID,
        "target_type": "plan",
        "target_id": PLAN_ID,
        "status": "approved",
        "requested_by_role": "planner",
        "requested_at": "2026-03-01T11:00:00Z",
        "reason": "touches prod",
        "decisions": [
            {
                "decision_id": DELTA_ID,
                "status": "approved",
                "decided_by_role": "reviewer",
                "decided_at": "2026-03-01T11:29:00Z",
            }
        ],
    }
    sample = builders.build_confirm_decision(decision(confirm=confirm), None, NOW).to_dict()
    assert sample["input"] == {
        "plan_id": PLAN_ID,
        "confirm_id": CONFIRM_ID,
        "target_type": "plan",
        "target_id": PLAN_ID,
        "risk_label": "unknown",
        "requested_by_role": "planner",
        "request_reason": "touches prod",
        "decision_count": 1,
    }
    assert sample["output"] == {
        "decision": "approve",
        "status": "approved",
        "decided_by_role": "reviewer",
        "reasoning": "",
    }
    assert sample["meta"]["human_feedback_label"] == "approved"
    assert sample["meta"]["project_id"] == PROJECT_ID
    assert "state" not in sample


def test_confirm_decision_has_the_taxonomy_fields_from_the_bare_payload() -> None:
    """Only what the official event carries (no Confirm riding along): the target is the
    plan the payload names, the risk is not known, the reason is the reasoning."""
    sample = builders.build_confirm_decision(
        decision("plan_rejected", reason="no rollback"), None, NOW
    ).to_dict()
    assert sample["input"] == {
        "plan_id": PLAN_ID,
        "confirm_id": CONFIRM_ID,
        "target_type": "plan",
        "target_id": PLAN_ID,
        "risk_label": "unknown",
    }
    assert sample["output"] == {
        "decision": "reject",
        "status": "rejected",
        "decided_by_role": "reviewer",
        "reasoning": "no rollback",
    }


def test_a_risk_the_runtime_attached_is_the_risk_label() -> None:
    labelled = builders.build_confirm_decision(decision(risk_label="high"), None, NOW)
    assert labelled.input["risk_label"] == "high"
    leveled = builders.build_confirm_decision(decision(risk_level="critical"), None, NOW)
    assert leveled.input["risk_label"] == "critical"


def _confirm_with(*statuses: str) -> dict[str, Any]:
    return {
        "confirm_id": CONFIRM_ID,
        "target_type": "plan",
        "target_id": PLAN_ID,
        "status": statuses[-1],
        "requested_by_role": "planner",
        "requested_at": "2026-03-01T11:00:00Z",
        "risk_label": "medium",
        "decisions": [
            {
                "decision_id": f"d{i}",
                "status": status,
                "decided_by_role": f"role-{i}",
                "decided_at": "2026-03-01T11:29:00Z",
            }
            for i, status in enumerate(statuses)
        ],
    }


@pytest.mark.parametrize(
    ("statuses", "kind", "expected"),
    [
        (("rejected", "approved"), "plan_approved", "override"),
        (("approved", "rejected"), "plan_rejected", "override"),
        (("approved", "approved"), "plan_approved", "approve"),
        (("rejected",), "plan_rejected", "reject"),
        (("approved", "cancelled"), "plan_rejected", "unknown"),
    ],
)
def test_a_decision_that_reverses_an_earlier_one_is_an_override(
    statuses: tuple[str, ...], kind: str, expected: str
) -> None:
    event = decision(kind, confirm=_confirm_with(*statuses))
    sample = builders.build_confirm_decision(event, None, NOW)
    assert sample.output["decision"] == expected
    assert sample.output["status"] == statuses[-1]
    assert sample.input["risk_label"] == "medium"  # from the Confirm riding along


def test_decision_without_plan_emits_confirm_decision_and_parks() -> None:
    outcome = on_decision(decision(), None, NOW)
    assert families(outcome.samples) == [("confirm_decision", "good")]
    assert outcome.park is True
    assert outcome.new_state is None


def test_replayed_parked_decision_yields_only_intent_resolution() -> None:
    outcome = on_decision(decision("plan_rejected"), plan_state(), NOW, confirmed=True)
    assert families(outcome.samples) == [("intent_resolution", "poor")]
    assert outcome.park is False


def test_decision_naming_no_project_waits_for_its_plan() -> None:
    """Only the plan can say whose consent applies, so confirm_decision waits for the join."""
    parked = on_decision(decision(project=None), None, NOW)
    assert (parked.samples, parked.park) == ([], True)
    replay = on_decision(decision(project=None), plan_state(), NOW, confirmed=False)
    assert families(replay.samples) == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert [s.meta.project_id for s in replay.samples] == [PROJECT_ID, PROJECT_ID]
    assert (
        replay.samples[0].to_dict()
        == on_decision(decision(project=None), plan_state(), NOW).samples[0].to_dict()
    )


def test_intent_falls_back_to_the_plan_when_the_snapshot_has_none() -> None:
    """The plan's context and normalized objective stand for the intent it names none of."""
    state = plan_state(intent=False)
    sample = builders.build_intent_resolution(decision(), state, NOW)
    plan = state.snapshot.plan
    assert sample.input["intent_id"] == objective_intent_id(plan.context_id, plan.objective)
    spelled = f"  {plan.objective.upper()}. "
    assert objective_intent_id(plan.context_id, spelled) == sample.input["intent_id"]
    assert objective_intent_id("another-context", plan.objective) != sample.input["intent_id"]
    assert sample.input["raw_request_summary"] == "Add a Redis cache in front of the orders API"
    assert family_errors(sample) == []


# --- deltas ---------------------------------------------------------------------------------


def test_delta_yields_acceptable_error_correction_and_counts_the_correction() -> None:
    outcome = on_delta(delta(), plan_state(), NOW)
    assert families(outcome.samples) == [("error_correction", "acceptable")]
    assert outcome.new_state is not None
    assert outcome.new_state.deltas == 1
    assert outcome.samples[0].to_dict() == {
        "sample_id": sample_id("error_correction", DELTA_EVENT),
        "sample_family": "error_correction",
        "created_at": "2026-03-01T12:00:00.123456Z",
        "input": {
            "intent_id": "intent-42",
            "intent_text": "make orders faster",
            "delta_id": DELTA_ID,
            "change_summary": "Add a rollback step",
            "plan_state": {
                "title": "Add a cache",
                "objective": "Add a Redis cache in front of the orders API",
                "status": "proposed",
                "steps": [{"description": "Measure latency", "status": "pending"}],
            },
        },
        "output": {
            "action_taken": "plan_modification",
            "delta_type": "refinement",
            "result": {"steps_added": 1},
        },
        "feedback": {
            "source": "user",
            "type": "correction",
            "quality_label": "acceptable",
            "details": {"user_feedback": "you forgot the rollback", "corrected_fields": ["steps"]},
        },
        "meta": {
            "source_event_ids": [DELTA_EVENT],
            "project_id": PROJECT_ID,
            "human_feedback_label": "not_reviewed",
            "event_time": "2026-03-01T11:40:00Z",
            "quality_score": 0.5,
            **META,
        },
    }


@pytest.mark.parametrize(
    ("changes", "quality"),
    [
        ({}, "good"),
        ({"comp_plan_required": True}, "acceptable"),
        ({"rollback_used": True}, "poor"),
        ({"comp_plan_required": True, "rollback_used": True}, "poor"),
    ],
)
def test_delta_with_impact_yields_delta_impact_rated_by_outcome(
    changes: dict[str, Any], quality: str
) -> None:
    outcome = on_delta(delta({**IMPACT, **changes}), plan_state(), NOW)
    assert families(outcome.samples) == [
        ("error_correction", "acceptable"),
        ("delta_impact", quality),
    ]
    impact = outcome.samples[1].to_dict()
    assert impact["input"] == {
        "delta_id": DELTA_ID,
        "intent_id": "intent-42",
        "change_summary": "Add a rollback step",
        "delta_type": "refinement",
    }
    outcome_fields = {k: v for k, v in {**IMPACT, **changes}.items() if k != "risk_level"}
    assert impact["output"] == outcome_fields
    assert impact["state"] == {"risk_level": "medium"}
    assert impact["feedback"] == {
        "source": "system",
        "type": "score",
        "details": outcome_fields,
        "quality_label": quality,
    }
    assert family_errors(outcome.samples[1]) == []


def test_impact_only_delta_yields_only_delta_impact_and_keeps_the_count() -> None:
    outcome = on_delta(delta(IMPACT, kind=IMPACT_ONLY_TYPE), plan_state(deltas=1), NOW)
    assert families(outcome.samples) == [("delta_impact", "good")]
    assert outcome.new_state is not None
    assert outcome.new_state.deltas == 1


def test_delta_impact_without_impact_is_a_builder_error() -> None:
    with pytest.raises(ValueError, match="needs payload.impact"):
        builders.build_delta_impact(delta(), plan_state(), NOW)


def test_delta_without_plan_parks() -> None:
    outcome = on_delta(delta(IMPACT), None, NOW)
    assert outcome.samples == []
    assert outcome.park is True
    assert outcome.new_state is None


# --- stages ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "deltas", "quality"),
    [
        ("completed", 0, "good"),
        ("completed", 1, "acceptable"),
        ("failed", 0, "poor"),
        ("failed", 2, "poor"),
    ],
)
def test_execute_outcome_quality(status: str, deltas: int, quality: str) -> None:
    outcome = on_stage(stage(status, duration_ms=1200), plan_state(deltas=deltas), NOW)
    assert families(outcome.samples) == [("pipeline_outcome", quality)]
    sample = outcome.samples[0].to_dict()
    assert sample["output"] == {
        "result": {"stage": "execute", "status": status, "duration_ms": 1200},
        "status": status,  # the taxonomy's recommended fields beside the stage as reported
        "duration_ms": 1200,
    }
    assert sample["input"]["stage_id"] == "execute"
    assert sample["state"] == {"corrections_applied": deltas, "plan_status": "proposed"}
    assert sample["feedback"] == {"source": "system", "type": "score", "quality_label": quality}


def test_failed_execute_keeps_the_error() -> None:
    sample = builders.build_pipeline_outcome(stage("failed", error="timeout"), plan_state(), NOW)
    assert sample.output == {
        "result": {"stage": "execute", "status": "failed", "error": "timeout"},
        "status": "failed",
        "error_info": "timeout",
    }
    assert sample.input == {
        "plan_id": PLAN_ID,
        "intent_id": "intent-42",
        "intent_text": "make orders faster",
        "stage_id": "execute",
        "pipeline_path": ["execute"],
        "objective": "Add a Redis cache in front of the orders API",
        "plan_structure": [{"description": "Measure latency", "status": "pending"}],
    }


@pytest.mark.parametrize(
    ("usage", "kept"),
    [({"total_tokens": 1200, "prompt_tokens": 900}, True), ("1200 tokens", False), (None, False)],
)
def test_a_stage_keeps_the_token_usage_its_payload_reports(usage: Any, kept: bool) -> None:
    sample = builders.build_pipeline_outcome(
        stage("completed", duration_ms=800, token_usage=usage), plan_state(), NOW
    )
    assert sample.output.get("token_usage") == (usage if kept else None)
    assert sample.output["duration_ms"] == 800


def test_a_stage_naming_no_plan_carries_no_intent() -> None:
    event = stage("completed").model_dump(mode="json", by_alias=True, exclude_none=True)
    event["payload"].pop("plan_id")
    sample = builders.build_pipeline_outcome(StageEvent.model_validate(event), None, NOW)
    assert "intent_id" not in sample.input
    assert "intent_text" not in sample.input


@pytest.mark.parametrize("state", [plan_state(), None])
@pytest.mark.parametrize(("name", "status"), [("execute", "started"), ("plan", "running")])
def test_stages_that_did_not_end_yield_nothing_and_never_park(
    name: str, status: str, state: PlanState | None
) -> None:
    outcome = on_stage(stage(status, name=name), state, NOW)
    assert outcome.samples == []
    assert outcome.park is False
    assert builders.outcome_quality(stage(status, name=name), plan_state()) is None


@pytest.mark.parametrize(
    ("name", "status", "quality"),
    [("plan", "completed", "good"), ("review", "failed", "poor"), ("deploy", "completed", "good")],
)
def test_every_stage_that_ends_is_an_outcome_by_default(
    name: str, status: str, quality: str
) -> None:
    outcome = on_stage(stage(status, name=name), plan_state(), NOW)
    assert families(outcome.samples) == [("pipeline_outcome", quality)]
    assert outcome.samples[0].input["stage_id"] == name
    # not collected: no sample, but the plan records the stage (its later stages' path)
    event = stage(status, name=name)
    recorded = record_stage(plan_state(), StageMark.of(event))
    assert on_stage(event, plan_state(), NOW, stages=frozenset({"execute"})) == (
        Outcome(new_state=recorded)
    )


def test_a_stage_that_names_no_plan_is_an_outcome_without_the_join() -> None:
    event = stage("completed", name="lint", stage_config={"strict": True})
    event = event.model_copy(update={"payload": event.payload.model_copy(update={"plan_id": None})})
    outcome = on_stage(event, None, NOW)
    assert outcome.park is False
    (sample,) = outcome.samples
    assert sample.input == {
        "stage_id": "lint",
        "pipeline_path": ["lint"],
        "stage_config": {"strict": True},
    }
    assert sample.state is None
    assert sample.meta.plan_id is None
    assert sample.feedback.quality_label == "good"


def test_execute_without_plan_parks() -> None:
    outcome = on_stage(stage("completed"), None, NOW)
    assert (outcome.samples, outcome.park) == ([], True)


def test_pipeline_outcome_of_a_started_stage_is_a_builder_error() -> None:
    with pytest.raises(ValueError, match="only a stage that completed, failed or was skipped"):
        builders.build_pipeline_outcome(stage("started"), plan_state(), NOW)


# --- ids, clock, purity ---------------------------------------------------------------------


def all_samples(now: datetime) -> list[LearningSample]:
    return [
        *on_decision(decision(), plan_state(), now).samples,
        *on_delta(delta(IMPACT), plan_state(), now).samples,
        *on_stage(stage("completed"), plan_state(), now).samples,
    ]


def test_sample_ids_are_deterministic_uuid4_per_family_and_event() -> None:
    first, again = all_samples(NOW), all_samples(NOW + timedelta(hours=1))
    assert [s.sample_id for s in first] == [s.sample_id for s in again]
    ids = [s.sample_id for s in first]
    assert len(set(ids)) == len(ids) == 5  # confirm + intent, correction + impact, outcome
    for sample in first:
        assert uuid.UUID(sample.sample_id).version == 4
        assert sample.sample_id == sample_id(sample.sample_family, sample.meta.source_event_ids[0])


def test_sample_id_is_a_pure_function_of_family_and_event() -> None:
    assert sample_id("intent_resolution", DECISION_EVENT) == "d7a44be8-6c0d-4c83-9295-fb94687f7676"
    assert sample_id("confirm_decision", DECISION_EVENT) == "42fd386b-6ca8-4eae-903f-fa02c1ae74af"


@pytest.mark.parametrize("text", ["", "plan-1", "PLAN-1", "é\x1f✓", "x" * 300, "0" * 64])
def test_derived_ids_are_the_uuid4_the_uuid_module_makes_of_the_digest(text: str) -> None:
    # Ids already written must not change: trainers deduplicate by them across versions.
    digest = hashlib.sha256(f"mplp-id\x1f{text}".encode()).digest()
    assert derived_uuid(text) == str(uuid.UUID(bytes=digest[:16], version=4))
    digest = hashlib.sha256(f"family\x1f{text}".encode()).digest()
    assert sample_id("family", text) == str(uuid.UUID(bytes=digest[:16], version=4))


def test_canonical_ids_lower_a_uuid4_and_stand_in_for_anything_else() -> None:
    upper = "A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"
    assert canonical_id(upper) == canonical_id(upper.lower()) == upper.lower()
    assert canonical_id("plan-7") == canonical_id("plan-7") == derived_uuid("plan-7")
    assert canonical_id("PLAN-7") != canonical_id("plan-7")  # only UUIDs are case-blind
    not_v4 = "a1b2c3d4-e5f6-1a7b-8c9d-0e1f2a3b4c5d"  # version 1
    assert canonical_id(not_v4) == derived_uuid(not_v4)


def test_created_at_is_now_and_nothing_else_reads_a_clock() -> None:
    first = [s.to_dict() for s in all_samples(NOW)]
    assert first == [s.to_dict() for s in all_samples(NOW)]
    later = [s.to_dict() for s in all_samples(NOW + timedelta(days=3))]
    for a, b in zip(first, later, strict=True):
        assert a["created_at"] == "2026-03-01T12:00:00.123456Z"
        assert b["created_at"] == "2026-03-04T12:00:00.123456Z"
        assert {**a, "created_at": None} == {**b, "created_at": None}


def test_created_at_keeps_a_non_utc_offset() -> None:
    paris = datetime(2026, 3, 1, 13, 0, tzinfo=timezone(timedelta(hours=1)))
    assert (
        builders.build_confirm_decision(decision(), None, paris).created_at
        == "2026-03-01T13:00:00+01:00"
    )


def test_project_comes_from_the_event_or_else_the_plan() -> None:
    other = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
    for_plan = on_decision(decision(project=None), plan_state(), NOW).samples
    assert [s.meta.project_id for s in for_plan] == [PROJECT_ID, PROJECT_ID]
    for_event = on_decision(decision(project=other), plan_state(), NOW).samples
    assert [s.meta.project_id for s in for_event] == [other, other]
    assert (
        builders.build_confirm_decision(decision(project=None), None, NOW).meta.project_id is None
    )


# --- family schema rules --------------------------------------------------------------------


def test_every_built_sample_passes_its_family_rules() -> None:
    assert {s.sample_family: family_errors(s) for s in all_samples(NOW)} == {
        "confirm_decision": [],
        "intent_resolution": [],
        "error_correction": [],
        "delta_impact": [],
        "pipeline_outcome": [],
    }


def bare(family: str, **parts: Any) -> LearningSample:
    return LearningSample(
        sample_id=sample_id(family, DECISION_EVENT),
        sample_family=family,  # type: ignore[arg-type]
        created_at="2026-03-01T12:00:00Z",
        input=parts.get("input", {}),
        output=parts.get("output", {}),
        feedback=Feedback(source="system", type="score", quality_label="good"),
        meta=SampleMeta(
            source_event_ids=[DECISION_EVENT], human_feedback_label="not_reviewed", producer="test"
        ),
    )


def test_family_rules_name_what_is_missing() -> None:
    assert family_errors(
        bare(
            "intent_resolution",
            input={"intent_id": "", "raw_request_summary": 3},
            output={"final_intent_summary": "x"},
        )
    ) == [
        "input.intent_id must be a non-empty str",
        "input.raw_request_summary must be a non-empty str",
    ]
    assert family_errors(
        bare(
            "delta_impact",
            input={"delta_id": "d", "intent_id": "i", "change_summary": "c"},
            output={"actual_impact_summary": "a"},
        )
    ) == ["output.impact_scope must be a non-empty str"]
    assert family_errors(bare("pipeline_outcome")) == []


def test_token_usage_by_agent_never_keys_an_agent_so_the_anonymizer_sees_every_agent_id() -> None:
    usage = {"total_tokens": 50, "by_agent": {"jane.doe@corp.example": 30, "planner": 20}}
    sample = builders.build_pipeline_outcome(
        stage("completed", duration_ms=800, token_usage=usage), plan_state(), NOW
    )
    assert sample.output["token_usage"] == {
        "total_tokens": 50,
        "by_agent": [
            {"agent_id": "jane.doe@corp.example", "tokens": 30},
            {"agent_id": "planner", "tokens": 20},
        ],
    }


def test_an_agent_named_by_an_email_in_token_usage_is_masked_before_it_leaves() -> None:
    from learnstream.streams.config.settings import Settings
    from learnstream.streams.privacy.config import privacy_config
    from learnstream.streams.privacy.pii import build_anonymizer
    from learnstream.streams.privacy.pipeline import apply_privacy

    usage = {"by_agent": {"jane.doe@corp.example": 30}}
    sample = builders.build_pipeline_outcome(
        stage("completed", duration_ms=800, token_usage=usage), plan_state(), NOW
    )
    out, found = apply_privacy(sample.to_dict(), build_anonymizer(privacy_config(Settings())))
    assert out["output"]["token_usage"] == {
        "by_agent": [{"agent_id": "<EMAIL_ADDRESS>", "tokens": 30}]
    }
    assert found["EMAIL_ADDRESS"] == 1
