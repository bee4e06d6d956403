"""Samples on the wire are MPLP: every family, both formats, read as a plain consumer reads them,
validates against the official MPLP v1.0 learning schemas; our copies of those schemas agree.

"Agree" means: the same validation keywords with the same values everywhere, once the
annotations (title, description, examples, $comment, x-mplp-meta) are set aside. So a
document is valid under our copy exactly when it is valid under the official file; the
copies also carry the official licence ``$comment`` and ``x-mplp-meta``.
"""

from __future__ import annotations

import copy
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft7Validator

from learnstream.streams.a2e.models import Feedback
from learnstream.streams.a2e.samples import build_dialog_response
from learnstream.streams.encoding.codecs import AvroSampleCodec, JsonSampleCodec, decode_any
from learnstream.streams.join.graphs import CREATED, decider
from learnstream.streams.join.rules import IMPACT_ONLY_TYPE, on_decision, on_delta, on_stage
from learnstream.streams.join.runs import decide_execution, decide_sa
from learnstream.streams.join.sessions import decide_map, session_expiry
from learnstream.streams.mplp.decode import decode_plan
from learnstream.streams.mplp.graph_events import decode_graph_update
from learnstream.streams.mplp.map_events import decode_map_event
from learnstream.streams.mplp.models import (
    DecisionEvent,
    DeltaIntentEvent,
    PlanSnapshot,
    StageEvent,
)
from learnstream.streams.mplp.run_events import decode_execution, decode_sa_event
from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.pii import build_anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy
from learnstream.streams.samples.sample import FAMILIES, LearningSample
from learnstream.streams.sim.simulate import Simulator
from learnstream.streams.state.plan import merge_snapshot
from tests.conftest import mplp_schema_dir
from tests.support.avro_consumer import plain_read
from tests.support.mplp_learning import (
    LEARNING,
    PROJECT_COPIES,
    format_checker,
    learning_validators,
    mplp_errors,
)
from tests.unit import test_builders as tb
from tests.unit.test_optimizations import optimization_samples

REPO = Path(__file__).resolve().parents[2]
ANNOTATIONS = frozenset({"title", "description", "examples", "$comment", "x-mplp-meta"})
_SCHEMA_MAPS = frozenset({"properties", "definitions", "patternProperties"})
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOW = WHEN + timedelta(minutes=5)


@pytest.fixture(scope="session")
def official_dir() -> Path:
    """Return the official schema directory (the shipped copies unless overridden)."""
    return mplp_schema_dir()


@pytest.fixture(scope="session")
def learning_dir(official_dir: Path) -> Path:
    """Return the official learning schemas."""
    return official_dir / "learning"


@pytest.fixture(scope="session")
def validators(learning_dir: Path) -> dict[str, Draft7Validator]:
    return learning_validators(learning_dir)


# --- the samples ------------------------------------------------------------------------------


def _builder_samples() -> list[LearningSample]:
    """Every family from the builders' own test inputs (runtime ids like ``intent-42``)."""
    state = tb.plan_state()
    return [
        *on_decision(tb.decision(), state, tb.NOW).samples,
        *on_decision(tb.decision("plan_rejected", reason="No rollback"), state, tb.NOW).samples,
        *on_delta(tb.delta(tb.IMPACT), state, tb.NOW).samples,
        *on_stage(tb.stage("completed", duration_ms=1200), state, tb.NOW).samples,
        *on_stage(tb.stage("completed"), tb.plan_state(deltas=1), tb.NOW).samples,
        *on_stage(tb.stage("failed", error="timeout"), tb.plan_state(deltas=1), tb.NOW).samples,
        *[build_dialog_response(_feedback(polarity, score), tb.NOW) for polarity, score in _RATED],
    ]


#: (polarity, score) of one dialog_response sample per quality label
_RATED = (("POSITIVE", 0.9), ("NEUTRAL", 0.0), ("CORRECTIVE", -0.5))


def _feedback(polarity: str, score: float) -> Feedback:
    turn = {"prompt": "What is 2+2?", "response": "5"}
    correction = "4" if polarity == "CORRECTIVE" else None
    return Feedback.model_validate(
        {"correlation_id": "req_123", "polarity": polarity, "score": score}
        | {"correction": correction, "rated_turn": turn}
    )


def _seed004_samples() -> list[LearningSample]:
    """Every optional seed-004 field filled, and runtime ids that are not UUIDs."""
    snap = tb.snapshot().model_dump(mode="json", by_alias=True, exclude_none=True)
    snap["plan"]["plan_id"] = "plan-123"
    snap["context"] |= {"project_phase": "brownfield", "psg_node_count": 40}
    snap["context"]["existing_plan_count"] = 2
    snap["intent"] |= {"constraints_summary": "p99 under 250 ms", "dialog_turns_count": 3}
    snap["intent"] |= {"clarification_rounds": 1, "ambiguity_flags": ["vague_scope"]}
    state = merge_snapshot(None, PlanSnapshot.model_validate(snap), tb.T0)
    decision = tb.decision().model_dump(mode="json", by_alias=True, exclude_none=True)
    decision["event_id"] = "evt-approve-1"
    decision["payload"]["plan_id"] = "plan-123"
    impact = tb.IMPACT | {"affected_artifact_count": 3, "psg_complexity_score": 0.7}
    impact |= {"impact_analysis_duration_ms": 1500, "predicted_vs_actual_accuracy": "accurate"}
    delta = tb.delta(impact).model_dump(mode="json", by_alias=True, exclude_none=True)
    delta["event_id"] = "evt-delta-1"
    delta["payload"]["plan_id"] = "plan-123"
    return [
        *on_decision(DecisionEvent.model_validate(decision), state, tb.NOW).samples,
        *on_delta(DeltaIntentEvent.model_validate(delta), state, tb.NOW).samples,
    ]


def _simulated_samples() -> list[LearningSample]:
    """Every family from the simulated runtime's events (PII in the text)."""
    sim = Simulator(seed=11, pii_ratio=1.0)
    snap = sim.plan(WHEN)
    state = merge_snapshot(None, decode_plan(orjson.dumps(snap)), WHEN)
    impact_only = sim.delta(snap, WHEN, impact=True) | {"event_type": IMPACT_ONLY_TYPE}
    decisions = [sim.decision(snap, ok, WHEN) for ok in (True, False)]
    return [
        *(s for d in decisions for s in on_decision(DecisionEvent(**d), state, NOW).samples),
        *on_delta(DeltaIntentEvent(**sim.delta(snap, WHEN, impact=True)), state, NOW).samples,
        *on_delta(DeltaIntentEvent(**impact_only), state, NOW).samples,
        *on_stage(StageEvent(**sim.stage(snap, "completed", WHEN)), state, NOW).samples,
        *on_stage(StageEvent(**sim.stage(snap, "failed", WHEN)), state, NOW).samples,
        *on_stage(StageEvent(**sim.stage(snap, "skipped", WHEN, "review")), state, NOW).samples,
    ]


def _session_samples() -> list[LearningSample]:
    """multi_agent_coordination: a session per outcome, and one closed by the timeout."""
    out: list[LearningSample] = []
    for seed, outcome in enumerate(("success", "partial", "failed", None)):
        events = Simulator(seed=30 + seed).map_session(WHEN, outcome=outcome)
        state = None
        for event in events:
            decided = decide_map(decode_map_event(orjson.dumps(event)), state, NOW, None, True)
            out += decided.samples
            state = decided.new_state
        expired = session_expiry(timedelta(minutes=30))(state, NOW + timedelta(hours=1))
        out += expired.samples if expired is not None and outcome is None else []
    return out


def _run_samples() -> list[LearningSample]:
    """pipeline_outcome of SA steps (one failed) and of runtime executions (each ending)."""
    sim, out = Simulator(seed=40), []
    runs = [(decode_sa_event, decide_sa, sim.sa_run(WHEN, plan_id="plan-9", fail_last=True))]
    for status in ("completed", "failed", "cancelled"):
        runs.append((decode_execution, decide_execution, sim.execution(WHEN, status=status)))
    for decode, decide, events in runs:
        states: dict[str, Any] = {}
        for event in events:
            decoded = decode(orjson.dumps(event))
            key = getattr(decoded, "step_id", None) or getattr(decoded, "execution_id", "")
            decided = decide(decoded, states.get(key), NOW, None, True)
            out += decided.samples
            states[key] = decided.new_state or states.get(key)
    return out


def _graph_samples() -> list[LearningSample]:
    """graph_evolution: a graph grown from nothing (good), then changed both ways
    (acceptable), then shrunk (poor)."""
    sim, decide, state, out = Simulator(seed=50), decider(0.2, timedelta(minutes=10)), None, []
    graph = sim.uuid()
    changes = [[("bulk", 10, 10)], [("node_add", 2, 0), ("edge_delete", 0, -2)]]
    changes.append([("node_delete", -8, 0)])
    for number, deltas in enumerate(changes):
        when = WHEN + timedelta(minutes=20 * number)
        for event in sim.graph_updates(when, deltas, graph_id=graph):
            if state is None:  # a new graph says so: its size before is known, 0
                event["event_type"] = CREATED
            decided = decide(decode_graph_update(orjson.dumps(event)), state, NOW, None, True)
            out += decided.samples
            state = decided.new_state or state
    state = None  # a graph of unknown size: the schema's deltas only, counted from the first
    for event in sim.graph_updates(WHEN, [("bulk", 4, 3), ("edge_add", 0, 5)]):
        del event["payload"]
        decided = decide(decode_graph_update(orjson.dumps(event)), state, NOW, None, True)
        out += decided.samples
        state = decided.new_state or state
    assert sum("size_counted_since" in s.state for s in out if s.state) == 2
    return out


def _wire_samples() -> list[dict[str, Any]]:
    """What the outbox encodes: ``to_dict()``, after privacy for the simulated ones."""
    anonymizer = build_anonymizer(PrivacyConfig())
    runs = _session_samples() + _run_samples() + _graph_samples() + optimization_samples()
    built = [s.to_dict() for s in _builder_samples() + _seed004_samples() + runs]
    simulated = [apply_privacy(s.to_dict(), anonymizer)[0] for s in _simulated_samples()]
    return built + simulated


SAMPLES = _wire_samples()
IDS = [f"{i}-{s['sample_family']}-{s['feedback']['quality_label']}" for i, s in enumerate(SAMPLES)]
CODECS = {"json": JsonSampleCodec(), "avro": AvroSampleCodec()}


def plain_json_read(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(data)
    return out


def test_every_family_and_quality_is_covered() -> None:
    assert {s["sample_family"] for s in SAMPLES} == set(FAMILIES)
    assert {(s["sample_family"], s["feedback"]["quality_label"]) for s in SAMPLES} >= {
        ("intent_resolution", "good"),
        ("intent_resolution", "poor"),
        ("confirm_decision", "good"),
        ("confirm_decision", "poor"),
        ("error_correction", "acceptable"),
        ("delta_impact", "good"),
        ("pipeline_outcome", "good"),
        ("pipeline_outcome", "acceptable"),
        ("pipeline_outcome", "poor"),
        ("dialog_response", "good"),
        ("dialog_response", "acceptable"),
        ("dialog_response", "poor"),
        ("multi_agent_coordination", "good"),
        ("multi_agent_coordination", "acceptable"),
        ("multi_agent_coordination", "poor"),
        ("graph_evolution", "good"),
        ("graph_evolution", "acceptable"),
        ("graph_evolution", "poor"),
        ("plan_optimization", "good"),
        ("plan_optimization", "acceptable"),
    }
    assert any("<EMAIL_ADDRESS>" in json.dumps(s) for s in SAMPLES)  # privacy ran
    metas = [s["meta"] for s in SAMPLES]
    for field in ("clarification_rounds", "ambiguity_flags", "impact_analysis_duration_ms"):
        assert any(field in m for m in metas), field
    assert any("predicted_vs_actual_accuracy" in m for m in metas)
    assert any(m.get("id_refs", {}).get("plan_id") == "plan-123" for m in metas)
    assert any(s["output"].get("status") == "skipped" for s in SAMPLES)


@pytest.mark.parametrize("fmt", ["json", "avro"])
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_consumers_get_mplp_valid_samples(
    validators: dict[str, Draft7Validator], sample: dict[str, Any], fmt: str
) -> None:
    data = CODECS[fmt].encode(sample)
    consumed = plain_read(data) if fmt == "avro" else plain_json_read(data)
    assert consumed == sample
    assert mplp_errors(validators, consumed) == []


@pytest.mark.parametrize("fmt", ["json", "avro"])
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_our_decoder_round_trips_to_the_same_sample(sample: dict[str, Any], fmt: str) -> None:
    decoded = decode_any(CODECS[fmt].encode(sample))
    assert decoded == sample
    assert LearningSample.model_validate(decoded).to_dict() == sample


# --- the validation catches what it should (else the tests above could not fail) ----------------


def test_format_checker_checks_uuid_and_date_time() -> None:
    checker = format_checker()
    assert checker.conforms(str(uuid.uuid4()), "uuid")
    assert not checker.conforms("plan-123", "uuid")
    assert checker.conforms("2026-03-01T12:00:00.5+01:00", "date-time")
    for bad in ("2026-13-01T00:00:00Z", "2026-03-01T12:00:00", "2026-03-01"):
        assert not checker.conforms(bad, "date-time")


@pytest.mark.parametrize(
    ("family", "change", "error"),
    [
        ("confirm_decision", {"sample_id": "plan-123"}, "$.sample_id: 'plan-123' is not a 'uuid'"),
        ("confirm_decision", {"created_at": "2026-03-01"}, "$.created_at: '2026-03-01' is not a"),
        ("pipeline_outcome", {"meta": {"project_id": "p-1"}}, "$.meta.project_id: 'p-1' is not a"),
        ("intent_resolution", {"output": {}}, "'final_intent_summary' is a required property"),
        ("delta_impact", {"output": {"actual_impact_summary": "x", "impact_scope": "galaxy"}}, ""),
        ("error_correction", {"meta": {"human_feedback_label": "meh"}}, "'meh' is not one of"),
    ],
)
def test_official_schemas_reject_broken_samples(
    validators: dict[str, Draft7Validator], family: str, change: dict[str, Any], error: str
) -> None:
    sample = copy.deepcopy(next(s for s in SAMPLES if s["sample_family"] == family))
    for key, value in change.items():
        sample[key] = sample[key] | value if isinstance(value, dict) and value else value
    errors = mplp_errors(validators, sample)
    assert errors
    assert any(error in e for e in errors), errors


# --- our copies agree with the official files -------------------------------------------------


def validating(node: Any) -> Any:
    """Return a schema without its annotation keywords (property names are left alone)."""
    if isinstance(node, list):
        return [validating(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS:
            out[key] = {name: validating(sub) for name, sub in value.items()}
        elif key not in ANNOTATIONS:
            out[key] = validating(value)
    return out


@pytest.mark.parametrize("name", LEARNING)
def test_project_copies_validate_exactly_as_the_official(official_dir: Path, name: str) -> None:
    official = json.loads((official_dir / "learning" / name).read_text("utf-8"))
    ours = json.loads((PROJECT_COPIES / name).read_text("utf-8"))
    assert validating(ours) == validating(official)
    assert ours["$id"] == official["$id"]
    assert ours["$comment"] == official["$comment"]  # the licence notice travels with the copy
    assert ours["x-mplp-meta"] == official["x-mplp-meta"]


def test_validating_ignores_annotations_only() -> None:
    schema = {"title": "t", "properties": {"title": {"type": "string", "description": "d"}}}
    assert validating(schema) == {"properties": {"title": {"type": "string"}}}
    assert validating({"minLength": 1, "$comment": "c"}) != validating({"$comment": "c"})
