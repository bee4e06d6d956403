"""Codecs: lossless JSON/Avro round trips, the generic-reader layout, framing, evolution."""

from __future__ import annotations

import copy
import json
from io import BytesIO
from pathlib import Path
from typing import Any

import fastavro
import pytest
from fastavro.schema import fingerprint as fastavro_fingerprint
from fastavro.schema import to_parsing_canonical_form

from learnstream.streams.encoding.avro import SCHEMA_DIR
from learnstream.streams.encoding.codecs import (
    AvroSampleCodec,
    CodecError,
    JsonSampleCodec,
    codec_for,
    decode_any,
    schema_fingerprint,
)
from tests.support.avro_consumer import marked_fields, plain_read

# Pinned on purpose: changing it means every reader needs the new schema file first.
V1_FINGERPRINT = "913edac6836dc850"
#: The retired JsonValue wrapper layout (schemas/avro/legacy/), still readable.
WRAPPED_V1_FINGERPRINT = "1d3442ac6945b194"
WRAPPED_V2_FINGERPRINT = "f9e3f6712d1fa5f3"
MARKED = ["input", "output", "state", "feedback.details"]

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
    "meta": {
        **META,
        "plan_id": "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968",
        "quality_score": 0.92,
        "clarification_rounds": 2,
        "ambiguity_flags": ["vague_scope", "missing_constraints"],
        "id_refs": {"intent_id": "intent-42", "plan_id": "plan-7"},
    },
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
    "meta": {**META, "human_feedback_label": "not_reviewed", "ambiguity_flags": []},
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
    "feedback": {"source": "system", "type": "score", "details": [None], "quality_label": "good"},
    "meta": {
        **META,
        "source_flow_id": "flow-7",
        "quality_score": 1.0,
        "impact_analysis_duration_ms": 2**40,
        "predicted_vs_actual_accuracy": "underestimated",
    },
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


def v1_raw() -> dict[str, Any]:
    raw: dict[str, Any] = json.loads((SCHEMA_DIR / "learning_sample.avsc").read_text("utf-8"))
    return raw


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_avro_round_trip_is_exact(avro: AvroSampleCodec, sample: dict[str, Any]) -> None:
    before = copy.deepcopy(sample)
    decoded = avro.decode(avro.encode(sample))
    assert decoded == sample
    assert typed(decoded) == typed(sample)
    assert list(decoded["input"]) == list(sample["input"])  # key order survives the JSON text
    assert sample == before


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_json_round_trip_is_exact(sample: dict[str, Any]) -> None:
    codec = JsonSampleCodec()
    decoded = codec.decode(codec.encode(sample))
    assert typed(decoded) == typed(sample)


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_plain_consumer_reads_what_the_codec_reads(
    avro: AvroSampleCodec, sample: dict[str, Any]
) -> None:
    data = avro.encode(sample)
    assert typed(plain_read(data)) == typed(sample)


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
    assert decoded["meta"]["id_refs"] == {"intent_id": "intent-42", "plan_id": "plan-7"}


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


def test_null_typed_fields_read_as_absent(avro: AvroSampleCodec) -> None:
    """None and absent are one thing, as in LearningSample.to_dict() (exclude_none)."""
    nulls = copy.deepcopy(CONFIRM_DECISION)
    nulls["state"] = None
    nulls["feedback"]["details"] = None
    nulls["meta"] |= {"project_id": None, "quality_score": None, "id_refs": None}
    expected = {k: v for k, v in CONFIRM_DECISION.items() if k != "state"}
    expected["meta"] = {k: v for k, v in META.items() if k != "project_id"} | {
        "human_feedback_label": "rejected",
        "event_time": "2026-11-22T05:41:09Z",
    }
    decoded = avro.decode(avro.encode(nulls))
    assert decoded == expected
    assert plain_read(avro.encode(nulls)) == decoded


def test_free_form_parts_are_json_text_in_plain_avro(avro: AvroSampleCodec) -> None:
    data = avro.encode(ERROR_CORRECTION)
    schema = fastavro.parse_schema(v1_raw())
    record: Any = fastavro.schemaless_reader(BytesIO(data[10:]), schema, None)
    assert json.loads(record["input"]) == ERROR_CORRECTION["input"]
    assert record["state"] == "{}"
    assert json.loads(record["feedback"]["details"])[0] == {
        "op": "replace",
        "path": "/sku",
        "value": None,
    }
    assert record["meta"]["project_id"] == META["project_id"]
    assert record["meta"]["ambiguity_flags"] == []
    assert record["meta"]["plan_id"] is None


def test_exactly_the_free_form_fields_are_marked_as_json() -> None:
    raw = v1_raw()
    assert marked_fields(raw) == MARKED
    fields = {f["name"]: f for f in raw["fields"]}
    feedback = {f["name"]: f for f in fields["feedback"]["type"]["fields"]}
    for field in (fields["input"], fields["output"], fields["state"], feedback["details"]):
        assert field["learnstream.json"] is True
        assert "JSON text" in field["doc"]
        assert field["type"] in ("string", ["null", "string"])
    assert '"learnstream.json": true' in raw["doc"]


def test_meta_record_holds_the_sample_meta_contract() -> None:
    meta = next(f for f in v1_raw()["fields"] if f["name"] == "meta")["type"]
    types = {f["name"]: f["type"] for f in meta["fields"]}
    assert types == {
        "source_event_ids": {"type": "array", "items": "string"},
        "project_id": ["null", "string"],
        "human_feedback_label": "string",
        "producer": "string",
        "protocol_version": "string",
        "plan_id": ["null", "string"],
        "event_time": ["null", "string"],
        "source_flow_id": ["null", "string"],
        "quality_score": ["null", "double"],
        "clarification_rounds": ["null", "long"],
        "ambiguity_flags": ["null", {"type": "array", "items": "string"}],
        "impact_analysis_duration_ms": ["null", "long"],
        "predicted_vs_actual_accuracy": ["null", "string"],
        "id_refs": ["null", {"type": "map", "values": "string"}],
    }
    assert all(f["default"] is None for f in meta["fields"] if isinstance(f["type"], list))


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
    """Vectors of the Avro spec's test suite (signed 64-bit): fastavro's CRC is the spec's."""
    want = (expected % 2**64).to_bytes(8, "little")
    assert schema_fingerprint(schema) == want
    canonical = to_parsing_canonical_form(json.loads(schema)).encode()
    assert rabin_reference(canonical).to_bytes(8, "little") == want


def test_schema_fingerprint_agrees_with_independent_computations() -> None:
    canonical = to_parsing_canonical_form(v1_raw())
    assert schema_fingerprint(v1_raw()) == bytes.fromhex(V1_FINGERPRINT)
    assert rabin_reference(canonical.encode()).to_bytes(8, "little").hex() == V1_FINGERPRINT
    assert fastavro_fingerprint(canonical, "CRC-64-AVRO") == V1_FINGERPRINT
    assert rabin_reference(b"") == 0xC15D213AA4D7A795


def test_docs_and_marks_do_not_change_the_fingerprint() -> None:
    raw = v1_raw()
    raw["doc"] = "another wording"
    raw["fields"][3].pop("learnstream.json")
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
        (b"\xc3\x01" + bytes.fromhex(WRAPPED_V1_FINGERPRINT) + b"\x02", "corrupt Avro message"),
    ],
)
def test_bad_messages_raise_codec_error(avro: AvroSampleCodec, data: bytes, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        avro.decode(data)


def test_corrupt_json_text_raises_codec_error(avro: AvroSampleCodec) -> None:
    data = avro.encode(CONFIRM_DECISION)
    text = b'{"decision":"rejected"'
    assert text in data
    with pytest.raises(CodecError, match=r"corrupt Avro message \(JSONDecodeError\)"):
        avro.decode(data.replace(text, b"{'decision':'rejected'"))


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
        ({"input": {"n": 2**64}}, "input is not JSON-serializable: Integer exceeds 64-bit range"),
        (
            {"input": {"s": {1, 2}}},
            "input is not JSON-serializable: .*: set",
        ),
        ({"state": {"s": {"secret-value"}}}, "state is not JSON-serializable"),
        ({"sample_id": None}, r"does not fit the Avro schema \(\w+Error\)"),
        ({"meta": {**META, "quality_score": "secret-value"}}, r"\(\w+Error\)$"),
        ({"meta": {k: v for k, v in META.items() if k != "producer"}}, r"\['meta.producer'\]"),
    ],
)
def test_unencodable_samples_raise_codec_error(
    avro: AvroSampleCodec, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(CodecError, match=message) as raised:
        avro.encode(CONFIRM_DECISION | change)
    assert "secret-value" not in str(raised.value)  # errors name fields, never values


def test_missing_required_field_raises_codec_error(avro: AvroSampleCodec) -> None:
    sample = {k: v for k, v in CONFIRM_DECISION.items() if k != "created_at"}
    with pytest.raises(CodecError, match=r"missing required fields: \['created_at'\]"):
        avro.encode(sample)


# --- evolution --------------------------------------------------------------------------------


def _with_v2(directory: Path) -> Path:
    """Write v1 and a v2 that adds the optional ``meta.trainer_split`` into ``directory``."""
    v2 = v1_raw()
    meta = next(f for f in v2["fields"] if f["name"] == "meta")["type"]
    meta["fields"].append(
        {"name": "trainer_split", "type": ["null", "string"], "default": None, "doc": "v2"}
    )
    (directory / "learning_sample.avsc").write_text(json.dumps(v1_raw()), "utf-8")
    (directory / "learning_sample.v2.avsc").write_text(json.dumps(v2), "utf-8")
    return directory


@pytest.fixture(scope="module")
def v2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _with_v2(tmp_path_factory.mktemp("avsc"))


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_v1_data_reads_with_v2_reader(
    avro: AvroSampleCodec, v2_dir: Path, sample: dict[str, Any]
) -> None:
    v2 = AvroSampleCodec(v2_dir, reader_schema="learning_sample.v2.avsc")
    assert v2.fingerprint != avro.fingerprint
    decoded = v2.decode(avro.encode(sample))
    assert typed(decoded) == typed(sample)  # the new field's null default reads as absent


def test_v2_data_reads_with_v1_reader(v2_dir: Path) -> None:
    v1 = AvroSampleCodec(v2_dir)
    v2 = AvroSampleCodec(v2_dir, reader_schema="learning_sample.v2.avsc")
    newer = copy.deepcopy(DELTA_IMPACT)
    newer["meta"]["trainer_split"] = "validation"
    data = v2.encode(newer)
    assert data[2:10] == v2.fingerprint != v1.fingerprint
    assert v2.decode(data) == newer
    assert v1.decode(data) == DELTA_IMPACT


# Written by the JsonValue wrapper codec (commit 5f87d53), schemas/avro/legacy/...v1 and v2.
WRAPPED_V1 = bytes.fromhex(
    "c3011d3442ac6945b1944862346432653066332d386337352d346531622d386432662d3661336339653866"
    "3762353220636f6e6669726d5f6465636973696f6e28323032362d31312d32325430353a34313a31305a04"
    "0e706c616e5f6964084838653764366335622d346133392d343238312d396630652d316432633362346135"
    "3936380a73746570730a040c040469640804733108646f6e650201000c040469640804733208646f6e6500"
    "00000004106465636973696f6e081072656a656374656414636f6e666964656e636506000000000000f03f"
    "0002020e617474656d707404040008757365721272656a656374696f6e020c020e636f6d6d656e7408046e"
    "6f0008706f6f72024835663063376231652d386134642d346331652d396237612d32643666336538613163"
    "393000024830623165326333642d346535662d346136622d386337642d3965306631613262336334641072"
    "656a6563746564226c6561726e73747265616d2f302e312e300a312e302e30000228323032362d31312d32"
    "325430353a34313a30395a000000"
)
WRAPPED_SAMPLE = {
    "sample_id": "b4d2e0f3-8c75-4e1b-8d2f-6a3c9e8f7b52",
    "sample_family": "confirm_decision",
    "created_at": "2026-11-22T05:41:10Z",
    "input": {
        "plan_id": "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968",
        "steps": [{"id": "s1", "done": True}, {"id": "s2", "done": None}],
    },
    "output": {"decision": "rejected", "confidence": 1.0},
    "state": {"attempt": 2},
    "feedback": {
        "source": "user",
        "type": "rejection",
        "details": {"comment": "no"},
        "quality_label": "poor",
    },
    "meta": {
        "source_event_ids": ["5f0c7b1e-8a4d-4c1e-9b7a-2d6f3e8a1c90"],
        "project_id": "0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "human_feedback_label": "rejected",
        "producer": "learnstream/0.1.0",
        "protocol_version": "1.0.0",
        "event_time": "2026-11-22T05:41:09Z",
    },
}


def test_records_of_the_retired_wrapper_layout_stay_readable(avro: AvroSampleCodec) -> None:
    assert WRAPPED_V1[2:10].hex() == WRAPPED_V1_FINGERPRINT
    assert typed(avro.decode(WRAPPED_V1)) == typed(WRAPPED_SAMPLE)
    assert typed(decode_any(WRAPPED_V1)) == typed(WRAPPED_SAMPLE)
    newer = WRAPPED_V1[:2] + bytes.fromhex(WRAPPED_V2_FINGERPRINT) + WRAPPED_V1[10:-1]
    # the wrapper v2 body: v1's, with meta.trainer_split = "train" before present_nulls
    newer += b"\x00\x0atrain\x00"
    assert avro.decode(newer) == WRAPPED_SAMPLE


def test_the_retired_layout_is_read_only(avro: AvroSampleCodec) -> None:
    legacy = SCHEMA_DIR / "legacy"
    assert sorted(p.name for p in legacy.glob("*.avsc")) == [
        "learning_sample.jsonvalue.v1.avsc",
        "learning_sample.jsonvalue.v2.avsc",
    ]
    assert {fp.hex() for fp in avro.legacy.writers} == {
        WRAPPED_V1_FINGERPRINT,
        WRAPPED_V2_FINGERPRINT,
    }
    assert avro.encode(WRAPPED_SAMPLE)[2:10].hex() == V1_FINGERPRINT
    with pytest.raises(CodecError, match="no Avro schema"):
        AvroSampleCodec(reader_schema="learning_sample.jsonvalue.v1.avsc")


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
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.avsc")) == ["learning_sample.avsc"]
    assert list(avro.registry) == [bytes.fromhex(V1_FINGERPRINT)]
    with pytest.raises(CodecError, match="no Avro schema 'missing.avsc'"):
        AvroSampleCodec(reader_schema="missing.avsc")
