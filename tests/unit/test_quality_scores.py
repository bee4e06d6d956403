"""meta.quality_score on every builder family, meta.source_flow_id from the inputs, and pair
margins taken from the scores (streams/samples/builders.py, parts.py, pairs.py, replans.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from learnstream.streams.join.rules import on_decision, on_delta, on_stage
from learnstream.streams.mplp.models import (
    DecisionEvent,
    DeltaIntentEvent,
    PlanSnapshot,
    StageEvent,
)
from learnstream.streams.samples import builders
from learnstream.streams.samples.pairs import PreferencePair, correction_pair
from learnstream.streams.samples.replans import Plan, match, plan_of
from learnstream.streams.samples.sample import FAMILIES, LearningSample
from learnstream.streams.state.plan import PlanState, merge_snapshot
from tests.conftest import mplp_schema_dir
from tests.support.mplp_learning import learning_validators, mplp_errors
from tests.unit import test_builders as tb
from tests.unit.test_confirm_every import confirm

#: Families made by streams/samples/builders.py (the others score in their own modules).
BUILDER_FAMILIES = set(FAMILIES) - {
    "dialog_response",
    "multi_agent_coordination",
    "graph_evolution",
    "plan_optimization",
}
CREATED = "2026-03-02T09:00:00Z"
#: An impact per delta_impact score: good, compensated, compensation not applied, rolled back.
IMPACTS: list[dict[str, Any]] = [
    {},
    {"comp_plan_required": True, "comp_plan_applied": True},
    {"comp_plan_required": True, "comp_plan_applied": False},
    {"rollback_used": True},
]


def score(sample: LearningSample) -> float | None:
    return sample.meta.quality_score


def by_family(samples: list[LearningSample]) -> dict[str, float | None]:
    return {s.sample_family: score(s) for s in samples}


def dump(model: Any) -> dict[str, Any]:
    out: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


def stage_without_plan(status: str, **top: Any) -> StageEvent:
    """A stage of a pipeline that names no plan (it goes out without the join)."""
    event = dump(tb.stage(status, name="build"))
    event["payload"].pop("plan_id")
    return StageEvent.model_validate(event | top)


def every_builder_sample(
    deltas: int, now: datetime = tb.NOW, state: PlanState | None = None
) -> list[LearningSample]:
    """Each family and label the builders make, on a plan corrected ``deltas`` times."""
    state = state or tb.plan_state(deltas=deltas)
    decisions = [tb.decision(), tb.decision("plan_rejected")]
    decisions.append(tb.decision("plan_rejected", confirm=confirm("cancelled")))
    deltas_ = [tb.delta(tb.IMPACT | impact) for impact in IMPACTS]
    stages = [tb.stage("completed"), tb.stage("failed")]
    return [
        *(s for event in decisions for s in on_decision(event, state, now).samples),
        *(s for event in deltas_ for s in on_delta(event, state, now).samples),
        *(s for event in stages for s in on_stage(event, state, now).samples),
        *on_stage(stage_without_plan("completed"), None, now).samples,
    ]


# --- the rule per family ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deltas", "approved_score"), [(0, 1.0), (1, 0.9), (3, 0.7), (5, 0.5), (9, 0.5)]
)
def test_intent_resolution_loses_a_tenth_per_correction_down_to_a_half(
    deltas: int, approved_score: float
) -> None:
    state = tb.plan_state(deltas=deltas)
    approved = on_decision(tb.decision(), state, tb.NOW).samples
    rejected = on_decision(tb.decision("plan_rejected"), state, tb.NOW).samples
    assert by_family(approved)["intent_resolution"] == approved_score
    assert by_family(rejected)["intent_resolution"] == 0.0


def test_corrections_after_the_decision_do_not_count() -> None:
    later = tb.plan_state().model_copy(
        update={"delta_ids": ("d0",), "delta_times": {"d0": tb.T0 + timedelta(hours=2)}}
    )
    assert by_family(on_decision(tb.decision(), later, tb.NOW).samples)["intent_resolution"] == 1.0


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (tb.decision(), 1.0),
        (tb.decision("plan_rejected"), 0.0),
        (tb.decision("plan_rejected", confirm=confirm("cancelled")), 0.5),
        (tb.decision(confirm=confirm("approved", "context", tb.CONFIRM_ID)), 1.0),
    ],
)
def test_confirm_decision_scores_the_decision(event: DecisionEvent, expected: float) -> None:
    for state in (tb.plan_state(deltas=3), None):
        assert score(builders.build_confirm_decision(event, state, tb.NOW)) == expected


@pytest.mark.parametrize("deltas", [0, 4])
def test_error_correction_is_a_half_however_often_the_plan_was_corrected(deltas: int) -> None:
    (sample,) = on_delta(tb.delta(), tb.plan_state(deltas=deltas), tb.NOW).samples
    assert score(sample) == 0.5


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, 1.0),
        ({"comp_plan_required": True}, 0.5),
        ({"comp_plan_required": True, "comp_plan_applied": True}, 0.5),
        ({"comp_plan_required": True, "comp_plan_applied": False}, 0.25),
        ({"comp_plan_required": False, "comp_plan_applied": False}, 1.0),
        ({"rollback_used": True}, 0.0),
        ({"rollback_used": True, "comp_plan_required": True, "comp_plan_applied": False}, 0.0),
    ],
)
def test_delta_impact_scores_rollback_and_compensation(
    changes: dict[str, Any], expected: float
) -> None:
    samples = on_delta(tb.delta(tb.IMPACT | changes), tb.plan_state(), tb.NOW).samples
    assert by_family(samples) == {"error_correction": 0.5, "delta_impact": expected}


@pytest.mark.parametrize(
    ("status", "deltas", "expected"),
    [("completed", 0, 1.0), ("completed", 2, 0.5), ("failed", 0, 0.0), ("failed", 2, 0.0)],
)
def test_pipeline_outcome_scores_its_label(status: str, deltas: int, expected: float) -> None:
    (sample,) = on_stage(tb.stage(status), tb.plan_state(deltas=deltas), tb.NOW).samples
    assert score(sample) == expected
    assert builders.LABEL_SCORES[sample.feedback.quality_label] == expected


@pytest.mark.parametrize(("status", "expected"), [("completed", 1.0), ("failed", 0.0)])
def test_a_stage_naming_no_plan_is_scored_too(status: str, expected: float) -> None:
    (sample,) = on_stage(stage_without_plan(status), None, tb.NOW).samples
    assert score(sample) == expected


# --- every sample, in bounds, and the same on a replay ------------------------------------------


@pytest.mark.parametrize("deltas", [0, 1, 2, 5, 6, 40])
def test_every_builder_sample_has_a_score_in_the_unit_interval(deltas: int) -> None:
    samples = every_builder_sample(deltas)
    assert {s.sample_family for s in samples} == BUILDER_FAMILIES
    assert {s.feedback.quality_label for s in samples} == {"good", "acceptable", "poor"}
    for sample in samples:
        value = score(sample)
        assert value is not None, sample.sample_family
        assert 0.0 <= value <= 1.0
        assert sample.to_dict()["meta"]["quality_score"] == value


def test_every_builder_sample_is_mplp_valid_with_its_score_and_flow() -> None:
    validators = learning_validators(mplp_schema_dir() / "learning")
    snap = dump(tb.snapshot())
    snap["plan"]["meta"]["source_flow_id"] = "FLOW-01"
    state = merge_snapshot(None, PlanSnapshot.model_validate(snap), tb.T0)
    assert state is not None
    samples = every_builder_sample(2) + on_decision(tb.decision(), state, tb.NOW).samples
    for sample in samples:
        assert mplp_errors(validators, sample.to_dict()) == [], sample.sample_family
    assert samples[-1].meta.source_flow_id == "FLOW-01"


def test_a_replay_builds_the_same_samples_but_for_created_at() -> None:
    def without_created(samples: list[LearningSample]) -> list[dict[str, Any]]:
        return [{k: v for k, v in s.to_dict().items() if k != "created_at"} for s in samples]

    first = every_builder_sample(3)
    restored = PlanState.from_table(tb.plan_state(deltas=3).to_table())  # a restarted worker
    replayed = every_builder_sample(3, tb.NOW + timedelta(days=1), restored)
    assert [s.created_at for s in replayed] != [s.created_at for s in first]
    assert without_created(replayed) == without_created(first)
    assert [score(s) for s in replayed] == [score(s) for s in first]


# --- source_flow_id ---------------------------------------------------------------------------


def delta_with(**top: Any) -> DeltaIntentEvent:
    event = dump(tb.delta())
    return DeltaIntentEvent.model_validate(event | top)


def state_with(
    meta: dict[str, Any] | None = None, context: dict[str, Any] | None = None
) -> PlanState:
    snap = dump(tb.snapshot())
    snap["plan"]["meta"] |= meta or {}
    snap["context"] |= context or {}
    state = merge_snapshot(None, PlanSnapshot.model_validate(snap), tb.T0)
    assert state is not None
    return state


def built(
    event: DecisionEvent | DeltaIntentEvent | StageEvent, state: PlanState | None
) -> list[LearningSample]:
    """Return the samples the join makes of ``event`` (with its plan, if any)."""
    if isinstance(event, DecisionEvent):
        return on_decision(event, state, tb.NOW).samples
    if isinstance(event, DeltaIntentEvent):
        return on_delta(event, state, tb.NOW).samples
    return on_stage(event, state, tb.NOW).samples


PLAN_FLOW = {"source_flow_id": "FLOW-07"}


@pytest.mark.parametrize(
    ("event", "state", "flow"),
    [
        pytest.param(
            tb.decision(source_flow_id="FLOW-01"), tb.plan_state(), "FLOW-01", id="payload"
        ),
        pytest.param(
            tb.stage("completed", flow_id="SA-01"), tb.plan_state(), "SA-01", id="flow_id"
        ),
        pytest.param(
            delta_with(source_flow_id="MAP-01"), tb.plan_state(), "MAP-01", id="top-level"
        ),
        pytest.param(stage_without_plan("failed", flow_id="SA-02"), None, "SA-02", id="no-plan"),
        pytest.param(tb.decision(), state_with(meta=PLAN_FLOW), "FLOW-07", id="plan-meta"),
        pytest.param(tb.decision(), state_with(context={"flow_id": "F-8"}), "F-8", id="context"),
        pytest.param(
            tb.decision(flow_id="FLOW-02"), state_with(PLAN_FLOW), "FLOW-02", id="event-first"
        ),
        pytest.param(delta_with(flow_id="MAP-02"), state_with(PLAN_FLOW), "MAP-02", id="top-first"),
    ],
)
def test_source_flow_id_is_what_the_event_or_its_plan_says(
    event: DecisionEvent | DeltaIntentEvent | StageEvent, state: PlanState | None, flow: str
) -> None:
    samples = built(event, state)
    assert samples
    for sample in samples:
        assert sample.meta.source_flow_id == flow
        assert sample.to_dict()["meta"]["source_flow_id"] == flow


@pytest.mark.parametrize("value", ["", 7, None, ["FLOW-01"]])
def test_no_flow_id_is_made_up(value: Any) -> None:
    samples = [
        *built(tb.decision(source_flow_id=value), tb.plan_state()),
        *built(delta_with(flow_id=value), state_with({"flow_id": value}, {"flow_id": value})),
        *built(tb.stage("completed"), tb.plan_state()),
    ]
    for sample in samples:
        assert sample.meta.source_flow_id is None
        assert "source_flow_id" not in sample.to_dict()["meta"]


# --- margins ----------------------------------------------------------------------------------


def decided(kind: str, minutes: int, deltas: int) -> LearningSample:
    event = tb.decision(kind).model_copy(
        update={
            "event_id": f"evt-{kind}-{minutes}",
            "timestamp": tb.T0 + timedelta(minutes=minutes),
        }
    )
    return builders.build_intent_resolution(event, tb.plan_state(deltas=deltas), tb.NOW)


def plan(sample: LearningSample) -> Plan:
    found = plan_of(sample)
    assert isinstance(found, Plan)
    return found


@pytest.mark.parametrize(("deltas", "margin"), [(0, 1.0), (2, 0.8), (8, 0.5)])
def test_a_replan_margin_is_the_approved_score_less_the_rejected(
    deltas: int, margin: float
) -> None:
    rejected, approved = decided("plan_rejected", 1, 0), decided("plan_approved", 2, deltas)
    held, _, _ = match(None, plan(rejected), tb.NOW, 0)
    _, (pair,), _ = match(held, plan(approved), tb.NOW, 0)
    assert pair.margin == margin == score(approved) - score(rejected)  # type: ignore[operator]


def test_a_replan_of_a_plan_held_without_a_score_has_no_margin() -> None:
    old = plan(decided("plan_rejected", 1, 0)).model_copy(update={"score": None})
    held, _, _ = match(None, old, tb.NOW, 0)
    _, (pair,), _ = match(held, plan(decided("plan_approved", 2, 0)), tb.NOW, 0)
    assert pair.margin is None


def test_a_correction_margin_is_its_sample_score() -> None:
    event = dump(tb.delta())
    event["payload"]["changes"] = {"title": "Add a cache, with a rollback"}
    (sample,) = on_delta(DeltaIntentEvent.model_validate(event), tb.plan_state(), tb.NOW).samples
    pair = correction_pair(sample, CREATED)
    assert isinstance(pair, PreferencePair)
    assert pair.margin == score(sample) == 0.5
