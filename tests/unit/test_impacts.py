"""Core events (streams/mplp/core_events.py) and impact analyses completing their delta's
delta_impact (streams/join/impacts.py): pure, then through the worker."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft7Validator

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.encoding.codecs import AvroSampleCodec, JsonSampleCodec
from learnstream.streams.export.common import common_record
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.join.impacts import (
    ImpactState,
    analysis_route,
    decide_analysis,
    decide_delta,
    impact_expiry,
    impact_key,
)
from learnstream.streams.mplp import core_events
from learnstream.streams.mplp.core_events import core_use, decode_core_event, impact_of
from learnstream.streams.mplp.decode import RecordOrigin, decode_delta
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.sim.simulate import Simulator
from tests.support.avro_consumer import plain_read
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.mplp_learning import format_checker, learning_validators, mplp_errors
from tests.support.worker import RunningWorker, running_worker, sent_samples
from tests.unit.test_export_common import common_validator
from tests.unit.test_mplp_inputs import MAX_EXAMPLES, generated_from, official

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=10)
IMPACT = {
    "actual_impact_summary": "Two services redeployed",
    "impact_scope": "module",
    "comp_plan_required": True,
    "comp_plan_applied": True,
    "risk_level": "high",
    "impact_analysis_duration_ms": 420,
}


def delta_event(seed: int = 1, impact: bool = False) -> dict[str, Any]:
    sim = Simulator(seed=seed)
    return sim.delta(sim.plan(T), T, impact=impact)


def analysis_of(delta: dict[str, Any], **payload: Any) -> dict[str, Any]:
    """Return the ImpactAnalysisEvent of ``delta``, a minute after it."""
    return {
        "event_id": "6f0c5d5e-9a61-4d4b-9f3a-0a4be1f0c001",
        "event_family": "impact_analysis",
        "event_type": "impact_analysis_completed",
        "timestamp": "2026-03-01T12:01:00Z",
        "project_id": delta["project_id"],
        "payload": {
            "delta_id": delta["payload"]["delta_id"],
            "plan_id": delta["payload"]["plan_id"],
            "impact": IMPACT,
            "impact_score": 0.4,
        }
        | payload,
    }


def js(obj: Any) -> bytes:
    return orjson.dumps(obj)


def play(*events: dict[str, Any], state: ImpactState | None = None) -> tuple[list[Any], Any]:
    """Decide ``events`` in order against one impact window; return samples and the state."""
    samples = []
    for event in events:
        if event["event_family"] == "delta_intent":
            outcome = decide_delta(decode_delta(js(event)), state, T, None, True)
        else:
            outcome = decide_analysis(decode_core_event(js(event)), state, T, None, True)
        samples += [s.to_dict() for s in outcome.samples]
        state = outcome.new_state or state
    return samples, state


@pytest.fixture(scope="module")
def validators(mplp_schemas: Path) -> dict[str, Any]:
    return learning_validators(mplp_schemas / "learning")


# --- decoding: every core family accepted, three of them read ----------------------------


def test_every_core_family_is_accepted_and_counted_by_use() -> None:
    delta = delta_event()
    notes = InputNotes()
    decode_core_event(js(analysis_of(delta)), notes=notes)
    decode_core_event(js(analysis_of(delta, delta_id=None)), notes=notes)
    for family, payload in (
        ("intent", {"text": "ship it"}),  # names no plan
        ("cost_budget", {"plan_id": "plan-1"}),  # no token count
        ("intent", {"text": "ship it", "plan_id": "plan-1"}),
        ("cost_budget", {"plan_id": "plan-1", "total_tokens": 30}),
        ("methodology", {"text": "ship it"}),
    ):
        event = {**analysis_of(delta), "event_family": family, "payload": payload}
        decode_core_event(js(event), notes=notes)
    assert notes.core_events == [
        ("impact_analysis", "joined"),
        ("impact_analysis", "incomplete"),
        ("intent", "incomplete"),
        ("cost_budget", "incomplete"),
        ("intent", "joined"),
        ("cost_budget", "joined"),
        ("methodology", "ignored"),
    ]
    metrics = Metrics()
    metrics.note_input(notes)

    def count(family: str, use: str) -> float | None:
        labels = {"family": family, "use": use}
        return metrics.registry.get_sample_value("learnstream_core_events_total", labels)

    assert (count("impact_analysis", "joined"), count("methodology", "ignored")) == (1, 1)
    assert (count("cost_budget", "joined"), count("cost_budget", "incomplete")) == (1, 1)


def test_an_analysis_is_parsed_once_on_its_way_through_the_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The decoder's count, the route's key and its decider read one parse of the payload,
    and what they read is the same whether the analysis is complete or not."""
    parsed: list[str] = []
    parse = core_events._analysis

    def counted(family: str, payload: dict[str, Any]) -> Any:
        parsed.append(family)
        return parse(family, payload)

    monkeypatch.setattr(core_events, "_analysis", counted)
    route, delta = analysis_route(), delta_event()
    origin = RecordOrigin("mplp.core_events", 0, 7, T)
    for event, use in (
        (analysis_of(delta), "joined"),
        (analysis_of(delta, delta_id=None), "incomplete"),
    ):
        notes, parsed[:] = InputNotes(), []
        decoded = route.decode(js(event), origin, notes)
        key = route.key(decoded)
        outcome = route.decide(decoded, None, T, None, True)
        assert (notes.core_events, parsed) == ([("impact_analysis", use)], ["impact_analysis"])
        joined = use == "joined"
        assert (key is not None, outcome.new_state is not None) == (joined, joined)


def test_a_family_the_schema_does_not_name_is_refused_by_name() -> None:
    event = {**analysis_of(delta_event()), "event_family": "plan_approved"}
    with pytest.raises(InvalidEvent) as info:
        decode_core_event(js(event))
    assert info.value.reason == "unknown_event_type"


def test_runtime_ids_zone_less_times_and_missing_ids_are_accepted_and_noted() -> None:
    event = analysis_of(delta_event(), delta_id="delta-7", plan_id="plan-7")
    event |= {"project_id": "proj-1", "timestamp": "2026-03-01T12:01:00"}
    del event["event_id"]
    notes = InputNotes()
    origin = RecordOrigin("mplp.core_events", 2, 40, T)
    decoded = decode_core_event(js(event), origin, notes)
    assert decoded.timestamp == datetime(2026, 3, 1, 12, 1, tzinfo=UTC)
    assert (notes.non_uuid_ids, notes.naive_timestamps, notes.filled) == (
        ["project_id"],
        ["timestamp"],
        ["event_id"],
    )
    analysis = impact_of(decoded)
    assert analysis is not None
    assert (analysis.delta_id, analysis.plan_id) == ("delta-7", "plan-7")


def test_an_analysis_may_carry_its_outcome_flat_and_in_other_spellings() -> None:
    delta = delta_event()
    flat = analysis_of(delta, summary="Cache rebuilt", scope="local", score=1)
    del flat["payload"]["impact"], flat["payload"]["impact_score"]
    flat["payload"] |= {"rollback_used": False, "extra": "not the family's"}
    analysis = impact_of(decode_core_event(js(flat)))
    assert analysis is not None
    assert analysis.impact.model_dump(exclude_none=True) == {
        "actual_impact_summary": "Cache rebuilt",
        "impact_scope": "local",
        "rollback_used": False,
    }
    assert analysis.impact_score == 1.0


@pytest.mark.parametrize(
    "payload",
    [
        {"delta_id": None},
        {"delta_id": None, "plan_id": "plan-7"},
        {"impact": {**IMPACT, "impact_scope": "galaxy"}},
        {"impact": {"impact_scope": "local"}},
    ],
    ids=["no delta", "a plan but no delta", "scope out of the enum", "no summary"],
)
def test_an_incomplete_analysis_is_accepted_and_joins_nothing(payload: dict[str, Any]) -> None:
    decoded = decode_core_event(js(analysis_of(delta_event(), **payload)))
    assert (impact_of(decoded), core_use(decoded)) == (None, "incomplete")
    outcome = decide_analysis(decoded, None, T, None, True)
    assert (outcome.samples, outcome.new_state) == ([], None)


# --- the impact window: both arrival orders, the window, duplicates ------------------------


def schema_only_analysis(delta: dict[str, Any]) -> dict[str, Any]:
    """Return an ImpactAnalysisEvent naming only its delta, the outcome flat in the payload:
    nothing the core schema does not define at the top level, no ``plan_id``."""
    return {
        "event_id": "6f0c5d5e-9a61-4d4b-9f3a-0a4be1f0c0a1",
        "event_type": "impact_analysis_completed",
        "event_family": "impact_analysis",
        "timestamp": "2026-03-01T12:01:30Z",
        "payload": {
            "delta_id": delta["payload"]["delta_id"],
            "actual_impact_summary": "Login service redeployed",
            "impact_scope": "local",
            "rollback_used": False,
        },
    }


def core_schema_errors(mplp_schemas: Path, event: dict[str, Any]) -> list[str]:
    name = "events/mplp-event-core.schema.json"
    validator = Draft7Validator(official(mplp_schemas, name), format_checker=format_checker())
    return [e.message for e in validator.iter_errors(event)]


@pytest.mark.parametrize("analysis_first", [False, True])
def test_an_analysis_naming_only_its_delta_completes_the_delta_impact(
    mplp_schemas: Path, validators: dict[str, Any], analysis_first: bool
) -> None:
    delta = delta_event(14)
    analysis = schema_only_analysis(delta)
    assert core_schema_errors(mplp_schemas, analysis) == []
    assert core_schema_errors(mplp_schemas, delta) == []
    decoded = decode_core_event(js(analysis))
    parsed = impact_of(decoded)
    assert parsed is not None
    assert (core_use(decoded), parsed.plan_id) == ("joined", None)
    assert analysis_route().key(decoded) == impact_key(delta["payload"]["delta_id"])
    (sample,), state = play(*((analysis, delta) if analysis_first else (delta, analysis)))
    assert state.done
    assert state.record_key == delta["payload"]["plan_id"]  # the delta's, whichever came first
    assert sample["input"]["delta_id"] == delta["payload"]["delta_id"]
    assert sample["output"] == {
        "actual_impact_summary": "Login service redeployed",
        "impact_scope": "local",
        "rollback_used": False,
    }
    assert sample["meta"]["plan_id"] == delta["payload"]["plan_id"]  # from the delta
    assert sample["meta"]["source_event_ids"] == [analysis["event_id"], delta["event_id"]]
    assert sample["meta"]["project_id"] == delta["project_id"]
    assert (sample["feedback"]["quality_label"], sample["meta"]["quality_score"]) == ("good", 1.0)
    assert mplp_errors(validators, sample) == []


def test_delta_then_analysis_completes_one_delta_impact_with_the_analysis_outcome(
    validators: dict[str, Any],
) -> None:
    delta = delta_event(2)
    analysis = analysis_of(delta)
    held, state = play(delta)
    assert held == []
    assert state.delta is not None
    assert state.analysis is None
    assert state.record_key == delta["payload"]["plan_id"]
    (sample,), state = play(analysis, state=state)
    assert state.done
    assert sample["sample_id"] == sample_id("delta_impact", canonical_id(analysis["event_id"]))
    assert sample["input"] == {
        "delta_id": delta["payload"]["delta_id"],
        "intent_id": delta["payload"]["intent_id"],
        "change_summary": delta["payload"]["change_summary"],
        "delta_type": delta["payload"]["delta_type"],
    }
    assert sample["output"] == {
        "actual_impact_summary": "Two services redeployed",
        "impact_scope": "module",
        "comp_plan_required": True,
        "comp_plan_applied": True,
        "impact_score": 0.4,
    }
    assert sample["state"] == {"risk_level": "high"}
    meta = sample["meta"]
    assert meta["impact_analysis_duration_ms"] == 420
    assert meta["source_event_ids"] == [analysis["event_id"], delta["event_id"]]
    assert (meta["plan_id"], meta["project_id"]) == (
        delta["payload"]["plan_id"],
        delta["project_id"],
    )
    assert meta["event_time"] == "2026-03-01T12:01:00Z"
    assert (sample["feedback"]["quality_label"], meta["quality_score"]) == ("acceptable", 0.5)
    assert mplp_errors(validators, sample) == []


def test_the_common_export_carries_the_analysis_impact_score() -> None:
    delta = delta_event(9)
    (sample,), _ = play(delta, analysis_of(delta))
    record = common_record(LearningSample.model_validate(sample))
    assert record is not None
    assert record["impact_score"] == 0.4
    assert record["delta_intents"][0]["impact"]["impact_scope"] == "module"
    assert [e.message for e in common_validator().iter_errors(record)] == []
    unscored = analysis_of(delta, impact_score=None)
    (sample,), _ = play(delta, unscored)
    record = common_record(LearningSample.model_validate(sample))
    assert record is not None
    assert "impact_score" not in record


def test_analysis_then_delta_makes_the_same_sample() -> None:
    delta = delta_event(3)
    analysis = analysis_of(delta)
    first, _ = play(delta, analysis)
    held, state = play(analysis)
    assert held == []
    assert state.analysis is not None
    assert state.delta is None
    second, state = play(delta, state=state)
    assert [s | {"created_at": ""} for s in second] == [s | {"created_at": ""} for s in first]
    assert state.done


def test_a_redelivered_record_after_completion_makes_no_second_sample() -> None:
    delta = delta_event(4)
    analysis = analysis_of(delta)
    (_,), state = play(delta, analysis)
    again, state = play(analysis, delta, state=state)
    assert again == []
    assert state.done


def test_a_later_analysis_replaces_an_earlier_one_waiting_for_its_delta() -> None:
    delta = delta_event(5)
    early = analysis_of(delta)
    late = analysis_of(delta, impact={**IMPACT, "rollback_used": True}) | {
        "event_id": "6f0c5d5e-9a61-4d4b-9f3a-0a4be1f0c002",
        "timestamp": "2026-03-01T12:02:00Z",
    }
    (sample,), _ = play(late, early, delta)
    assert sample["meta"]["source_event_ids"][0] == late["event_id"]
    assert (sample["feedback"]["quality_label"], sample["meta"]["quality_score"]) == ("poor", 0)


def test_a_delta_carrying_its_impact_is_done_and_its_analysis_makes_no_second_sample() -> None:
    delta = delta_event(6, impact=True)
    samples, state = play(delta, analysis_of(delta))
    assert samples == []  # its own delta_impact goes out through the plan's join
    assert state.done
    assert state.delta is None


def test_a_window_quiet_for_its_span_is_deleted_without_a_sample() -> None:
    _, state = play(delta_event(7))
    expire = impact_expiry(WINDOW)
    assert expire(state, T + WINDOW - timedelta(seconds=1)) is None
    ended = expire(state, T + WINDOW)
    assert ended is not None
    assert (ended.samples, ended.close) == ([], True)


def test_the_state_round_trips_through_its_table_bytes() -> None:
    _, state = play(delta_event(8))
    assert ImpactState.from_table(state.to_table()) == state


# --- the property test: the official core schema in, never a schema_violation --------------


def test_core_events_generated_from_the_official_schema_are_never_schema_violations(
    mplp_schemas: Path,
) -> None:
    def check(generated: dict[str, Any], _uuid: str) -> str:
        decoded = decode_core_event(json.dumps(generated).encode())
        assert decoded.event_family == generated["event_family"]
        outcome = decide_analysis(decoded, None, T, None, True)
        assert outcome.samples == []  # no delta yet
        return core_use(decoded)

    name = "events/mplp-event-core.schema.json"
    seen = generated_from(official(mplp_schemas, name), check, name)
    assert sum(seen.values()) >= MAX_EXAMPLES // 2


# --- through the worker ---------------------------------------------------------------------


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[RunningWorker]:
    async with running_worker(tmp_path, T) as built:
        yield built


class Played:
    """A plan, its delta and the delta's analysis, fed to the worker on the plan's partition."""

    def __init__(self, worker: RunningWorker, seed: int) -> None:
        self.runtime, self.mocks, self.feed, self.clock = worker
        sim = Simulator(seed=seed, pii_ratio=0.0)
        self.snapshot = sim.plan(T)
        self.delta = sim.delta(self.snapshot, T)
        self.analysis = analysis_of(self.delta)
        self.plan_id = self.snapshot["plan"]["plan_id"]
        self.partition = partition_of(self.plan_id, self.runtime.settings.topics.partitions)

    async def put(self, agent: str, topic: str, event: dict[str, Any]) -> None:
        name = self.runtime.settings.topics.name(topic)
        where = {"key": self.plan_id.encode(), "partition": self.partition}
        await self.feed.put(agent, name, js(event), **where)


async def test_the_worker_completes_a_delta_impact_in_either_order_valid_in_json_and_avro(
    worker: RunningWorker, validators: dict[str, Any]
) -> None:
    for seed, analysis_first in ((11, False), (12, True)):
        played = Played(worker, seed)
        await played.put("plans", "plans", played.snapshot)
        steps = [("deltas", "delta_intents", played.delta)]
        steps.insert(0 if analysis_first else 1, ("core_events", "core_events", played.analysis))
        for agent, topic, event in steps:
            await played.put(agent, topic, event)
        samples = sent_samples(played.mocks)
        impacts = [s for s in samples if s["sample_family"] == "delta_impact"]
        (sample,) = [
            s for s in impacts if s["input"]["delta_id"] == played.delta["payload"]["delta_id"]
        ]
        assert sample["output"]["impact_score"] == 0.4
        for codec, read in ((JsonSampleCodec(), json.loads), (AvroSampleCodec(), plain_read)):
            consumed = read(codec.encode(sample))
            assert consumed == sample
            assert mplp_errors(validators, consumed) == []
    assert worker[1]["dlq"].await_count == 0


async def test_the_worker_joins_an_analysis_naming_only_its_delta(
    worker: RunningWorker, mplp_schemas: Path
) -> None:
    """Published as RuntimePublisher does when given the delta's plan as its key."""
    played = Played(worker, 15)
    analysis = schema_only_analysis(played.delta)
    assert core_schema_errors(mplp_schemas, analysis) == []
    await played.put("plans", "plans", played.snapshot)
    await played.put("core_events", "core_events", analysis)
    await played.put("deltas", "delta_intents", played.delta)
    (sample,) = [s for s in sent_samples(played.mocks) if s["sample_family"] == "delta_impact"]
    assert sample["input"]["delta_id"] == played.delta["payload"]["delta_id"]
    assert sample["output"]["actual_impact_summary"] == "Login service redeployed"
    assert sample["meta"]["source_event_ids"][0] == analysis["event_id"]
    assert played.mocks["dlq"].await_count == 0


async def test_the_worker_forgets_a_delta_whose_analysis_never_came(
    worker: RunningWorker,
) -> None:
    runtime, mocks, _, clock = worker
    played = Played(worker, 13)
    await played.put("plans", "plans", played.snapshot)
    await played.put("deltas", "delta_intents", played.delta)
    (correction,) = sent_samples(mocks)  # as before: the error_correction, at once
    assert correction["sample_family"] == "error_correction"
    key = impact_key(played.delta["payload"]["delta_id"])
    assert key in runtime.tables.delta_impacts
    clock.now = T + WINDOW + timedelta(minutes=2)  # the quiet index counts whole minutes
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=played.partition)
    assert key not in runtime.tables.delta_impacts
    assert len(sent_samples(mocks)) == 1
    late = played.analysis
    await played.put("core_events", "core_events", late)  # waits for a delta that is gone
    assert len(sent_samples(mocks)) == 1
    assert mocks["dlq"].await_count == 0


# --- consent: a sample's project is its plan's when neither event names one ----------------


def without_project(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k != "project_id"}


async def test_an_impact_naming_no_project_takes_its_plans_and_its_plans_opt_out(
    worker: RunningWorker,
) -> None:
    runtime = worker[0]
    kept = Played(worker, 21)
    refused = Played(worker, 22)
    project = refused.snapshot["project_id"]
    assert project != kept.snapshot["project_id"]
    runtime.consent.apply(project.encode(), js({"project_id": project, "enabled": False}))
    for played in (kept, refused):
        await played.put("plans", "plans", played.snapshot)
        await played.put("deltas", "delta_intents", without_project(played.delta))
        await played.put("core_events", "core_events", without_project(played.analysis))
    impacts = [s for s in sent_samples(kept.mocks) if s["sample_family"] == "delta_impact"]
    (sample,) = impacts  # the refused project's impact never left
    assert sample["input"]["delta_id"] == kept.delta["payload"]["delta_id"]
    assert sample["meta"]["project_id"] == canonical_id(kept.snapshot["project_id"])
    opted = runtime.metrics.registry.get_sample_value(
        "learnstream_opted_out_total", {"reason": "project"}
    )
    assert opted == 2  # the refused project's error_correction and its delta_impact


async def test_a_delta_and_its_analysis_before_their_plan_go_out_when_it_comes(
    worker: RunningWorker,
) -> None:
    """Kafka orders two topics by nothing: both halves may come before the plan. The delta
    waits for its plan, and reaches the impact window once the plan completes it."""
    runtime = worker[0]
    played = Played(worker, 23)
    await played.put("deltas", "delta_intents", without_project(played.delta))
    await played.put("core_events", "core_events", without_project(played.analysis))
    assert sent_samples(played.mocks) == []  # the delta waits for its plan
    await played.put("plans", "plans", played.snapshot)
    samples = sent_samples(played.mocks)
    (impact,) = [s for s in samples if s["sample_family"] == "delta_impact"]
    assert impact["meta"]["project_id"] == canonical_id(played.snapshot["project_id"])
    assert [s["sample_family"] for s in samples].count("error_correction") == 1
    unknown = runtime.metrics.registry.get_sample_value(
        "learnstream_opted_out_total", {"reason": "project_unknown"}
    )
    assert unknown == 0
    assert played.mocks["dlq"].await_count == 0


async def test_halves_naming_two_projects_make_no_sample(worker: RunningWorker) -> None:
    played = Played(worker, 24)
    await played.put("plans", "plans", played.snapshot)
    await played.put("deltas", "delta_intents", played.delta)
    other = played.analysis | {"project_id": "9d2c6f0e-1b3a-4c5d-8e7f-0a1b2c3d4e5f"}
    await played.put("core_events", "core_events", other)
    assert [s for s in sent_samples(played.mocks) if s["sample_family"] == "delta_impact"] == []
