"""``--format mplp-common``: one sample of every family through the row maker, each record
valid against the official ``common/learning-sample.schema.json`` and equal, field by field,
to what the sample holds; samples without a project have no record (streams/export/common.py).
"""

from __future__ import annotations

import functools
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from referencing import Registry, Resource

from learnstream.streams.a2e.models import Feedback
from learnstream.streams.a2e.samples import build_dialog_response
from learnstream.streams.export.common import SUCCESS, common_record
from learnstream.streams.export.files import write_export
from learnstream.streams.export.rows import ExportError, RowMaker, export_filter
from learnstream.streams.join.rules import on_decision, on_delta, on_stage
from learnstream.streams.samples.coordination import build_coordination
from learnstream.streams.samples.run_end import RunEnd, build_run_outcome
from learnstream.streams.samples.sample import QUALITIES, LearningSample
from learnstream.streams.state.session import SessionState
from tests.conftest import mplp_schema_dir
from tests.support.mplp_learning import format_checker
from tests.unit import test_builders as tb
from tests.unit.test_confirm_every import confirm

PROJECT, PLAN = tb.PROJECT_ID, tb.PLAN_ID
RULED_FAMILIES = (
    "intent_resolution",
    "confirm_decision",
    "error_correction",
    "delta_impact",
    "pipeline_outcome",
    "dialog_response",
    "multi_agent_coordination",
    "plan_optimization",
)
CREATED = "2026-03-01T12:00:00.123456Z"  # tb.NOW, every sample's created_at
STEPS = [{"description": "Measure latency", "status": "pending"}]
PLAN_FIELDS = {
    "plan_id": PLAN,
    "title": "Add a cache",
    "objective": "Add a Redis cache in front of the orders API",
    "status": "proposed",
    "steps": STEPS,
}


@functools.cache
def common_validator() -> Draft7Validator:
    """Return the official common learning-sample schema, its $refs resolved, formats checked."""
    common = mplp_schema_dir() / "common"
    schemas = [json.loads(p.read_text("utf-8")) for p in sorted(common.glob("*.schema.json"))]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    schema = json.loads((common / "learning-sample.schema.json").read_text("utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema, registry=registry, format_checker=format_checker())


@pytest.fixture
def validator() -> Draft7Validator:
    return common_validator()


def errors(validator: Draft7Validator, record: dict[str, Any]) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(record)]


def metadata(
    sample: LearningSample, label: str, events: list[str], refs: dict[str, str] | None = None
) -> dict[str, Any]:
    """Return the record's metadata: family, quality, provenance."""
    out = {
        "sample_family": sample.sample_family,
        "quality_label": sample.feedback.quality_label,
        "quality_score": sample.meta.quality_score,
        "human_feedback_label": label,
        "source_event_ids": events,
        "created_at": CREATED,
        "producer": "learnstream/0.1.0",
        "protocol_version": "1.0.0",
    }
    return out | ({"id_refs": refs} if refs else {})


def run_end(
    status: str = "completed", project: str | None = PROJECT, event_id: str = "exec-1-end"
) -> LearningSample:
    end = RunEnd(
        status=status,  # type: ignore[arg-type]
        event_id=event_id,
        at=tb.NOW,
        pipeline_id="exec-1",
        stage_id="executor",
        kind="runtime_execution",
        project_id=project,
        error={"code": 504, "message": "upstream timed out"} if status == "failed" else None,
    )
    return build_run_outcome(end, tb.NOW - timedelta(seconds=3), tb.NOW)


def session(outcome: str | None = None) -> LearningSample:
    state = SessionState(
        session_id="sess-1",
        first_at=tb.T0,
        last_at=tb.T0 + timedelta(minutes=2),
        touched_at=tb.NOW,
        project_id=PROJECT,
        roles=("planner", "coder"),
        turns_dispatched=2,
        turns_completed=2,
        reported_outcome=outcome,
    )
    return build_coordination(state, "evt-last", "completed", tb.NOW)


#: A stage's token usage as its payload sent it, and as the common record has it.
USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 300,
    "cost_usd": 0.02,
    "by_agent": [{"agent_id": "planner", "role": "planner", "tokens": 900}],
}
COMMON_USAGE = {
    "total_tokens": 1500,
    "prompt_tokens": 1200,
    "completion_tokens": 300,
    "by_agent": [{"agent_id": "planner", "role": "planner", "tokens": 900}],
}


def optimization(usage: dict[str, Any] | None = None) -> LearningSample:
    """Return a plan_optimization as streams/samples/optimizations.py writes one: the slow
    plan's execution in ``input``, the optimized plan's in ``output``."""

    def execution(duration: int, at: str, tokens: dict[str, Any] | None) -> dict[str, Any]:
        return {"duration_ms": duration, "completed_at": at} | (
            {"token_usage": tokens} if tokens else {}
        )

    plan = {"plan_id": "plan-fast", "objective": "Add a cache", "steps": ["Measure latency"]}
    return LearningSample.model_validate(
        {
            "sample_id": "7d6f2f0e-5b8a-4c31-9a57-2f3b1c0d9e11",
            "sample_family": "plan_optimization",
            "created_at": CREATED,
            "input": {
                "intent_id": "intent-42",
                "intent_text": "make orders faster",
                "plan": {"plan_id": "plan-slow", "steps": ["Measure latency", "Guess"]},
                "execution": execution(9000, "2026-03-01T11:40:00Z", {"total_tokens": 9000}),
            },
            "output": {
                "plan": plan,
                "execution": execution(3000, "2026-03-01T11:50:00Z", usage),
                "improvement": {"duration_ms": 0.6667},
            },
            "feedback": {"source": "system", "type": "score", "quality_label": "good"},
            "meta": {
                "source_event_ids": [tb.STAGE_EVENT, tb.DECISION_EVENT],
                "project_id": PROJECT,
                "human_feedback_label": "not_reviewed",
                "producer": "learnstream/0.1.0",
                "plan_id": PLAN,
                "event_time": "2026-03-01T11:50:00Z",
                "quality_score": 0.6667,
            },
        }
    )


def dialog(polarity: str, score: float, project: str | None = PROJECT) -> LearningSample:
    feedback = {
        "correlation_id": "req_1",
        "polarity": polarity,
        "score": score,
        "comment": "wrong sum",
        "rated_turn": {"prompt": "2+2?", "response": "5"},
    }
    correction = {"correction": "4"} if polarity == "CORRECTIVE" else {}
    built = Feedback.model_validate(feedback | correction)
    return build_dialog_response(built, tb.NOW, project_id=project)


def _cases() -> dict[str, tuple[LearningSample, dict[str, Any]]]:
    """One sample of every family (and a cancelled Confirm), with the record expected of it."""
    state = tb.plan_state()
    confirm_decision, intent = on_decision(tb.decision(reason="Looks right"), state, tb.NOW).samples
    (cancelled,) = on_decision(
        tb.decision("plan_rejected", confirm=confirm("cancelled")), state, tb.NOW
    ).samples
    impact = tb.IMPACT | {"impact_analysis_duration_ms": 1500}
    correction, delta_impact = on_delta(tb.delta(impact), state, tb.NOW).samples
    (stage,) = on_stage(
        tb.stage("failed", error="timeout", duration_ms=1200, token_usage=USAGE), state, tb.NOW
    ).samples
    optimized = optimization(USAGE)
    run, coordination, feedback = run_end(), session(), dialog("CORRECTIVE", -0.5)
    decision_event, delta_event = [tb.DECISION_EVENT], [tb.DELTA_EVENT]
    intent_fields = {"intent_id": "intent-42", "intent_text": "make orders faster"}
    delta_fields = {
        "delta_id": tb.DELTA_ID,
        "intent_id": "intent-42",
        "delta_type": "refinement",
        "change_summary": "Add a rollback step",
    }
    common = {"project_id": PROJECT}
    return {
        "intent_resolution": (
            intent,
            common
            | {
                "success_flag": True,
                "timestamps": {"started_at": "2026-03-01T11:30:00Z"},
                "intent_before": intent_fields | {"context": {"repo": "acme/orders"}},
                "plan": PLAN_FIELDS | {"step_count": 1},
                "user_feedback": {"decision": "approve", "comment": "Looks right"},
                "metadata": metadata(intent, "approved", decision_event),
            },
        ),
        "confirm_decision": (
            confirm_decision,
            common
            | {
                "success_flag": True,
                "timestamps": {"started_at": "2026-03-01T11:30:00Z"},
                "plan": {"plan_id": PLAN},
                "user_feedback": {"decision": "approve", "comment": "Looks right"},
                "governance_decisions": [
                    {
                        "plan_id": PLAN,
                        "confirm_id": tb.CONFIRM_ID,
                        "target_type": "plan",
                        "target_id": PLAN,
                        "risk_label": "unknown",
                        "decision": "approve",
                        "status": "approved",
                        "decided_by_role": "reviewer",
                        "reasoning": "Looks right",
                    }
                ],
                "metadata": metadata(confirm_decision, "approved", decision_event),
            },
        ),
        "confirm_decision_cancelled": (
            cancelled,
            common
            | {
                "success_flag": False,
                "timestamps": {"started_at": "2026-03-01T11:30:00Z"},
                "plan": {"plan_id": PLAN},
                "user_feedback": {"decision": "unknown", "comment": "No longer needed"},
                "governance_decisions": [
                    {
                        "plan_id": PLAN,
                        "confirm_id": tb.CONFIRM_ID,
                        "target_type": "plan",
                        "target_id": PLAN,
                        "requested_by_role": "role-planner-001",
                        "request_reason": "Requesting approval",
                        "decision_count": 1,
                        "risk_label": "unknown",
                        "decision": "unknown",
                        "status": "cancelled",
                        "decided_by_role": "reviewer",
                        "reasoning": "No longer needed",
                    }
                ],
                "metadata": metadata(cancelled, "not_reviewed", decision_event),
            },
        ),
        "error_correction": (
            correction,
            common
            | {
                "success_flag": True,
                "timestamps": {"started_at": "2026-03-01T11:40:00Z"},
                "intent_before": intent_fields,
                "plan": PLAN_FIELDS,
                "delta_intents": [
                    delta_fields | {"changes": {"steps_added": 1}, "corrected_fields": ["steps"]}
                ],
                "user_feedback": {"decision": "override", "comment": "you forgot the rollback"},
                "metadata": metadata(correction, "not_reviewed", delta_event),
            },
        ),
        "delta_impact": (
            delta_impact,
            common
            | {
                "success_flag": True,
                "timestamps": {"started_at": "2026-03-01T11:40:00Z"},
                "intent_before": {"intent_id": "intent-42"},
                "plan": {"plan_id": PLAN},
                "delta_intents": [delta_fields | {"impact": impact}],
                "metadata": metadata(delta_impact, "not_reviewed", delta_event),
            },
        ),
        "pipeline_outcome": (
            stage,
            common
            | {
                "success_flag": False,
                "timestamps": {
                    "started_at": "2026-03-01T11:49:58.800000Z",
                    "completed_at": "2026-03-01T11:50:00Z",
                },
                "plan": {k: v for k, v in PLAN_FIELDS.items() if k != "title"},
                "pipeline_path": ["execute"],
                "execution_time_ms": 1200,
                "token_usage": COMMON_USAGE,
                "error_info": {"error_message": "timeout"},
                "metadata": metadata(stage, "not_reviewed", [tb.STAGE_EVENT]),
            },
        ),
        "plan_optimization": (
            optimized,
            common
            | {
                "success_flag": True,  # only completed executions are compared
                "timestamps": {
                    "started_at": "2026-03-01T11:49:57Z",
                    "completed_at": "2026-03-01T11:50:00Z",
                },
                "intent_before": {"intent_id": "intent-42", "intent_text": "make orders faster"},
                "plan": {
                    "plan_id": PLAN,
                    "objective": "Add a cache",
                    "steps": ["Measure latency"],
                },
                "execution_time_ms": 3000,
                "token_usage": COMMON_USAGE,  # the optimized plan's execution's
                "metadata": metadata(
                    optimized, "not_reviewed", [tb.STAGE_EVENT, tb.DECISION_EVENT]
                ),
            },
        ),
        "pipeline_outcome_run": (
            run,
            common
            | {
                "success_flag": True,
                "timestamps": {
                    "started_at": "2026-03-01T11:59:57.123456Z",
                    "completed_at": CREATED,
                },
                "pipeline_path": ["executor"],
                "execution_time_ms": 3000,
                "metadata": metadata(
                    run,
                    "not_reviewed",
                    run.meta.source_event_ids,
                    {"source_event_ids[0]": "exec-1-end"},
                ),
            },
        ),
        "multi_agent_coordination": (
            coordination,
            common
            | {
                "success_flag": True,
                "timestamps": {
                    "started_at": "2026-03-01T11:00:00Z",
                    "completed_at": "2026-03-01T11:02:00Z",
                },
                "execution_time_ms": 120_000,
                "metadata": metadata(
                    coordination,
                    "not_reviewed",
                    coordination.meta.source_event_ids,
                    {"input.session_id": "sess-1", "source_event_ids[0]": "evt-last"},
                ),
            },
        ),
        "dialog_response": (
            feedback,
            common
            | {
                "success_flag": False,
                "timestamps": {"started_at": CREATED},  # A2E feedback has no event time
                "user_feedback": {"decision": "override", "comment": "wrong sum", "rating": 1.25},
                "metadata": metadata(
                    feedback,
                    "rejected",
                    feedback.meta.source_event_ids,
                    {"source_event_ids[0]": "req_1"},
                ),
            },
        ),
    }


CASES = _cases()


def test_every_family_with_a_success_rule_has_a_case() -> None:
    cased = {sample.sample_family for sample, _ in CASES.values()}
    assert cased | {"graph_evolution"} == set(SUCCESS)  # graphs: their own test below
    assert cased == set(RULED_FAMILIES)


@pytest.mark.parametrize("name", list(CASES))
def test_each_family_maps_to_a_valid_record_of_what_it_holds(
    name: str, validator: Draft7Validator
) -> None:
    sample, expected = CASES[name]
    (record,) = RowMaker("mplp-common").rows([sample])
    assert errors(validator, record) == []
    assert record == {"sample_id": sample.sample_id} | expected


def test_the_written_file_holds_a_valid_record_per_sample(
    tmp_path: Path, validator: Draft7Validator
) -> None:
    samples = [sample for sample, _ in CASES.values()]
    out = tmp_path / "common.jsonl"
    assert write_export(RowMaker("mplp-common").rows(samples), out, "mplp-common") == len(samples)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["sample_id"] for r in written] == [s.sample_id for s in samples]
    assert [e for r in written for e in errors(validator, r)] == []


def test_a_family_without_a_success_rule_has_no_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """A family added later is left out (and counted) until its outcome is decided."""
    sample, _ = CASES["pipeline_outcome"]
    unruled, _ = CASES["delta_impact"]
    monkeypatch.delitem(SUCCESS, "delta_impact")
    assert list(RowMaker("mplp-common").rows([unruled, sample])) == [
        RowMaker("mplp-common").sample_row(sample)
    ]


def test_a_sample_without_a_project_has_no_record(tmp_path: Path) -> None:
    """The schema requires project_id: no record, never an invented project (the CLI's
    summary counts the samples left out)."""
    kept, unowned = run_end(), run_end(project=None)
    assert unowned.meta.project_id is None
    maker = RowMaker("mplp-common")
    assert maker.sample_row(unowned) is None
    rows = list(maker.rows([unowned, kept, dialog("POSITIVE", 0.9, project=None)]))
    assert [r["sample_id"] for r in rows] == [kept.sample_id]
    assert write_export(maker.rows([unowned]), tmp_path / "none.jsonl", "mplp-common") == 0


@pytest.mark.parametrize(
    ("sample", "success"),
    [
        (on_decision(tb.decision("plan_rejected"), tb.plan_state(), tb.NOW).samples[1], False),
        (on_decision(tb.decision("plan_rejected"), tb.plan_state(), tb.NOW).samples[0], False),
        (
            on_delta(
                tb.delta(tb.IMPACT | {"rollback_used": True}), tb.plan_state(), tb.NOW
            ).samples[1],
            False,
        ),
        (on_stage(tb.stage("completed"), tb.plan_state(deltas=1), tb.NOW).samples[0], True),
        (run_end("cancelled"), False),
        (session("partial"), False),
        (dialog("POSITIVE", 0.9), True),
        (dialog("NEUTRAL", 0.0), False),
    ],
    ids=[
        "intent-rejected",
        "confirm-rejected",
        "delta-rolled-back",
        "stage-completed-after-delta",
        "run-cancelled",
        "session-partial",
        "dialog-good",
        "dialog-acceptable",
    ],
)
def test_success_flag_is_the_family_outcome(
    sample: LearningSample, success: bool, validator: Draft7Validator
) -> None:
    (record,) = RowMaker("mplp-common").rows([sample])
    assert record["success_flag"] is success
    assert errors(validator, record) == []


def test_user_feedback_of_humans_only_with_the_score_as_a_rating(
    validator: Draft7Validator,
) -> None:
    (positive,) = RowMaker("mplp-common").rows([dialog("POSITIVE", 0.9)])
    assert positive["user_feedback"] == {
        "decision": "approve",
        "comment": "wrong sum",
        "rating": 4.75,
    }
    (rejected,) = on_decision(
        tb.decision("plan_rejected", reason="No rollback"), tb.plan_state(), tb.NOW
    ).samples[:1]
    (record,) = RowMaker("mplp-common").rows([rejected])
    assert record["user_feedback"] == {"decision": "reject", "comment": "No rollback"}
    assert errors(validator, record) == []
    system = [CASES[n][0] for n in ("delta_impact", "pipeline_outcome", "multi_agent_coordination")]
    assert all("user_feedback" not in r for r in RowMaker("mplp-common").rows(system))


def test_error_info_takes_only_the_schema_fields_as_strings(validator: Draft7Validator) -> None:
    (coded,) = RowMaker("mplp-common").rows([run_end("failed")])
    assert coded["error_info"] == {"error_code": "504", "error_message": "upstream timed out"}
    assert coded["success_flag"] is False
    assert errors(validator, coded) == []
    odd = on_stage(
        tb.stage("failed", error={"detail": "x"}, duration_ms="1.2s"), tb.plan_state(), tb.NOW
    ).samples[0]
    (record,) = RowMaker("mplp-common").rows([odd])
    # Neither a known error field nor a numeric duration: both left out, the start is the event.
    assert {"error_info", "execution_time_ms"}.isdisjoint(record)
    assert record["timestamps"] == {"started_at": "2026-03-01T11:50:00Z"}
    assert errors(validator, record) == []
    endless = on_stage(tb.stage("completed", duration_ms=1e300), tb.plan_state(), tb.NOW).samples
    (record,) = RowMaker("mplp-common").rows(endless)  # no start that far back: the event's
    assert (record["timestamps"], record["execution_time_ms"]) == (
        {"started_at": "2026-03-01T11:50:00Z"},
        1e300,
    )


def test_every_quality_by_default_json_only_and_no_chat(tmp_path: Path) -> None:
    assert export_filter("mplp-common", (), (), None).qualities == frozenset(QUALITIES)
    with pytest.raises(ExportError, match="--chat"):
        RowMaker("mplp-common", chat=True)
    with pytest.raises(ExportError, match="JSON only"):
        write_export(iter([]), tmp_path / "x.parquet", "mplp-common")


def test_a_graph_evolution_carries_its_graph_before_and_after() -> None:
    from tests.unit.test_official_learning_schemas import _graph_samples

    records = []
    for sample in _graph_samples():
        owned = sample.model_copy(
            update={"meta": sample.meta.model_copy(update={"project_id": PROJECT})}
        )
        records.append(common_record(owned))
    assert all(record is not None for record in records)
    flags = [r["success_flag"] for r in records if r]
    assert flags == [True, False, False, True, True]  # only growth
    first, counted = records[0], records[-1]
    assert first is not None
    assert first["graph_before"] == {"node_count": 0, "edge_count": 0}
    assert first["graph_after"] == {"node_count": 10, "edge_count": 10}
    assert counted is not None  # a graph of unknown size, counted from its first update
    since = counted["graph_before"].pop("size_counted_since")
    assert since == records[-2]["timestamps"]["started_at"]
    assert counted["graph_before"] == {"node_count": 4, "edge_count": 3}
    for record in records:
        assert errors(common_validator(), record) == []


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"total_tokens": 800, "prompt_tokens": 600}, {"total_tokens": 800, "prompt_tokens": 600}),
        ({"prompt_tokens": 600}, {"prompt_tokens": 600}),  # no completion: no total made up
        (
            {"prompt_tokens": 0.5, "completion_tokens": 2},
            {"total_tokens": 2.5, "prompt_tokens": 0.5, "completion_tokens": 2},
        ),
        (
            {"total_tokens": -1, "prompt_tokens": "600", "completion_tokens": True},
            None,  # a negative count, a string, a boolean: nothing the schema takes
        ),
        (
            {"by_agent": {"planner": 900, "coder": {"tokens": 100, "role": "coder"}, "x": -5}},
            {
                "by_agent": [
                    {"agent_id": "planner", "tokens": 900},
                    {"agent_id": "coder", "role": "coder", "tokens": 100},
                ]
            },
        ),
        (
            {
                "total_tokens": 10,
                "by_agent": [
                    {"agent_id": "planner", "tokens": 6, "role": 7, "model": "m"},
                    {"agent_id": "", "tokens": 1},
                    {"agent": "coder", "tokens": 4},
                    {"agent_id": "coder"},
                    "coder: 4",
                ],
            },
            {"total_tokens": 10, "by_agent": [{"agent_id": "planner", "tokens": 6}]},
        ),
        ({"by_agent": "planner: 900"}, None),
        ("1500 tokens", None),
    ],
    ids=[
        "total-kept",
        "part-only",
        "total-summed",
        "all-refused",
        "by-agent-mapping",
        "by-agent-entries-filtered",
        "by-agent-no-list",
        "not-an-object",
    ],
)
def test_token_usage_keeps_what_the_schema_accepts(
    usage: Any, expected: dict[str, Any] | None, validator: Draft7Validator
) -> None:
    """A stage's usage as sent, and a plan_optimization's optimized execution's: what the
    schema would refuse is left out, the record is written all the same."""
    (stage,) = on_stage(tb.stage("completed", token_usage=usage), tb.plan_state(), tb.NOW).samples
    usage_object = usage if isinstance(usage, dict) else None
    for sample in (stage, optimization(usage_object)):
        (record,) = RowMaker("mplp-common").rows([sample])
        assert errors(validator, record) == []
        assert record.get("token_usage") == expected


def test_no_token_usage_where_the_sample_has_none(validator: Draft7Validator) -> None:
    for name in ("pipeline_outcome_run", "multi_agent_coordination", "delta_impact"):
        (record,) = RowMaker("mplp-common").rows([CASES[name][0]])
        assert "token_usage" not in record
    (slow_only,) = RowMaker("mplp-common").rows([optimization(None)])
    assert "token_usage" not in slow_only  # the slow execution's tokens stay in its input
    assert errors(validator, slow_only) == []


def test_real_plan_optimizations_map_to_valid_records(validator: Draft7Validator) -> None:
    from tests.unit.test_optimizations import optimization_samples

    records = [common_record(sample) for sample in optimization_samples()]
    assert all(record is not None for record in records)
    assert [errors(validator, r) for r in records if r] == [[], []]
    assert [r.get("token_usage") for r in records if r] == [None, {"total_tokens": 1500}]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (["plan", "review", "execute"], ["plan", "review", "execute"]),
        (["plan", 7, "execute"], ["execute"]),  # not a list of strings: the one stage
        ("plan>execute", ["execute"]),
        ([], ["execute"]),
        (None, ["execute"]),
    ],
    ids=["stages-so-far", "not-all-strings", "not-a-list", "empty", "absent"],
)
def test_pipeline_path_is_the_stages_so_far_else_the_one_stage(
    path: Any, expected: list[str], validator: Draft7Validator
) -> None:
    sample, _ = CASES["pipeline_outcome"]
    inp = sample.input | ({"pipeline_path": path} if path is not None else {})
    (record,) = RowMaker("mplp-common").rows([sample.model_copy(update={"input": inp})])
    assert record["pipeline_path"] == expected
    assert errors(validator, record) == []
