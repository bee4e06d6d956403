"""JSON Schemas: checked-in files match the models, are Draft-07, and accept what we build."""

from __future__ import annotations

import copy
import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import orjson
import pytest
from jsonschema import Draft7Validator
from pydantic import BaseModel, Field

from learnstream.streams.encoding import schemas
from learnstream.streams.encoding.schemas import (
    OFFICIAL_MPLP_DIR,
    SCHEMA_DIR,
    generated,
    stale,
    validate_sample,
)
from learnstream.streams.join.rules import IMPACT_ONLY_TYPE, on_decision, on_delta, on_stage
from learnstream.streams.mplp.decode import decode_plan
from learnstream.streams.mplp.models import DecisionEvent, DeltaIntentEvent, StageEvent
from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.pii import build_anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy
from learnstream.streams.samples.outbox import learning_event
from learnstream.streams.samples.sample import FAMILIES, LearningSample, family_errors
from learnstream.streams.sim.simulate import BAD_RECORDS, Simulator
from learnstream.streams.state.plan import PlanState, merge_snapshot

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOW = WHEN + timedelta(minutes=5)
GENERATED = {
    "plan_snapshot.json",
    "plan.json",
    "confirm.json",
    "decision_event.json",
    "delta_intent_event.json",
    "stage_event.json",
    "consent_record.json",
    "learning_sample.json",
    "a2e_feedback.json",
    "a2e_experience.json",
    "a2e_skill_performance_record.json",
    "a2e_reward_sample.json",
    "a2e_learn_request.json",
    "a2e_learn_response.json",
}
HAND_WRITTEN = {
    "mplp/mplp-learning-sample-core.schema.json",
    "mplp/mplp-learning-sample-intent.schema.json",
    "mplp/mplp-learning-sample-delta.schema.json",
    "mplp/learning-feedback.schema.json",
    "mplp/learning_sample_captured.json",
}
#: Keywords of drafts after 07 that a Draft-07 validator would silently ignore.
LATER_KEYWORDS = {
    "$defs",
    "prefixItems",
    "discriminator",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "minContains",
    "maxContains",
}
INTENT = "mplp/mplp-learning-sample-intent.schema.json"
CORE = "mplp/mplp-learning-sample-core.schema.json"


def load(name: str) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


def keywords(node: Any) -> set[str]:
    """Return every key used anywhere in a schema (property names included, harmlessly)."""
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in keywords(v)}
    if isinstance(node, list):
        return {k for v in node for k in keywords(v)}
    return set()


# --- the files ------------------------------------------------------------------------------


def test_schema_files_are_the_generated_and_hand_written_sets() -> None:
    on_disk = {
        p.relative_to(SCHEMA_DIR).as_posix()
        for p in SCHEMA_DIR.rglob("*.json")
        if not p.is_relative_to(OFFICIAL_MPLP_DIR)
    }
    assert on_disk == GENERATED | HAND_WRITTEN
    assert set(generated()) == GENERATED


def test_checked_in_schemas_equal_generated() -> None:
    """Fail when a model changed without ``python -m learnstream.streams.encoding.schemas``."""
    for name, schema in generated().items():
        assert load(name) == schema, (
            f"{name} is stale: run python -m learnstream.streams.encoding.schemas"
        )
    assert stale(SCHEMA_DIR) == []


@pytest.mark.parametrize("name", sorted(GENERATED | HAND_WRITTEN))
def test_every_schema_is_draft7(name: str) -> None:
    schema = load(name)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(schema)
    assert not keywords(schema) & LATER_KEYWORDS
    refs = re.findall(r'"\$ref": "([^"]+)"', json.dumps(schema))
    assert all(r.startswith("#/definitions/") or r.endswith(".schema.json") for r in refs)


def test_generated_ids_and_uuid_fields() -> None:
    sample = load("learning_sample.json")
    assert sample["$id"] == "https://learnstream.dev/schemas/learning_sample.json"
    assert sample["properties"]["sample_id"] == {
        "format": "uuid",
        "pattern": schemas.UUID4_PATTERN,
        "title": "Sample Id",
        "type": "string",
    }
    assert sample["definitions"]["SampleMeta"]["properties"]["source_event_ids"]["items"] == {
        "format": "uuid",
        "pattern": schemas.UUID4_PATTERN,
        "type": "string",
    }
    pattern = re.compile(schemas.UUID4_PATTERN)
    assert pattern.match(str(uuid.uuid4()))
    assert not pattern.match(str(uuid.uuid1()))
    assert not pattern.match(str(uuid.UUID(int=0)))


def test_later_keywords_are_rewritten_for_draft7() -> None:
    class Pair(BaseModel):
        bounds: tuple[int, str]
        rest: tuple[int, ...] = ()

    schema = schemas._schema("pair.json", Pair)
    assert schema["properties"]["bounds"]["items"] == [{"type": "integer"}, {"type": "string"}]
    assert "prefixItems" not in json.dumps(schema)
    Draft7Validator.check_schema(schema)
    assert not list(Draft7Validator(schema).iter_errors({"bounds": [1, "a"]}))
    assert list(Draft7Validator(schema).iter_errors({"bounds": ["a", 1]}))


def test_discriminator_is_dropped_and_ref_siblings_kept_alive() -> None:
    class Cat(BaseModel):
        kind: Literal["cat"]

    class Dog(BaseModel):
        kind: Literal["dog"]

    class Pet(BaseModel):
        pet: Cat | Dog = Field(discriminator="kind")

    schema = schemas._schema("pet.json", Pet)
    assert schema["properties"]["pet"] == {
        "oneOf": [{"$ref": "#/definitions/Cat"}, {"$ref": "#/definitions/Dog"}],
        "title": "Pet",
    }
    assert not list(Draft7Validator(schema).iter_errors({"pet": {"kind": "dog"}}))
    assert list(Draft7Validator(schema).iter_errors({"pet": {"kind": "cow"}}))
    # Draft-07 ignores the siblings of $ref: validation keywords move beside an allOf.
    assert schemas._to_draft7({"$ref": "#/definitions/A", "title": "a", "minProperties": 1}) == {
        "allOf": [{"$ref": "#/definitions/A"}],
        "title": "a",
        "minProperties": 1,
    }
    assert schemas._to_draft7({"$ref": "#/definitions/A", "default": {"discriminator": 1}}) == {
        "$ref": "#/definitions/A",
        "default": {"discriminator": 1},
    }


def test_module_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert schemas.main([str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == GENERATED
    assert schemas.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "plan.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "confirm.json").unlink()
    capsys.readouterr()
    assert schemas.main(["--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"stale: {tmp_path / 'plan.json'}" in err
    assert f"stale: {tmp_path / 'confirm.json'}" in err
    assert err.count("stale:") == 2


# --- samples --------------------------------------------------------------------------------


def every_sample(sim: Simulator) -> list[LearningSample]:
    snap = sim.plan(WHEN)
    state = merge_snapshot(None, decode_plan(orjson.dumps(snap)), WHEN)
    assert isinstance(state, PlanState)
    impact_only = sim.delta(snap, WHEN, impact=True) | {"event_type": IMPACT_ONLY_TYPE}
    impact_only["payload"]["impact"]["rollback_used"] = True
    return [
        *on_decision(
            DecisionEvent.model_validate(sim.decision(snap, True, WHEN)), state, NOW
        ).samples,
        *on_decision(
            DecisionEvent.model_validate(sim.decision(snap, False, WHEN)), state, NOW
        ).samples,
        *on_delta(
            DeltaIntentEvent.model_validate(sim.delta(snap, WHEN, impact=True)), state, NOW
        ).samples,
        *on_delta(DeltaIntentEvent.model_validate(impact_only), state, NOW).samples,
        *on_stage(
            StageEvent.model_validate(sim.stage(snap, "completed", WHEN)), state, NOW
        ).samples,
        *on_stage(StageEvent.model_validate(sim.stage(snap, "failed", WHEN)), state, NOW).samples,
    ]


@pytest.fixture(scope="module")
def samples() -> list[dict[str, Any]]:
    return [s.to_dict() for s in every_sample(Simulator(seed=3, pii_ratio=1.0))]


def test_samples_of_every_builder_validate(samples: list[dict[str, Any]]) -> None:
    assert sorted({(s["sample_family"], s["feedback"]["quality_label"]) for s in samples}) == [
        ("confirm_decision", "good"),
        ("confirm_decision", "poor"),
        ("delta_impact", "good"),
        ("delta_impact", "poor"),
        ("error_correction", "acceptable"),
        ("intent_resolution", "good"),
        ("intent_resolution", "poor"),
        ("pipeline_outcome", "good"),
        ("pipeline_outcome", "poor"),
    ]
    assert {s["sample_id"]: validate_sample(s) for s in samples} == {
        s["sample_id"]: [] for s in samples
    }


def test_samples_still_validate_after_privacy(samples: list[dict[str, Any]]) -> None:
    anonymizer = build_anonymizer(PrivacyConfig())
    cleaned = [apply_privacy(copy.deepcopy(s), anonymizer)[0] for s in samples]
    assert any("<EMAIL_ADDRESS>" in json.dumps(c) for c in cleaned)
    assert [validate_sample(c) for c in cleaned] == [[] for _ in cleaned]


def test_opt_out_keeps_the_fields_a_family_requires() -> None:
    sim = Simulator(seed=3, pii_ratio=0.0)
    snap = sim.plan(WHEN)
    snap["intent"]["text"] = "Rotate the token kept in config/prod.env"
    state = merge_snapshot(None, decode_plan(orjson.dumps(snap)), WHEN)
    event = DecisionEvent.model_validate(sim.decision(snap, True, WHEN))
    intent = on_decision(event, state, NOW).samples[1].to_dict()
    cleaned, _ = apply_privacy(intent, build_anonymizer(PrivacyConfig()))
    assert validate_sample(cleaned) == []
    summary = cleaned["input"]["raw_request_summary"]
    assert "<OPTED_OUT>" in summary
    assert "prod.env" not in summary


def sample_of(samples: list[dict[str, Any]], family: str) -> dict[str, Any]:
    return copy.deepcopy(next(s for s in samples if s["sample_family"] == family))


def test_intent_sample_without_intent_id_fails(samples: list[dict[str, Any]]) -> None:
    sample = sample_of(samples, "intent_resolution")
    del sample["input"]["intent_id"]
    assert validate_sample(sample) == [f"{INTENT}: $.input: 'intent_id' is a required property"]
    # MPLP allows an empty intent_id (our copy validates as the official one does);
    # learnstream's own rule lives in family_errors, which the builders apply.
    sample["input"]["intent_id"] = ""
    assert validate_sample(sample) == []
    assert family_errors(LearningSample.model_validate(sample)) == [
        "input.intent_id must be a non-empty str"
    ]


def test_non_v4_sample_id_fails_ours_only(samples: list[dict[str, Any]]) -> None:
    """MPLP's format "uuid" takes any version; learnstream's own schema insists on v4."""
    sample = sample_of(samples, "pipeline_outcome")
    sample["sample_id"] = str(uuid.UUID("c1a2b3c4-d5e6-1f70-8a9b-0c1d2e3f4a5b"))
    errors = validate_sample(sample)
    assert [e.split(": ")[:2] for e in errors] == [["learning_sample.json", "$.sample_id"]]
    assert "does not match" in errors[0]


def test_delta_sample_with_an_unknown_scope_fails(samples: list[dict[str, Any]]) -> None:
    sample = sample_of(samples, "delta_impact")
    sample["output"]["impact_scope"] = "galaxy"
    del sample["input"]["change_summary"]
    assert validate_sample(sample) == [
        "mplp/mplp-learning-sample-delta.schema.json: $.input: "
        "'change_summary' is a required property",
        "mplp/mplp-learning-sample-delta.schema.json: $.output.impact_scope: "
        "'galaxy' is not one of ['local', 'module', 'system', 'global']",
    ]


def test_bad_feedback_and_timestamp_fail(samples: list[dict[str, Any]]) -> None:
    sample = sample_of(samples, "error_correction")
    sample["feedback"]["quality_label"] = "bad"
    sample["created_at"] = "2026-13-01T00:00:00Z"
    errors = validate_sample(sample)
    assert f"{CORE}: $.created_at: '2026-13-01T00:00:00Z' is not a 'date-time'" in errors
    assert (
        "mplp/learning-feedback.schema.json: $.quality_label: "
        "'bad' is not one of ['good', 'acceptable', 'poor']"
    ) in errors
    assert any(e.startswith("learning_sample.json: $.feedback.quality_label: ") for e in errors)


@pytest.mark.parametrize(
    "created_at", ["2026-03-01T12:00:00", "2026-03-01 12:00:00Z", "20260301T120000Z", 1772366400]
)
def test_created_at_must_be_rfc3339_with_offset(
    samples: list[dict[str, Any]], created_at: Any
) -> None:
    sample = sample_of(samples, "confirm_decision")
    sample["created_at"] = created_at
    assert any(e.startswith(f"{CORE}: $.created_at: ") for e in validate_sample(sample))


def test_missing_feedback_is_reported_once(samples: list[dict[str, Any]]) -> None:
    sample = sample_of(samples, "confirm_decision")
    del sample["feedback"]
    assert validate_sample(sample) == ["learning_sample.json: $: 'feedback' is a required property"]


def test_captured_event_lists_every_family_we_emit() -> None:
    payload = load("mplp/learning_sample_captured.json")["properties"]["payload"]
    assert set(payload["properties"]["sample_family"]["enum"]) == set(FAMILIES)


def test_captured_event_validates(samples: list[dict[str, Any]]) -> None:
    validator = Draft7Validator(
        load("mplp/learning_sample_captured.json"), format_checker=Draft7Validator.FORMAT_CHECKER
    )
    for sample in samples:
        event = learning_event(sample, NOW)
        assert list(validator.iter_errors(event)) == []
        assert event["payload"]["sample_id"] == sample["sample_id"]
    assert list(validator.iter_errors({**event, "event_family": "pipeline_stage"}))


# --- inputs ---------------------------------------------------------------------------------


def validator(name: str) -> Draft7Validator:
    return Draft7Validator(load(name), format_checker=Draft7Validator.FORMAT_CHECKER)


def errors(name: str, instance: Any) -> list[str]:
    return [e.message for e in validator(name).iter_errors(instance)]


def test_simulated_inputs_validate_against_their_schemas() -> None:
    sim = Simulator(seed=5)
    for n in range(10):
        snap = sim.plan(WHEN + timedelta(seconds=n))
        assert errors("plan_snapshot.json", snap) == []
        assert errors("plan.json", snap["plan"]) == []
        assert errors("decision_event.json", sim.decision(snap, n % 2 == 0, WHEN)) == []
        assert errors("delta_intent_event.json", sim.delta(snap, WHEN, impact=n % 2 == 0)) == []
        for status in ("started", "completed", "failed"):
            assert errors("stage_event.json", sim.stage(snap, status, WHEN)) == []
        assert (
            errors("consent_record.json", {"project_id": snap["project_id"], "enabled": n % 3 == 0})
            == []
        )


def test_confirm_object_validates() -> None:
    confirm = {
        "meta": {"protocolVersion": "1.0.0"},
        "confirm_id": "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e",
        "target_type": "plan",
        "target_id": "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b",
        "status": "approved",
        "requested_by_role": "planner",
        "requested_at": "2026-03-01T11:00:00Z",
        "decisions": [
            {
                "decision_id": "4d5e6f7a-8b9c-4d0e-8f1a-2b3c4d5e6f7a",
                "status": "approved",
                "decided_by_role": "reviewer",
                "decided_at": "2026-03-01T11:29:00Z",
            }
        ],
    }
    assert errors("confirm.json", confirm) == []
    assert errors("confirm.json", {**confirm, "target_type": "plans"}) == [
        "'plans' is not one of ['context', 'plan', 'trace', 'extension', 'other']"
    ]


def test_input_schemas_reject_what_the_decoder_rejects() -> None:
    sim = Simulator(seed=5)
    snap = sim.plan(WHEN)
    bad_plan = next(json.loads(v) for field, v, _ in BAD_RECORDS if field == "plans")
    assert errors("plan_snapshot.json", bad_plan)
    event = sim.delta(snap, WHEN)
    event["payload"]["delta_id"] = "delta 1"  # any id but one with whitespace (seeds use plan-123)
    assert errors("delta_intent_event.json", event) == [
        f"'delta 1' does not match {schemas.RUNTIME_ID['pattern']!r}"
    ]
    decision = sim.decision(snap, True, WHEN) | {"event_type": "stage_completed"}
    assert errors("decision_event.json", decision) == [
        "'stage_completed' is not one of ['plan_approved', 'plan_rejected']"
    ]
    assert errors(
        "consent_record.json", {"project_id": snap["project_id"], "enabled": True, "why": "x"}
    )
