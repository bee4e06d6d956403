"""A2E schemas: the generated JSON Schemas agree with the models; the Avro ones round-trip."""

from __future__ import annotations

import json
from io import BytesIO
from typing import Any

import fastavro
import pytest
from jsonschema import Draft7Validator
from pydantic import BaseModel

from learnstream.streams.a2e.messages import (
    LearnAdaptRequest,
    LearnAdaptResponse,
    LearnExperienceRequest,
    LearnFeedbackRequest,
    LearnStatsRequest,
    LearnStatsResponse,
)
from learnstream.streams.a2e.models import Experience, Feedback
from learnstream.streams.a2e.wire import encode
from learnstream.streams.encoding.avro import SCHEMA_DIR as AVRO_DIR
from learnstream.streams.encoding.avro import from_record, load_schemas, to_record
from learnstream.streams.encoding.schemas import MODELS, SCHEMA_DIR, generated, stale
from tests.unit.test_schemas import LATER_KEYWORDS, keywords

A2E_JSON = sorted(name for name in MODELS if name.startswith("a2e_"))
A2E_AVRO = AVRO_DIR / "a2e"
FEEDBACK = Feedback(
    correlation_id="req_1",
    polarity="CORRECTIVE",
    score=-0.5,
    correction="5",
    correction_span={"start": 0, "end": 1, "nested": {"k": [1, None]}},
    annotator_id="ann-1",
    rated_turn={"prompt": "2+2?", "response": "4"},
    skill_name="math",
    project_id="proj-1",
)
EXPERIENCE = Experience(
    state={"count": 0, "tags": ["a"]},
    action={"type": "inc"},
    reward=1.0,
    next_state={"count": 1},
    project_id="proj-1",
)


def validator(name: str) -> Draft7Validator:
    return Draft7Validator(json.loads((SCHEMA_DIR / name).read_text("utf-8")))


def test_the_a2e_schemas_are_generated_and_current() -> None:
    assert A2E_JSON == [
        "a2e_experience.json",
        "a2e_feedback.json",
        "a2e_learn_request.json",
        "a2e_learn_response.json",
        "a2e_reward_sample.json",
        "a2e_skill_performance_record.json",
    ]
    assert not [name for name in stale(SCHEMA_DIR) if name in A2E_JSON]
    for name in A2E_JSON:
        schema = generated()[name]
        Draft7Validator.check_schema(schema)
        assert not keywords(schema) & LATER_KEYWORDS, name


def feedback_json(**changes: Any) -> dict[str, Any]:
    return FEEDBACK.model_dump(mode="json") | changes


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({}, True),
        ({"polarity": "POSITIVE", "correction": None, "score": 1.0}, True),
        ({"correction": None}, False),  # CORRECTIVE needs a correction, in the schema too
        ({"correction": ""}, False),
        ({"score": 1.5}, False),
        ({"confidence": -0.1}, False),
        ({"polarity": "GOOD"}, False),
        ({"correlation_id": "has space"}, False),
        ({"project_id": None}, True),
        ({"project_id": "3f2a9c1e-7b4d-4e8a-9c2b-1d5e6f7a8b9c"}, True),
        ({"project_id": "has space"}, False),
        ({"project_id": ""}, False),
        ({"extra": 1}, False),
    ],
)
def test_feedback_schema_agrees_with_the_model(changes: dict[str, Any], valid: bool) -> None:
    data = feedback_json(**changes)
    schema_ok = validator("a2e_feedback.json").is_valid(data)
    try:
        Feedback.model_validate(data)
        model_ok = True
    except ValueError:
        model_ok = False
    assert schema_ok == model_ok == valid


@pytest.mark.parametrize(
    "message",
    [
        LearnFeedbackRequest(correlation_id="r1", payload={"feedbacks": [FEEDBACK]}),
        LearnExperienceRequest(correlation_id="r2", payload={"experiences": [EXPERIENCE]}),
        LearnAdaptRequest(correlation_id="r3", payload={"strategy": "softmax"}),
        LearnStatsRequest(correlation_id="r4"),
    ],
    ids=lambda m: m.type,
)
def test_request_schema_accepts_every_request(message: BaseModel) -> None:
    data = json.loads(encode(message))  # type: ignore[arg-type]
    assert validator("a2e_learn_request.json").is_valid(data)
    assert not validator("a2e_learn_request.json").is_valid(data | {"type": "learn/oops/req"})
    assert not validator("a2e_learn_response.json").is_valid(data)


def test_response_schema_accepts_ok_and_error_responses() -> None:
    ok = LearnStatsResponse(correlation_id="r", payload={"skills": [{"name": "s"}]})
    failed = LearnAdaptResponse(
        correlation_id="r", ok=False, error={"code": "internal", "message": "try later"}
    )
    for message in (ok, failed):
        assert validator("a2e_learn_response.json").is_valid(json.loads(encode(message)))


# --- Avro ---------------------------------------------------------------------------------------


def test_a2e_avro_schemas_are_not_sample_schemas() -> None:
    assert sorted(p.name for p in A2E_AVRO.glob("*.avsc")) == ["experience.avsc", "feedback.avsc"]
    assert not set(load_schemas(AVRO_DIR)) & {"experience.avsc", "feedback.avsc"}
    assert set(load_schemas(A2E_AVRO)) == {"experience.avsc", "feedback.avsc"}


@pytest.mark.parametrize(
    ("file", "model"),
    [("feedback.avsc", FEEDBACK), ("experience.avsc", EXPERIENCE)],
)
def test_avro_round_trip_and_fields(file: str, model: BaseModel) -> None:
    schema = load_schemas(A2E_AVRO)[file][1]
    assert [f["name"] for f in schema["fields"]] == list(type(model).model_fields)
    out = BytesIO()
    fastavro.schemaless_writer(out, schema, to_record(schema, model.model_dump(mode="json")))
    record = fastavro.schemaless_reader(BytesIO(out.getvalue()), schema, None)
    assert isinstance(record, dict)
    assert type(model).model_validate(from_record(schema, record)) == model


def test_absent_feedback_optionals_stay_absent() -> None:
    schema = load_schemas(A2E_AVRO)["feedback.avsc"][1]
    minimal = Feedback(correlation_id="c", polarity="NEUTRAL", score=0.0)
    out = BytesIO()
    fastavro.schemaless_writer(out, schema, to_record(schema, minimal.model_dump(mode="json")))
    record = fastavro.schemaless_reader(BytesIO(out.getvalue()), schema, None)
    assert isinstance(record, dict)
    assert from_record(schema, record) == minimal.model_dump(mode="json", exclude_none=True)


def _without_project(schema: dict[str, Any]) -> dict[str, Any]:
    """Return the schema as it was before the ``project_id`` extension."""
    fields = [f for f in schema["fields"] if f["name"] != "project_id"]
    return fastavro.parse_schema(schema | {"fields": fields})


@pytest.mark.parametrize(
    ("file", "model"),
    [("feedback.avsc", FEEDBACK), ("experience.avsc", EXPERIENCE)],
)
def test_project_id_is_an_optional_field_both_reader_generations_read(
    file: str, model: BaseModel
) -> None:
    new = load_schemas(A2E_AVRO)[file][1]
    old = _without_project(new)
    (field,) = [f for f in new["fields"] if f["name"] == "project_id"]
    assert (field["type"], field["default"]) == (["null", "string"], None)
    data = model.model_dump(mode="json")
    older = {k: v for k, v in data.items() if k != "project_id"}
    before = BytesIO()  # written before the extension, read now: project_id absent
    fastavro.schemaless_writer(before, old, to_record(old, older))
    record = fastavro.schemaless_reader(BytesIO(before.getvalue()), old, new)
    assert isinstance(record, dict)
    assert type(model).model_validate(from_record(new, record)).project_id is None  # type: ignore[attr-defined]
    after = BytesIO()  # written now, read by an older reader: the field is skipped
    fastavro.schemaless_writer(after, new, to_record(new, data))
    record = fastavro.schemaless_reader(BytesIO(after.getvalue()), new, old)
    assert isinstance(record, dict)
    assert "project_id" not in record
    assert from_record(old, record) == {k: v for k, v in older.items() if v is not None}
