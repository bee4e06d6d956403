"""The input codec boundary: every DLQ reason is an InvalidEvent with its reason code."""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from learnstream.streams.dlq.errors import REASONS, InvalidEvent
from learnstream.streams.mplp.decode import (
    MAX_RECORD_BYTES,
    decode_consent,
    decode_decision,
    decode_delta,
    decode_plan,
    decode_stage,
    load_json,
)
from learnstream.streams.mplp.fields import InputNotes, check_uuid4
from learnstream.streams.mplp.models import (
    DecisionEvent,
    DeltaIntentEvent,
    PlanSnapshot,
    StageEvent,
)
from learnstream.streams.sim.simulate import BAD_RECORDS, Simulator

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOT_V4 = "c1a2b3c4-d5e6-1f70-8a9b-0c1d2e3f4a5b"  # a version-1 UUID


@pytest.fixture
def sim() -> Simulator:
    return Simulator(seed=11, pii_ratio=0.0)


@pytest.fixture
def snap(sim: Simulator) -> dict[str, Any]:
    return sim.plan(WHEN)


def js(obj: Any) -> bytes:
    return orjson.dumps(obj)


def reason_of(decode: Any, *args: Any) -> InvalidEvent:
    with pytest.raises(InvalidEvent) as info:
        decode(*args)
    assert info.value.reason in REASONS
    assert str(info.value) == f"{info.value.reason}: {info.value.detail}"
    return info.value


# --- valid records --------------------------------------------------------------------------


def test_valid_records_decode(sim: Simulator, snap: dict[str, Any]) -> None:
    plan = decode_plan(js(snap))
    assert isinstance(plan, PlanSnapshot)
    assert plan.plan.plan_id == snap["plan"]["plan_id"]
    decision = decode_decision(js(sim.decision(snap, False, WHEN)), "plan_rejected")
    assert isinstance(decision, DecisionEvent)
    assert decision.event_type == "plan_rejected"
    assert isinstance(decode_delta(js(sim.delta(snap, WHEN, impact=True))), DeltaIntentEvent)
    stage = decode_stage(js(sim.stage(snap, "failed", WHEN)))
    assert isinstance(stage, StageEvent)
    assert stage.status == "failed"
    consent = decode_consent(js({"project_id": snap["project_id"], "enabled": False}))
    assert (consent.project_id, consent.enabled) == (snap["project_id"], False)


def test_bare_plan_is_wrapped_in_a_snapshot(snap: dict[str, Any]) -> None:
    decoded = decode_plan(js(snap["plan"]))
    assert decoded.plan.plan_id == snap["plan"]["plan_id"]
    assert (decoded.intent, decoded.context, decoded.project_id) == (None, None, None)


def test_unknown_fields_of_mplp_objects_are_kept(snap: dict[str, Any]) -> None:
    snap["plan"]["owner_role"] = "planner"
    assert decode_plan(js(snap)).plan.model_extra == {"owner_role": "planner"}


# --- reasons --------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [None, b"\xff\xfe not utf-8", b'{"a": "\xc3"}'])
def test_undecodable(data: bytes | None) -> None:
    assert reason_of(decode_plan, data).reason == "undecodable"


@pytest.mark.parametrize("data", [b"", b'{"event_id": "oops", ', b"{'single': 1}", b"NaN"])
def test_invalid_json(data: bytes) -> None:
    assert reason_of(decode_delta, data).reason == "invalid_json"


def test_too_large() -> None:
    err = reason_of(load_json, b" " * (MAX_RECORD_BYTES + 1))
    assert (err.reason, err.detail) == (
        "too_large",
        f"record of {MAX_RECORD_BYTES + 1} bytes > {MAX_RECORD_BYTES}",
    )


def test_record_at_the_size_limit_is_parsed() -> None:
    padded = b'{"a": 1}' + b" " * (MAX_RECORD_BYTES - 8)
    assert load_json(padded) == {"a": 1}


@pytest.mark.parametrize("value", [b"null", b"[]", b'"plan"', b"42"])
def test_non_object_is_a_schema_violation(value: bytes) -> None:
    assert reason_of(decode_plan, value).reason == "schema_violation"
    assert reason_of(decode_stage, value).reason == "schema_violation"


@pytest.mark.parametrize("field", ["title", "objective", "status", "steps", "meta", "context_id"])
def test_plan_missing_a_field(snap: dict[str, Any], field: str) -> None:
    del snap["plan"][field]
    err = reason_of(decode_plan, js(snap))
    assert (err.reason, err.detail) == ("schema_violation", f"plan.{field}: Field required")


def test_plan_ids_need_not_be_uuids_and_are_noted(snap: dict[str, Any]) -> None:
    snap["plan"]["plan_id"] = NOT_V4
    snap["plan"]["context_id"] = "ctx-7"
    notes = InputNotes()
    decoded = decode_plan(js(snap), notes)
    assert (decoded.plan.plan_id, decoded.plan.context_id) == (NOT_V4, "ctx-7")
    assert notes.non_uuid_ids == ["plan_id", "context_id"]
    assert (notes.naive_timestamps, notes.filled) == ([], [])


@pytest.mark.parametrize("odd_id", [NOT_V4, "not-a-uuid", "{0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d}"])
def test_event_ids_need_not_be_uuids(sim: Simulator, snap: dict[str, Any], odd_id: str) -> None:
    event = sim.delta(snap, WHEN)
    event["event_id"] = odd_id
    notes = InputNotes()
    assert decode_delta(js(event), notes=notes).event_id == odd_id
    assert notes.non_uuid_ids == ["event_id"]
    event = sim.decision(snap, True, WHEN)
    event["payload"]["confirm_id"] = odd_id
    assert decode_decision(js(event), "plan_approved").payload.confirm_id == odd_id


UNACCEPTABLE_IDS = ["", "plan 123", "plan-\t1", "x" * 257, "\u00a0"]


@pytest.mark.parametrize("bad_id", UNACCEPTABLE_IDS)
def test_ids_with_whitespace_empty_or_too_long_are_refused_without_the_value(
    sim: Simulator, snap: dict[str, Any], bad_id: str
) -> None:
    event = sim.delta(snap, WHEN)
    event["event_id"] = bad_id
    err = reason_of(decode_delta, js(event))
    assert (err.reason, err.detail) == (
        "schema_violation",
        "event_id: expected an id: a UUID v4, or 1 to 256 characters without whitespace",
    )


@pytest.mark.parametrize("bad_id", [7, ["a"]])  # None: a decision that names no plan (allowed)
def test_ids_that_are_not_strings_are_refused(
    sim: Simulator, snap: dict[str, Any], bad_id: Any
) -> None:
    event = sim.decision(snap, True, WHEN)
    event["payload"]["plan_id"] = bad_id
    err = reason_of(decode_decision, js(event), "plan_approved")
    assert err.detail == "payload.plan_id: Input should be a valid string"


def test_naive_timestamp_is_read_as_utc_and_noted(sim: Simulator, snap: dict[str, Any]) -> None:
    event = sim.stage(snap, "completed", WHEN)
    event["timestamp"] = "2026-03-01T12:00:00"
    notes = InputNotes()
    assert decode_stage(js(event), notes=notes).timestamp == WHEN
    assert notes.naive_timestamps == ["timestamp"]


@pytest.mark.parametrize("stamp", ["1767225600", "2026-03-01", "yesterday", ""])
def test_timestamps_must_be_date_times(sim: Simulator, snap: dict[str, Any], stamp: str) -> None:
    event = sim.stage(snap, "completed", WHEN)
    event["timestamp"] = stamp
    err = reason_of(decode_stage, js(event))
    assert err.detail == (
        "timestamp: expected an ISO-8601 date-time string, e.g. 2026-03-01T12:00:00Z"
    )


def test_consent_rejects_extra_fields() -> None:
    record = {"project_id": "0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "enabled": True, "x": 1}
    detail = reason_of(decode_consent, js(record)).detail
    assert detail == "unexpected field (only the documented fields are allowed)"


def test_an_unexpected_key_is_not_echoed() -> None:
    record = {"project_id": "p-1", "enabled": True, "jane.doe@corp.example": 1}
    assert "jane" not in reason_of(decode_consent, js(record)).detail


@pytest.mark.parametrize(
    ("decode", "event"),
    [
        (decode_delta, {"event_family": "pipeline_stage", "event_type": "stage_completed"}),
        (decode_stage, {"event_family": "telemetry", "event_type": "cpu"}),
        (decode_stage, {"event_type": "stage_completed"}),
    ],
)
def test_unknown_event_type(decode: Any, event: dict[str, Any]) -> None:
    assert reason_of(decode, js({**event, "payload": {}})).reason == "unknown_event_type"


@pytest.mark.parametrize("kind", ["stage_completed", "delta_intent_created", ""])
def test_non_decision_on_a_decision_topic(kind: str) -> None:
    event = {"event_family": "pipeline_stage", "event_type": kind, "payload": {}}
    err = reason_of(decode_decision, js(event), "plan_approved")
    assert err.reason == "unknown_event_type"
    assert err.detail == (
        "event_family/event_type: expected pipeline_stage/plan_approved or plan_rejected"
    )


def test_rejection_on_the_approved_topic(sim: Simulator, snap: dict[str, Any]) -> None:
    err = reason_of(decode_decision, js(sim.decision(snap, False, WHEN)), "plan_approved")
    assert (err.reason, err.detail) == (
        "wrong_topic",
        "plan_rejected published on the plan_approved topic",
    )


def test_approval_on_the_stage_topic(sim: Simulator, snap: dict[str, Any]) -> None:
    err = reason_of(decode_stage, js(sim.decision(snap, True, WHEN)))
    assert (err.reason, err.detail) == (
        "wrong_topic",
        "plan_approved belongs on its decision topic",
    )


@pytest.mark.parametrize(("field", "value", "reason"), BAD_RECORDS)
def test_simulator_bad_records_get_their_reason(field: str, value: bytes, reason: str) -> None:
    decoders = {
        "plans": decode_plan,
        "delta_intents": decode_delta,
        "pipeline_stage": decode_stage,
        "plan_approved": lambda data: decode_decision(data, "plan_approved"),
    }
    assert reason_of(decoders[field], value).reason == reason


def nested_changes(sim: Simulator, snap: dict[str, Any], depth: int) -> bytes:
    # orjson.dumps stops at 254 levels, so splice the nesting into the encoded event.
    deep = b'{"k":' * depth + b'"leaf"' + b"}" * depth
    return js(sim.delta(snap, WHEN)).replace(b'{"steps_added":1}', deep)


def test_nesting_past_the_limit_is_a_schema_violation(sim: Simulator, snap: dict[str, Any]) -> None:
    err = reason_of(decode_delta, nested_changes(sim, snap, 500))
    assert (err.reason, err.detail) == ("schema_violation", "JSON nested deeper than 64 levels")


def test_nesting_within_the_limit_is_kept(sim: Simulator, snap: dict[str, Any]) -> None:
    changes: Any = decode_delta(nested_changes(sim, snap, 55)).payload.changes
    depth = 0
    while isinstance(changes, dict):
        changes, depth = changes["k"], depth + 1
    assert (depth, changes) == (55, "leaf")


def test_very_deep_nesting_is_a_clean_dlq_reason(sim: Simulator, snap: dict[str, Any]) -> None:
    err = reason_of(decode_delta, nested_changes(sim, snap, 5000))
    assert err.reason in {"invalid_json", "schema_violation"}


def test_decoding_does_not_mutate_the_wrapped_plan(snap: dict[str, Any]) -> None:
    bare = copy.deepcopy(snap["plan"])
    decode_plan(js(bare))
    assert bare == snap["plan"]


@pytest.mark.parametrize("stamp", [1_767_225_600, 1_767_225_600.5])
def test_numeric_timestamp_is_not_read_as_unix_time(
    sim: Simulator, snap: dict[str, Any], stamp: float
) -> None:
    event = sim.stage(snap, "completed", WHEN)
    event["timestamp"] = stamp
    err = reason_of(decode_stage, js(event))
    assert err.reason == "schema_violation"
    assert "ISO-8601" in err.detail


def _uuid4_by_the_stdlib(value: str) -> bool:
    """The reference: what ``uuid.UUID`` calls a canonical, hyphenated UUID v4."""
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return False
    return parsed.version == 4 and str(parsed) == value.lower()


@given(
    st.one_of(
        st.uuids().map(str),
        st.uuids().map(lambda u: str(u).upper()),
        st.uuids(version=4).map(str),
        st.uuids().map(lambda u: u.hex),
        st.uuids().map(lambda u: "{" + str(u) + "}"),
        st.text(alphabet="0123456789abcdefABCDEF-{}", min_size=30, max_size=40),
    )
)
def test_uuid4_check_agrees_with_the_stdlib(value: str) -> None:
    if _uuid4_by_the_stdlib(value):
        assert check_uuid4(value) == value.lower()
    else:
        with pytest.raises(ValueError, match="expected a canonical UUID v4") as info:
            check_uuid4(value)
        assert value not in str(info.value)


@pytest.mark.parametrize("enabled", ["no", "false", 0, 1, None])
def test_consent_enabled_is_a_json_boolean(enabled: object) -> None:
    record = {"project_id": "p-1", "enabled": enabled}
    assert reason_of(decode_consent, js(record)).detail.startswith("enabled: ")
