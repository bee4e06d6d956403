"""MPLP inputs as runtimes send them: official and seed shapes, and the property test.

The property test generates plans, Confirm objects and pipeline-stage events from the
official MPLP v1.0 schemas (``mplp_schemas`` fixture) and checks our decoders never call one
a ``schema_violation``.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import hypothesis_jsonschema._from_schema as hjs_internals
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import from_schema
from jsonschema import Draft7Validator
from referencing import Registry, Resource

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.join.rules import on_decision, on_delta, on_stage, plan_key
from learnstream.streams.mplp.decode import RecordOrigin, decode_decision, decode_plan, decode_stage
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.mplp.models import DeltaIntentEvent
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.samples.collection import collection_point
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.state.plan import PlanState, merge_snapshot
from tests.support.mplp_learning import format_checker

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PLAN_UUID = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
EVENT_UUID = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
SECRET = "dana.whitfield@example.org"  # stands for any value that must never reach a message
#: Objects generated per official schema: 60 in ``make test`` (hypothesis-jsonschema is slow
#: on MPLP's large schemas: 200 cost ~100 s of CPU across the suite), 200 in ``make test-soak``.
MAX_EXAMPLES = int(os.environ.get("LEARNSTREAM_SCHEMA_EXAMPLES", "60"))


class _ManyWithMore(conjecture_utils.many):
    """hypothesis' ``many`` with the ``more()`` that hypothesis-jsonschema 0.23.1 still calls.

    hypothesis 6.170 replaced ``while elements.more():`` with ``with many(...) as elements:
    for _ in elements:``; without this, every object schema fails to generate
    (AttributeError: 'many' object has no attribute 'more'). Only hypothesis-jsonschema's
    module sees this class.
    """

    def more(self) -> bool:
        if self._depth is None:
            self.__enter__()
            self._steps = iter(self)
        if next(self._steps, None) is None and self._done:
            self.__exit__(None)
            return False
        return True


if not hasattr(conjecture_utils.many, "more"):
    hjs_internals.cu = type("cu", (), {"many": _ManyWithMore})  # type: ignore[attr-defined]


def js(obj: Any) -> bytes:
    return orjson.dumps(obj)


def refused(decode: Any, *args: Any, **kwargs: Any) -> InvalidEvent:
    with pytest.raises(InvalidEvent) as info:
        decode(*args, **kwargs)
    assert SECRET not in str(info.value)
    return info.value


def plan(plan_id: str = PLAN_UUID, **meta: Any) -> dict[str, Any]:
    return {
        "meta": meta or {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
        "plan_id": plan_id,
        "context_id": "ctx-1",
        "title": "Fix login",
        "objective": "Fix the login 500 error",
        "status": "proposed",
        "steps": [{"step_id": "step-1", "description": "Reproduce", "status": "pending"}],
    }


def state_of(snapshot: dict[str, Any]) -> PlanState:
    state = merge_snapshot(None, decode_plan(js(snapshot)), WHEN)
    assert state is not None
    return state


def confirm(status: str = "approved", **extra: Any) -> dict[str, Any]:
    return {
        "meta": {"protocolVersion": "1.0.0", "source": "mplp-runtime"},
        "confirm_id": "confirm-550e8400-e29b-41d4-a716-446655440004",
        "target_type": "plan",
        "target_id": "plan-550e8400-e29b-41d4-a716-446655440001",
        "status": status,
        "requested_by_role": "role-planner-001",
        "requested_at": "2025-12-07T00:00:00.000Z",
        "decisions": [
            {
                "decision_id": "decision-001",
                "status": "approved" if status == "pending" else status,
                "decided_by_role": "role-reviewer-001",
                "decided_at": "2025-12-07T00:05:00.000Z",
                "reason": "Plan looks good, approved for execution",
            }
        ],
        **extra,
    }


def decision(kind: str = "plan_approved", **payload: Any) -> dict[str, Any]:
    return {
        "event_id": EVENT_UUID,
        "event_family": "pipeline_stage",
        "event_type": kind,
        "timestamp": "2026-03-01T11:30:00Z",
        "payload": payload,
    }


def official_stage(status: str = "completed", stage_id: str = "execute") -> dict[str, Any]:
    return {
        "event_id": EVENT_UUID,
        "event_family": "pipeline_stage",
        "event_type": "pipeline_stage_changed",
        "timestamp": "2026-03-01T11:50:00Z",
        "pipeline_id": "6c7d8e9f-0a1b-4c2d-9e3f-4a5b6c7d8e9f",
        "stage_id": stage_id,
        "stage_name": "Execute the plan",
        "stage_status": status,
        "stage_order": 3,
        "payload": {"plan_id": PLAN_UUID},
    }


# --- meta spellings -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "meta", [{"protocol_version": "1.0.0", "schema_version": "1.0.0"}, {"protocolVersion": "1.0.0"}]
)
def test_both_meta_spellings_are_accepted_on_plans_and_confirms(meta: dict[str, Any]) -> None:
    assert decode_plan(js({"plan": plan(**meta)})).plan.meta.model_dump(exclude_none=True) == meta
    event = decision(plan_id=PLAN_UUID, confirm=confirm(meta=meta))
    assert decode_decision(js(event), "plan_approved").payload.confirm is not None


def test_meta_without_a_protocol_version_names_both_spellings() -> None:
    err = refused(decode_plan, js({"plan": plan(source=SECRET)}))
    assert (err.reason, err.detail) == (
        "schema_violation",
        "plan.meta: meta needs protocol_version (or protocolVersion), e.g. 1.0.0",
    )


# --- pipeline stage events ----------------------------------------------------------------


@pytest.mark.parametrize(("status", "quality"), [("completed", "good"), ("failed", "poor")])
def test_official_stage_event_makes_the_pipeline_outcome(status: str, quality: str) -> None:
    event = decode_stage(js(official_stage(status)))
    assert (event.stage, event.status, event.is_outcome) == ("execute", status, True)
    (sample,) = on_stage(event, state_of({"plan": plan()}), WHEN).samples
    assert sample.feedback.quality_label == quality
    assert sample.output == {
        "result": {"stage": "execute", "stage_name": "Execute the plan", "status": status},
        "status": status,
    }
    assert sample.input["pipeline_id"] == "6c7d8e9f-0a1b-4c2d-9e3f-4a5b6c7d8e9f"
    assert sample.input["stage_id"] == "execute"


@pytest.mark.parametrize("status", ["pending", "running"])
def test_official_stages_that_do_not_end_execute_yield_nothing(status: str) -> None:
    event = decode_stage(js(official_stage(status)))
    assert on_stage(event, None, WHEN).samples == []
    assert on_stage(event, None, WHEN).park is False


def test_a_skipped_official_stage_is_a_pipeline_outcome_with_status_skipped(
    mplp_schemas: Path,
) -> None:
    """``skipped`` (a status of the schema): acceptable, 0.5; the plan did not run it, so it
    ends its own path but no later stage's, and it counts for no skill."""
    name = "events/mplp-pipeline-stage-event.schema.json"
    validator = Draft7Validator(official(mplp_schemas, name), format_checker=format_checker())
    ran = official_stage("completed", stage_id="plan") | {
        "event_id": "2b3c4d5e-6f70-4a8b-9c0d-1e2f3a4b5c6d",
        "timestamp": "2026-03-01T11:40:00Z",
    }
    skipped = official_stage("skipped", stage_id="review") | {"stage_name": "Review"}
    later = official_stage("completed") | {
        "event_id": "3c4d5e6f-7a8b-4c9d-8e0f-2a3b4c5d6e7f",
        "timestamp": "2026-03-01T12:00:00Z",
    }
    for raw in (ran, skipped, later):
        assert [e.message for e in validator.iter_errors(raw)] == []
    state = state_of({"plan": plan()})
    first = on_stage(decode_stage(js(ran)), state, WHEN)
    state = first.new_state or state
    event = decode_stage(js(skipped))
    assert (event.skipped, event.ends, event.is_outcome) == (True, False, False)
    decided = on_stage(event, state, WHEN)
    assert decided.new_state is None  # not recorded in the plan's path
    (sample,) = decided.samples
    assert sample.output == {
        "result": {"stage": "review", "stage_name": "Review", "status": "skipped"},
        "status": "skipped",
    }
    assert sample.input["stage_id"] == "review"
    assert sample.input["pipeline_path"] == ["plan", "review"]
    assert (sample.feedback.quality_label, sample.meta.quality_score) == ("acceptable", 0.5)
    assert collection_point(sample) == "execution_completion"
    (after,) = on_stage(decode_stage(js(later)), state, WHEN).samples
    assert after.input["pipeline_path"] == ["plan", "execute"]
    assert on_stage(event, None, WHEN).park is True  # waits for its plan, like any outcome
    alone = skipped | {"payload": {}}
    (unplanned,) = on_stage(decode_stage(js(alone)), None, WHEN).samples
    assert (unplanned.output["status"], unplanned.input["pipeline_path"]) == ("skipped", ["review"])


def test_official_fields_win_over_the_payload_form() -> None:
    raw = official_stage("failed")
    raw["payload"] |= {"stage": "plan", "status": "completed"}
    event = decode_stage(js(raw))
    assert (event.stage, event.status) == ("execute", "failed")


def test_a_stage_that_yields_no_sample_needs_no_plan_id() -> None:
    raw = official_stage("completed", stage_id="import")
    del raw["payload"]
    assert decode_stage(js(raw)).payload.plan_id is None


def test_an_execute_outcome_without_plan_id_is_an_outcome_without_the_join() -> None:
    """The official stage schema does not require a plan: such an outcome goes out alone."""
    raw = official_stage("completed")
    raw["payload"] = {"note": "no plan here"}
    event = decode_stage(js(raw))
    assert (event.payload.plan_id, event.is_outcome) == (None, True)
    (sample,) = on_stage(event, None, WHEN).samples
    assert sample.meta.plan_id is None
    assert sample.input["stage_id"] == "execute"


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ("stage_id", "stage_id (or payload.stage, a non-empty string) is required"),
        (
            "stage_status",
            "stage_status (or payload.status: pending, started, running, completed, failed "
            "or skipped) is required",
        ),
    ],
)
def test_a_stage_event_needs_a_stage_and_a_status(drop: str, message: str) -> None:
    raw = official_stage()
    del raw[drop]
    assert refused(decode_stage, js(raw)).detail == message


def test_an_unknown_stage_status_names_the_accepted_ones() -> None:
    raw = official_stage()
    raw["stage_status"] = SECRET
    err = refused(decode_stage, js(raw))
    assert err.detail.startswith("stage_status: Input should be 'pending', 'running'")


# --- decisions ----------------------------------------------------------------------------


def test_seed_002_decision_event_is_accepted_with_decided_by() -> None:
    event = decision(confirm_id="confirm-1", plan_id="plan-123", decided_by="role-reviewer-001")
    payload = decode_decision(js(event), "plan_approved").payload
    assert (payload.plan_id, payload.confirm_id, payload.decided_by_role) == (
        "plan-123",
        "confirm-1",
        "role-reviewer-001",
    )


def test_the_confirm_supplies_what_the_payload_lacks() -> None:
    payload = decode_decision(js(decision(confirm=confirm())), "plan_approved").payload
    assert payload.plan_id == "plan-550e8400-e29b-41d4-a716-446655440001"
    assert payload.confirm_id == "confirm-550e8400-e29b-41d4-a716-446655440004"
    assert payload.decided_by_role == "role-reviewer-001"
    assert payload.reason == "Plan looks good, approved for execution"


def test_the_payloads_own_fields_win_over_the_confirm() -> None:
    event = decision(
        plan_id="plan-9", confirm_id="c-9", decided_by_role="lead", reason="ok", confirm=confirm()
    )
    payload = decode_decision(js(event), "plan_approved").payload
    assert (payload.plan_id, payload.confirm_id, payload.decided_by_role, payload.reason) == (
        "plan-9",
        "c-9",
        "lead",
        "ok",
    )


@pytest.mark.parametrize(
    ("kind", "status", "extra"),
    [
        ("plan_approved", "rejected", {}),
        ("plan_approved", "cancelled", {}),
        ("plan_rejected", "approved", {}),
        ("plan_approved", "pending", {"approved": False}),  # seed 000 §4.1's flag
    ],
)
def test_a_confirm_contradicting_the_event_is_dead_lettered(
    kind: str, status: str, extra: dict[str, Any]
) -> None:
    event = decision(kind, plan_id="plan-1", confirm=confirm(status, reason=SECRET, **extra))
    err = refused(decode_decision, js(event), kind)
    wanted = (
        "approved (or pending)" if kind == "plan_approved" else "rejected (or cancelled, pending)"
    )
    assert (err.reason, err.detail) == (
        "schema_violation",
        f"payload.confirm.status contradicts event_type: a {kind} event needs confirm "
        f"status {wanted}",
    )


def test_a_pending_confirm_agrees_with_either_decision() -> None:
    for kind in ("plan_approved", "plan_rejected"):
        event = decision(kind, plan_id="plan-1", confirm=confirm("pending"))
        assert decode_decision(js(event), kind).event_type == kind


def test_a_decision_without_a_role_anywhere_is_refused() -> None:
    err = refused(decode_decision, js(decision(plan_id="p", confirm_id="c")), "plan_approved")
    assert err.detail == "payload.decided_by_role: Field required"


def test_a_confirm_without_meta_and_with_naive_times_is_accepted_and_noted() -> None:
    """Seed 002 §6.2's Python SDK: no meta, datetime.now() without a zone, target plan-123."""
    sdk = confirm(target_id="plan-123", requested_at="2025-12-07T00:00:00.123456")
    del sdk["meta"]
    sdk["decisions"][0]["decided_at"] = "2025-12-07T00:05:00"
    notes = InputNotes()
    payload = decode_decision(js(decision(confirm=sdk)), "plan_approved", notes=notes).payload
    assert payload.plan_id == "plan-123"
    assert payload.confirm is not None
    assert payload.confirm.requested_at.tzinfo is UTC
    assert notes.naive_timestamps == ["requested_at", "decided_at"]
    # plan_id and confirm_id twice: the payload's, filled from the Confirm, and the Confirm's
    assert sorted(notes.non_uuid_ids) == sorted(
        ["plan_id", "confirm_id", "confirm_id", "target_id", "decision_id"]
    )


# --- events without event_id / timestamp --------------------------------------------------


def test_missing_event_id_and_timestamp_come_from_the_record() -> None:
    raw = {k: v for k, v in decision(plan_id="p", confirm_id="c", decided_by="r").items()}
    del raw["event_id"], raw["timestamp"]
    origin = RecordOrigin("mplp.plan_approved", 2, 41, WHEN)
    notes = InputNotes()
    first = decode_decision(js(raw), "plan_approved", origin=origin, notes=notes)
    again = decode_decision(js(raw), "plan_approved", origin=origin)
    assert first.event_id == again.event_id  # a replay derives the same id, hence sample ids
    assert (
        first.event_id
        != decode_decision(
            js(raw), "plan_approved", origin=RecordOrigin("mplp.plan_approved", 2, 42, WHEN)
        ).event_id
    )
    assert (first.timestamp, notes.filled) == (WHEN, ["event_id", "timestamp"])
    assert refused(decode_decision, js(raw), "plan_approved").detail == "event_id: Field required"


# --- seed 004 fields and ids in samples ---------------------------------------------------


def rich_snapshot(plan_id: str = PLAN_UUID, project: str = "proj-7") -> dict[str, Any]:
    return {
        "plan": plan(plan_id),
        "project_id": project,
        "intent": {
            "intent_id": "intent-1",
            "text": "The login page returns 500",
            "constraints_summary": "before Friday",
            "dialog_turns_count": 4,
            "clarification_rounds": 2,
            "ambiguity_flags": ["vague_scope"],
        },
        "context": {"project_phase": "brownfield", "psg_node_count": 120, "existing_plan_count": 3},
    }


def test_intent_resolution_carries_every_seed_004_field() -> None:
    event = decode_decision(js(decision(plan_id=PLAN_UUID, confirm=confirm())), "plan_approved")
    sample = on_decision(event, state_of(rich_snapshot()), WHEN).samples[1].to_dict()
    assert sample["sample_family"] == "intent_resolution"
    assert {k: sample["input"][k] for k in ("constraints_summary", "dialog_turns_count")} == {
        "constraints_summary": "before Friday",
        "dialog_turns_count": 4,
    }
    assert sample["state"] == {
        "plan_status": "proposed",
        "corrections_so_far": 0,
        "project_phase": "brownfield",
        "psg_node_count": 120,
        "existing_plan_count": 3,
    }
    assert (sample["output"]["plan_id"], sample["output"]["plan_step_count"]) == (PLAN_UUID, 1)
    assert (sample["meta"]["clarification_rounds"], sample["meta"]["ambiguity_flags"]) == (
        2,
        ["vague_scope"],
    )


def test_delta_impact_carries_every_seed_004_field() -> None:
    impact = {
        "actual_impact_summary": "Two services redeployed",
        "impact_scope": "module",
        "comp_plan_required": False,
        "risk_level": "high",
        "affected_artifact_count": 5,
        "psg_complexity_score": 0.7,
        "impact_analysis_duration_ms": 840,
        "predicted_vs_actual_accuracy": "underestimated",
    }
    event = DeltaIntentEvent.model_validate(
        {
            "event_id": EVENT_UUID,
            "event_family": "delta_intent",
            "event_type": "delta_intent_created",
            "timestamp": "2026-03-01T11:40:00Z",
            "payload": {
                "delta_id": "delta-1",
                "intent_id": "intent-1",
                "plan_id": PLAN_UUID,
                "change_summary": "Add a rollback step",
                "impact": impact,
            },
        }
    )
    sample = on_delta(event, state_of(rich_snapshot()), WHEN).samples[1].to_dict()
    assert sample["state"] == {
        "affected_artifact_count": 5,
        "risk_level": "high",
        "psg_complexity_score": 0.7,
    }
    assert sample["output"] == {
        "actual_impact_summary": "Two services redeployed",
        "impact_scope": "module",
        "comp_plan_required": False,
    }
    assert (
        sample["meta"]["impact_analysis_duration_ms"],
        sample["meta"]["predicted_vs_actual_accuracy"],
    ) == (840, "underestimated")


def test_runtime_ids_become_canonical_uuids_with_their_originals_in_id_refs() -> None:
    event = decision(plan_id="plan-123", confirm_id="c-1", decided_by="r")
    event["event_id"] = "evt-1"
    decoded = decode_decision(js(event), "plan_approved")
    confirm_sample, intent = on_decision(decoded, state_of(rich_snapshot("plan-123")), WHEN).samples
    meta = intent.to_dict()["meta"]
    assert meta["plan_id"] == canonical_id("plan-123") == plan_key("plan-123")
    assert meta["project_id"] == canonical_id("proj-7")
    assert meta["source_event_ids"] == [canonical_id("evt-1")]
    assert meta["id_refs"] == {
        "output.plan_id": "plan-123",
        "source_event_ids[0]": "evt-1",
        "project_id": "proj-7",
        "plan_id": "plan-123",
    }
    assert intent.output["plan_id"] == canonical_id("plan-123")
    assert confirm_sample.input["plan_id"] == "plan-123"  # other ids stay as sent
    assert confirm_sample.meta.id_refs == {k: v for k, v in meta["id_refs"].items() if "." not in k}


def test_upper_case_uuids_join_and_need_no_id_refs() -> None:
    upper = PLAN_UUID.upper()
    assert plan_key(upper) == plan_key(PLAN_UUID) == PLAN_UUID
    decoded = decode_decision(
        js(decision(plan_id=upper, confirm_id="c", decided_by="r")), "plan_approved"
    )
    (sample,) = on_decision(decoded, None, WHEN).samples[:1] or [None]
    assert sample is None  # no project named: it waits for the plan (consent)
    samples = on_decision(decoded, state_of(rich_snapshot(upper, project=EVENT_UUID.upper())), WHEN)
    meta = samples.samples[0].meta
    assert (meta.plan_id, meta.project_id, meta.id_refs) == (PLAN_UUID, EVENT_UUID, None)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("psg_node_count", "120", "context.psg_node_count must be an integer >= 0"),
        ("existing_plan_count", -1, "context.existing_plan_count must be an integer >= 0"),
        ("psg_node_count", True, "context.psg_node_count must be an integer >= 0"),
        ("project_phase", 3, "context.project_phase must be a string"),
    ],
)
def test_context_fields_samples_read_are_type_checked(key: str, value: Any, message: str) -> None:
    snap = rich_snapshot()
    snap["context"][key] = value
    assert refused(decode_plan, js(snap)).detail == f"context: {message}"


# --- metrics ------------------------------------------------------------------------------


def test_tolerated_forms_are_counted_by_field_name() -> None:
    metrics, notes = Metrics(), InputNotes()
    snap = rich_snapshot("plan-123")
    snap["plan"]["meta"]["created_at"] = "2026-03-01T10:00:00"
    decode_plan(js(snap), notes)
    metrics.note_input(notes)
    metrics.note_input(InputNotes(filled=["event_id"]))

    def value(name: str, field: str) -> float | None:
        return metrics.registry.get_sample_value(name, {"field": field})

    assert value("learnstream_non_uuid_ids_total", "plan_id") == 1
    assert value("learnstream_non_uuid_ids_total", "context_id") == 1
    assert value("learnstream_non_uuid_ids_total", "step_id") == 1
    assert value("learnstream_non_uuid_ids_total", "project_id") == 1
    assert value("learnstream_non_uuid_ids_total", "event_id") == 0
    assert value("learnstream_naive_timestamps_total", "created_at") == 1
    assert value("learnstream_filled_fields_total", "event_id") == 1


# --- the property test: official schemas in, never a schema_violation ---------------------


def _inline(node: Any, doc: dict[str, Any], base: Path, cache: dict[Path, Any]) -> Any:
    """Return ``node`` with every $ref replaced by what it points to (files and fragments)."""
    if isinstance(node, list):
        return [_inline(item, doc, base, cache) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target, _, fragment = node["$ref"].partition("#")
        if target:
            path = (base / target).resolve()
            if path not in cache:
                cache[path] = json.loads(path.read_text(encoding="utf-8"))
            doc, base = cache[path], path.parent
        found: Any = doc
        for part in filter(None, fragment.split("/")):
            found = found[part]
        return _inline(found, doc, base, cache)
    skip = {"$id", "$schema", "$comment", "$defs", "definitions", "x-mplp-meta", "examples"}
    return {k: _inline(v, doc, base, cache) for k, v in node.items() if k not in skip}


def official(directory: Path, name: str) -> dict[str, Any]:
    """Return the official schema ``name`` with its $refs resolved (hypothesis-jsonschema
    cannot follow references to other files)."""
    path = directory / name
    doc = json.loads(path.read_text(encoding="utf-8"))
    return _inline(doc, doc, path.parent, {})


ANY_UUID = st.uuids().map(str)
FORMATS = {"uuid": ANY_UUID}


def _decision_of(generated: dict[str, Any], plan_id: str) -> tuple[str, dict[str, Any]]:
    """Wrap a generated Confirm in the decision event its status calls for (seed 002 §4.3:
    anything but an approval is a ``plan_rejected``). §4.3 never sends a pending Confirm; here
    one goes as ``plan_approved``."""
    kind = "plan_rejected" if generated["status"] in ("rejected", "cancelled") else "plan_approved"
    payload: dict[str, Any] = {"confirm": generated}
    if generated["target_type"] != "plan":
        payload["plan_id"] = plan_id  # only a plan Confirm names the plan
    if not generated.get("decisions"):
        payload["decided_by_role"] = "role-reviewer-001"
    event = {
        "event_id": EVENT_UUID,
        "event_family": "pipeline_stage",
        "event_type": kind,
        "timestamp": "2026-03-01T11:30:00Z",
        "payload": payload,
    }
    return kind, event


def wire(obj: Any) -> bytes:
    """Encode as a runtime would: the stdlib writes integers past 64 bits, orjson refuses."""
    return json.dumps(obj).encode()


def _check_plan(generated: dict[str, Any], _: str) -> str:
    snapshot = decode_plan(wire({"plan": generated}))
    assert snapshot.plan.plan_id == generated["plan_id"]
    return "accepted"


def _check_confirm(generated: dict[str, Any], plan_id: str) -> str:
    kind, event = _decision_of(generated, plan_id)
    decoded = decode_decision(wire(event), kind)
    assert decoded.payload.confirm_id == generated["confirm_id"]
    assert decoded.target_type == generated["target_type"]
    return "accepted"


def _check_stage(generated: dict[str, Any], plan_id: str) -> str:
    event = {**generated, "payload": {**generated.get("payload", {}), "plan_id": plan_id}}
    if event["event_type"] in ("plan_approved", "plan_rejected"):
        assert refused(decode_stage, wire(event)).reason == "wrong_topic"
        return "wrong_topic"
    decoded = decode_stage(wire(event))
    assert (decoded.stage, decoded.status) == (generated["stage_id"], generated["stage_status"])
    return "accepted"


PROPERTY_CASES = {
    "mplp-plan.schema.json": _check_plan,
    "mplp-confirm.schema.json": _check_confirm,
    "events/mplp-pipeline-stage-event.schema.json": _check_stage,
}


@pytest.mark.parametrize("name", sorted(PROPERTY_CASES))
def test_objects_generated_from_the_official_schemas_are_never_schema_violations(
    mplp_schemas: Path, name: str
) -> None:
    seen = generated_from(official(mplp_schemas, name), PROPERTY_CASES[name], name)
    assert seen["accepted"] >= MAX_EXAMPLES // 2


def generated_from(
    schema: dict[str, Any], check: Callable[[dict[str, Any], str], str], name: str
) -> Counter[str]:
    """Run ``check(object, a UUID)`` on objects hypothesis generates from ``schema``; return
    what the checks said, counted. A check that raises InvalidEvent fails, naming the object."""
    seen: Counter[str] = Counter()

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(from_schema(schema, custom_formats=FORMATS), ANY_UUID)
    def run(generated: dict[str, Any], some_uuid: str) -> None:
        try:
            seen[check(generated, some_uuid)] += 1
        except InvalidEvent as exc:  # say which generated object failed, then fail
            raise AssertionError(f"{exc} for {json.dumps(generated)[:2000]}") from None

    started = time.perf_counter()
    run()
    took = time.perf_counter() - started
    print(f"\n{name}: {sum(seen.values())} generated examples, {dict(seen)} in {took:.1f} s")
    return seen


def test_the_inliner_leaves_no_reference(mplp_schemas: Path) -> None:
    for name in PROPERTY_CASES:
        text = json.dumps(official(mplp_schemas, name))
        assert "$ref" not in text, name
        assert '"pattern": "^[0-9a-f]{8}-' in text or name.startswith("events/"), name


def test_samples_meet_the_official_learning_schemas(mplp_schemas: Path) -> None:
    """What the builders make from seed-shaped inputs validates against MPLP's own schemas."""
    learning = mplp_schemas / "learning"
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in learning.glob("*.json")]
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs)
    by_title = {d["$id"].rsplit("/", 1)[1]: d for d in docs}
    checker = Draft7Validator.FORMAT_CHECKER
    event = decision(plan_id="plan-123", confirm_id="c-1", decided_by="r")
    event["event_id"] = "evt-1"
    samples = on_decision(
        decode_decision(js(event), "plan_approved"), state_of(rich_snapshot("plan-123")), WHEN
    ).samples
    for sample in samples:
        wire = sample.to_dict()
        name = {
            "intent_resolution": "mplp-learning-sample-intent.schema.json",
            "confirm_decision": "mplp-learning-sample-core.schema.json",
        }[wire["sample_family"]]
        validator = Draft7Validator(by_title[name], registry=registry, format_checker=checker)
        assert [e.message for e in validator.iter_errors(wire)] == []
        for uuid_value in [
            wire["sample_id"],
            wire["meta"]["project_id"],
            *wire["meta"]["source_event_ids"],
        ]:
            assert canonical_id(uuid_value) == uuid_value  # UUID v4, lower case
