"""Codecs: lossless JSON/Avro round trips, single-object framing, fingerprints, evolution."""

from __future__ import annotations

import copy
import json
from io import BytesIO
from typing import Any

import fastavro
import pytest
from fastavro.schema import fingerprint as fastavro_fingerprint
from fastavro.schema import to_parsing_canonical_form

from streams.avro import SCHEMA_DIR, rabin64
from streams.codecs import (
    AvroSampleCodec,
    CodecError,
    JsonSampleCodec,
    codec_for,
    decode_any,
    schema_fingerprint,
)

# Pinned on purpose: changing it means every reader needs the new schema file first.
V1_FINGERPRINT = "1d3442ac6945b194"

META = {
    "source_event_ids": ["5f0c7b1e-8a4d-4c1e-9b7a-2d6f3e8a1c90"],
    "project_id": "0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    "human_feedback_label": "approved",
    "producer": "learnstream/0.1.0",
    "protocol_version": "1.0.0",
}

INTENT_RESOLUTION: dict[str, Any] = {
    "sample_id": "a3c1f9e2-7b64-4d0a-9c1e-5f2b8d7e6a41",
    "sample_family": "intent_resolution",
    "created_at": "2026-11-22T05:40:00.123456Z",
    "input": {
        "intent_id": "6d2a9f0e-1b3c-4e5d-8f7a-0c9b8a7d6e5f",
        "raw_request_summary": "Ajoute un cache Redis devant l'API — “vite” ✨",
        "intent_text": "add a redis cache in front of the orders API",
        "context": {
            "repo": {"name": "orders", "languages": ["python", "sql"], "stars": 0},
            "constraints": [{"kind": "latency_ms", "max": 250}, {"kind": "budget", "max": None}],
            "flags": {"dry_run": False, "verbose": True},
            "ratio": 0.1,
            "weights": [1.0, 2.5, -0.0, 1e-300, 1.7976931348623157e308],
            "big": 2**40,
            "extremes": [2**63 - 1, -(2**63), 0, -1],
            "empty": {"list": [], "obj": {}, "str": ""},
            "nested": [[[{"deep": [None, True, 3, 3.0, "x"]}]]],
        },
        "plan_state": {"status": "draft", "revision": 3, "locked": None},
    },
    "output": {
        "final_intent_summary": "Cache GET /orders responses in Redis for 60 s",
        "plan_id": "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968",
        "plan_step_count": 3,
        "resolution_quality_label": "good",
        "plan_structure": [
            {"step_id": "s1", "title": "Add redis client", "depends_on": [], "estimate_h": 1.0},
            {"step_id": "s2", "title": "Wrap handler", "depends_on": ["s1"], "estimate_h": 2.5},
            {"step_id": "s3", "title": "Load test", "depends_on": ["s2"], "owner": None},
        ],
    },
    "feedback": {
        "source": "user",
        "type": "approval",
        "details": {"comment": "ok 👍", "edits": 0},
        "quality_label": "good",
    },
    "meta": {**META, "plan_id": "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968", "quality_score": 0.92},
}

CONFIRM_DECISION: dict[str, Any] = {
    "sample_id": "b4d2e0f3-8c75-4e1b-8d2f-6a3c9e8f7b52",
    "sample_family": "confirm_decision",
    "created_at": "2026-11-22T05:41:10Z",
    "input": {
        "plan_id": "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968",
        "plan_state": {"steps": [{"id": "s1", "done": True}, {"id": "s2", "done": False}]},
    },
    "output": {"decision": "rejected", "reason": "touches prod DB", "confidence": 1.0},
    "state": {"attempt": 2, "previous_decisions": ["approved", None]},
    "feedback": {"source": "user", "type": "rejection", "quality_label": "poor"},
    "meta": {**META, "human_feedback_label": "rejected", "event_time": "2026-11-22T05:41:09Z"},
}

ERROR_CORRECTION: dict[str, Any] = {
    "sample_id": "c5e3f1a4-9d86-4f2c-9e3a-7b4d0f9a8c63",
    "sample_family": "error_correction",
    "created_at": "2026-11-22T06:00:00.5+00:00",
    "input": {"error": {"code": "E42", "message": "KeyError: 'sku'", "line": 118}, "retry": 0},
    "output": {"patch": "--- a/x.py\n+++ b/x.py\n@@\n-a\n+b\n", "tests_passed": True},
    "state": {},
    "feedback": {
        "source": "system",
        "type": "correction",
        "details": [{"op": "replace", "path": "/sku", "value": None}, 7, 7.5, "note"],
        "quality_label": "acceptable",
    },
    "meta": {**META, "project_id": None, "human_feedback_label": "not_reviewed"},
}

DELTA_IMPACT: dict[str, Any] = {
    "sample_id": "d6f4a2b5-0e97-4a3d-8f4b-8c5e1a0b9d74",
    "sample_family": "delta_impact",
    "created_at": "2026-11-22T07:15:30.000001Z",
    "input": {
        "delta_id": "e7a5b3c6-1f08-4b4e-9a5c-9d6f2b1c0e85",
        "intent_id": "6d2a9f0e-1b3c-4e5d-8f7a-0c9b8a7d6e5f",
        "change_summary": "rename column sku -> item_sku",
    },
    "output": {
        "actual_impact_summary": "2 services, 5 queries",
        "impact_scope": "cross_service",
        "affected": {"services": ["orders", "billing"], "queries": 5, "risk": 0.35},
    },
    "feedback": {"source": "system", "type": "score", "details": None, "quality_label": "good"},
    "meta": {**META, "source_flow_id": "flow-7", "quality_score": 1.0},
}

PIPELINE_OUTCOME: dict[str, Any] = {
    "sample_id": "e7a5b3c6-1f08-4b4e-9a5c-9d6f2b1c0e86",
    "sample_family": "pipeline_outcome",
    "created_at": "2026-11-22T08:00:00Z",
    "input": {"pipeline": "deploy", "stages": ["build", "test", "release"]},
    "output": {
        "outcome": "failed",
        "duration_s": 812.25,
        "stage_results": {"build": {"ok": True, "s": 90}, "test": {"ok": False, "failures": 3}},
    },
    "state": None,
    "feedback": {"source": "system", "type": "score", "details": 0.4, "quality_label": "poor"},
    "meta": {
        "source_event_ids": ["f8b6c4d7-2a19-4c5f-8b6d-0e7a3c2d1f96", META["source_event_ids"][0]],
        "human_feedback_label": "not_reviewed",
        "producer": "learnstream/0.1.0",
        "protocol_version": "1.0.0",
    },
}

SAMPLES = [INTENT_RESOLUTION, CONFIRM_DECISION, ERROR_CORRECTION, DELTA_IMPACT, PIPELINE_OUTCOME]
IDS = [s["sample_family"] for s in SAMPLES]


def typed(value: Any) -> Any:
    """Return ``value`` with every leaf tagged by its type (``1 == 1.0 == True`` otherwise)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, repr(value))


def rabin_reference(data: bytes) -> int:
    """Compute CRC-64-AVRO bit by bit (the spec's polynomial, no lookup table)."""
    fp = 0xC15D213AA4D7A795
    for byte in data:
        fp ^= byte
        for _ in range(8):
            fp = (fp >> 1) ^ (0xC15D213AA4D7A795 if fp & 1 else 0)
    return fp


@pytest.fixture(scope="module")
def avro() -> AvroSampleCodec:
    return AvroSampleCodec()


@pytest.fixture(scope="module")
def avro_v2() -> AvroSampleCodec:
    return AvroSampleCodec(reader_schema="learning_sample.v2.avsc")


def v1_raw() -> dict[str, Any]:
    raw: dict[str, Any] = json.loads((SCHEMA_DIR / "learning_sample.avsc").read_text("utf-8"))
    return raw


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_avro_round_trip_is_exact(avro: AvroSampleCodec, sample: dict[str, Any]) -> None:
    before = copy.deepcopy(sample)
    decoded = avro.decode(avro.encode(sample))
    assert decoded == sample
    assert typed(decoded) == typed(sample)
    assert sample == before


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_json_round_trip_is_exact(sample: dict[str, Any]) -> None:
    codec = JsonSampleCodec()
    decoded = codec.decode(codec.encode(sample))
    assert typed(decoded) == typed(sample)


def test_intent_resolution_values_keep_their_types(avro: AvroSampleCodec) -> None:
    decoded = avro.decode(avro.encode(INTENT_RESOLUTION))
    ctx = decoded["input"]["context"]
    assert ctx["ratio"] == 0.1
    assert type(ctx["ratio"]) is float
    assert ctx["big"] == 1099511627776
    assert type(ctx["big"]) is int
    assert [type(w) for w in ctx["weights"]] == [float] * 5
    assert ctx["extremes"] == [9223372036854775807, -9223372036854775808, 0, -1]
    assert ctx["nested"] == [[[{"deep": [None, True, 3, 3.0, "x"]}]]]
    assert ctx["flags"]["dry_run"] is False
    assert decoded["output"]["plan_structure"][2] == {
        "step_id": "s3",
        "title": "Load test",
        "depends_on": ["s2"],
        "owner": None,
    }
    assert (
        decoded["input"]["raw_request_summary"] == INTENT_RESOLUTION["input"]["raw_request_summary"]
    )


def test_absent_optionals_stay_absent(avro: AvroSampleCodec) -> None:
    decoded = avro.decode(avro.encode(PIPELINE_OUTCOME | {"state": {}}))
    assert "state" not in avro.decode(avro.encode(DELTA_IMPACT))
    assert "details" not in avro.decode(avro.encode(CONFIRM_DECISION))["feedback"]
    assert decoded["state"] == {}
    assert set(decoded["meta"]) == {
        "source_event_ids",
        "human_feedback_label",
        "producer",
        "protocol_version",
    }


def test_explicit_nulls_stay_null(avro: AvroSampleCodec) -> None:
    decoded = avro.decode(avro.encode(PIPELINE_OUTCOME))
    assert "state" in decoded
    assert decoded["state"] is None
    assert decoded["feedback"]["details"] == 0.4
    delta = avro.decode(avro.encode(DELTA_IMPACT))
    assert "details" in delta["feedback"]
    assert delta["feedback"]["details"] is None
    error = avro.decode(avro.encode(ERROR_CORRECTION))
    assert "project_id" in error["meta"]
    assert error["meta"]["project_id"] is None


def test_body_is_plain_avro_with_structured_json(avro: AvroSampleCodec) -> None:
    data = avro.encode(ERROR_CORRECTION)
    schema = fastavro.parse_schema(v1_raw())
    record: Any = fastavro.schemaless_reader(BytesIO(data[10:]), schema, None)
    assert record["input"]["error"] == {
        "v": {"code": {"v": "E42"}, "message": {"v": "KeyError: 'sku'"}, "line": {"v": 118}}
    }
    assert record["state"] == {}
    assert record["meta"]["project_id"] is None
    assert record["present_nulls"] == ["meta.project_id"]
    assert record["feedback"]["details"]["v"][0] == {
        "v": {"op": {"v": "replace"}, "path": {"v": "/sku"}, "value": {"v": None}}
    }


def test_header_is_magic_and_fingerprint(avro: AvroSampleCodec) -> None:
    data = avro.encode(INTENT_RESOLUTION)
    assert data[:2] == b"\xc3\x01"
    assert data[2:10] == bytes.fromhex(V1_FINGERPRINT)
    assert avro.fingerprint == bytes.fromhex(V1_FINGERPRINT)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ('"null"', 7195948357588979594),
        ('{"type": "boolean"}', -6970731678124411036),
        ('"int"', 8247732601305521295),
        ('"long"', -3434872931120570953),
        ('{"type": "fixed", "name": "foo", "size": 15}', 1756455273707447556),
        (
            '{"type": "record", "name": "foo", "doc": "d", "fields": '
            '[{"name": "f1", "type": "boolean", "default": true}]}',
            7843277075252814651,
        ),
        (
            '{"name": "PigValue", "type": "record", "fields": '
            '[{"name": "value", "type": ["null", "int", "long", "PigValue"]}]}',
            -1759257747318642341,
        ),
    ],
)
def test_fingerprint_matches_avro_spec_vectors(schema: str, expected: int) -> None:
    want = (expected % 2**64).to_bytes(8, "little")
    assert schema_fingerprint(schema) == want
    canonical = to_parsing_canonical_form(json.loads(schema)).encode()
    assert rabin_reference(canonical).to_bytes(8, "little") == want


def test_schema_fingerprint_agrees_with_independent_computations() -> None:
    canonical = to_parsing_canonical_form(v1_raw())
    assert schema_fingerprint(v1_raw()) == bytes.fromhex(V1_FINGERPRINT)
    assert rabin_reference(canonical.encode()).to_bytes(8, "little").hex() == V1_FINGERPRINT
    assert fastavro_fingerprint(canonical, "CRC-64-AVRO") == V1_FINGERPRINT
    assert rabin64(b"") == 0xC15D213AA4D7A795


def test_docs_do_not_change_the_fingerprint() -> None:
    raw = v1_raw()
    raw["doc"] = "another wording"
    assert schema_fingerprint(raw) == bytes.fromhex(V1_FINGERPRINT)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "bad magic or too short"),
        (b"\xc3\x01\x1d\x34", "bad magic or too short"),
        (b"\xc3\x02" + bytes.fromhex(V1_FINGERPRINT) + b"\x00", "bad magic"),
        (b'{"sample_id": "x"}', "bad magic"),
        (b"\xc3\x01" + b"\x00" * 8 + b"\x02a", "unknown Avro schema fingerprint 0000000000000000"),
        (b"\xc3\x01" + bytes.fromhex(V1_FINGERPRINT), "corrupt Avro message"),
        (b"\xc3\x01" + bytes.fromhex(V1_FINGERPRINT) + b"\xff" * 40, "corrupt Avro message"),
    ],
)
def test_bad_messages_raise_codec_error(avro: AvroSampleCodec, data: bytes, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        avro.decode(data)


def test_truncated_or_padded_messages_raise_codec_error(avro: AvroSampleCodec) -> None:
    data = avro.encode(CONFIRM_DECISION)
    with pytest.raises(CodecError, match="corrupt Avro message"):
        avro.decode(data[:-3])
    with pytest.raises(CodecError, match="1 trailing bytes"):
        avro.decode(data + b"\x00")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"extra": 1}, r"keys not in the schema: \['extra'\]"),
        ({"meta": {**META, "trainer_split": "train"}}, r"\['meta.trainer_split'\]"),
        ({"input": {"n": 2**64}}, "does not fit"),
        ({"input": {"s": {1, 2}}}, "not a JSON value: set"),
        ({"sample_id": None}, "does not fit"),
        ({"output": ["not", "an", "object"]}, "does not fit"),
    ],
)
def test_unencodable_samples_raise_codec_error(
    avro: AvroSampleCodec, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(CodecError, match=message):
        avro.encode(CONFIRM_DECISION | change)


def test_missing_required_field_raises_codec_error(avro: AvroSampleCodec) -> None:
    sample = {k: v for k, v in CONFIRM_DECISION.items() if k != "created_at"}
    with pytest.raises(CodecError, match="created_at"):
        avro.encode(sample)


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_v1_data_reads_with_v2_reader(
    avro: AvroSampleCodec, avro_v2: AvroSampleCodec, sample: dict[str, Any]
) -> None:
    decoded = avro_v2.decode(avro.encode(sample))
    assert decoded["meta"].pop("trainer_split") == "unassigned"
    assert typed(decoded) == typed(sample)


def test_v2_data_reads_with_v1_reader(avro: AvroSampleCodec, avro_v2: AvroSampleCodec) -> None:
    newer = copy.deepcopy(DELTA_IMPACT)
    newer["meta"]["trainer_split"] = "validation"
    data = avro_v2.encode(newer)
    assert data[2:10] == avro_v2.fingerprint != avro.fingerprint
    assert avro_v2.decode(data) == newer
    assert avro.decode(data) == DELTA_IMPACT


def test_json_codec_errors() -> None:
    codec = JsonSampleCodec()
    with pytest.raises(CodecError, match="not valid JSON"):
        codec.decode(b"\xc3\x01garbage")
    with pytest.raises(CodecError, match="must be an object, got list"):
        codec.decode(b"[1, 2]")
    with pytest.raises(CodecError, match="not JSON-serializable"):
        codec.encode({"x": {1, 2}})


def test_decode_any_sniffs_both_formats() -> None:
    assert decode_any(codec_for("avro").encode(INTENT_RESOLUTION)) == INTENT_RESOLUTION
    assert decode_any(codec_for("json").encode(INTENT_RESOLUTION)) == INTENT_RESOLUTION
    with pytest.raises(CodecError):
        decode_any(b"\xc3\x01nope")


def test_codec_for_returns_shared_codecs() -> None:
    assert codec_for("avro") is codec_for("avro")
    assert codec_for("avro").content_type == "application/vnd.learnstream.sample+avro"
    assert codec_for("json").content_type == "application/json"
    with pytest.raises(CodecError, match="unknown sample format 'xml'"):
        codec_for("xml")  # type: ignore[arg-type]


def test_schema_registry_holds_every_schema_file(avro: AvroSampleCodec) -> None:
    assert (SCHEMA_DIR / "learning_sample.avsc").is_file()
    assert len(avro.registry) == len(list(SCHEMA_DIR.glob("*.avsc")))
    with pytest.raises(CodecError, match="no Avro schema 'missing.avsc'"):
        AvroSampleCodec(reader_schema="missing.avsc")
