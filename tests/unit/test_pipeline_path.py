"""pipeline_path of pipeline_outcome samples: the plan's ended stages up to the sample's own,
recorded in the plan's state, the same in a run and in its replay."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from learnstream.streams.encoding.codecs import AvroSampleCodec, JsonSampleCodec
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.join.rules import on_stage
from learnstream.streams.mplp.models import StageEvent
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.state.plan import MAX_STAGES, PlanState, StageMark, record_stage
from tests.support.avro_consumer import plain_read
from tests.support.mplp_learning import learning_validators, mplp_errors
from tests.unit.test_agents import WHEN, Harness, harness, js, key_of
from tests.unit.test_builders import NOW, PLAN_ID, T0, plan_state
from tests.unit.test_join_order import bodies, caught_up, correct, unread_corrections


def ended(name: str, minutes: float, n: int = 0, status: str = "completed") -> StageEvent:
    """Return the end of stage ``name`` of the plan, ``minutes`` after T0 (``n`` tells two
    events of one stage at one time apart)."""
    return StageEvent.model_validate(
        {
            "event_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{name}/{minutes}/{n}")),
            "event_family": "pipeline_stage",
            "event_type": f"stage_{status}",
            "timestamp": (T0 + timedelta(minutes=minutes)).isoformat(),
            "pipeline_id": "pipeline-7",
            "stage_id": name,
            "stage_status": status,
            "payload": {"plan_id": PLAN_ID},
        }
    )


def read(
    events: list[StageEvent], state: PlanState | None = None, **options: Any
) -> tuple[list[LearningSample], PlanState]:
    """Decide stage events in arrival order as the join does, the state stored (JSON) and read
    back between them; return the samples and the state."""
    state, samples = state or plan_state(), []
    for event in events:
        outcome = on_stage(event, state, NOW, **options)
        samples += outcome.samples
        if outcome.new_state is not None:
            state = PlanState.from_table(outcome.new_state.to_table())
    return samples, state


def paths(samples: list[LearningSample]) -> list[list[str]]:
    return [s.input["pipeline_path"] for s in samples]


def test_each_stage_names_the_stages_before_it_and_itself() -> None:
    samples, state = read([ended("plan", 1), ended("build", 2), ended("execute", 3)])
    assert paths(samples) == [["plan"], ["plan", "build"], ["plan", "build", "execute"]]
    assert samples[-1].input["pipeline_id"] == "pipeline-7"
    assert [m.stage_id for m in state.stages or ()] == ["plan", "build", "execute"]


def test_a_failed_stage_and_a_stage_not_collected_are_on_the_path() -> None:
    events = [ended("lint", 1), ended("build", 2, status="failed"), ended("execute", 3)]
    samples, _ = read(events, stages=frozenset({"build", "execute"}))
    assert paths(samples) == [["lint", "build"], ["lint", "build", "execute"]]


def test_a_redelivered_stage_is_recorded_once_and_makes_the_same_sample() -> None:
    events = [ended("plan", 1), ended("execute", 3)]
    first, state = read(events)
    again = on_stage(events[0], state, NOW)
    assert again.new_state is None  # nothing to write
    assert again.samples == first[:1]


def test_a_stage_read_later_is_not_on_the_path_of_a_stage_read_before_it() -> None:
    # "build" happened before "execute" but was read after it
    samples, state = read([ended("execute", 3), ended("build", 2)])
    assert paths(samples) == [["execute"], ["build"]]
    replayed, _ = read([ended("execute", 3), ended("build", 2)], state)
    assert replayed == samples


def test_equal_times_order_by_event_id() -> None:
    a, b = ended("left", 2), ended("right", 2)
    first, second = sorted([a, b], key=lambda e: e.event_id)
    samples, _ = read([first, second, ended("execute", 3)])
    assert paths(samples)[-1] == [first.stage, second.stage, "execute"]


def test_a_stage_that_names_no_plan_is_its_own_path() -> None:
    event = ended("lint", 1)
    event = event.model_copy(update={"payload": event.payload.model_copy(update={"plan_id": None})})
    (sample,) = on_stage(event, None, NOW).samples
    assert sample.input["pipeline_path"] == ["lint"]
    assert sample.input["pipeline_id"] == "pipeline-7"


def test_a_stage_waiting_for_its_plan_records_nothing_until_it_comes() -> None:
    outcome = on_stage(ended("execute", 3), None, NOW)
    assert (outcome.park, outcome.new_state) == (True, None)
    assert on_stage(ended("lint", 1), None, NOW, stages=frozenset({"execute"})).park is False


def test_a_stage_waiting_for_the_corrections_is_recorded_as_it_is_read() -> None:
    build = ended("build", 2)
    waits = on_stage(build, plan_state(), NOW, settled=False)
    assert (waits.samples, waits.park) == ([], True)
    assert waits.new_state is not None
    (execute,), state = read([ended("execute", 3)], waits.new_state)
    assert execute.input["pipeline_path"] == ["build", "execute"]
    (late,) = on_stage(build, state, NOW).samples  # completed after the later stage went out
    assert late.input["pipeline_path"] == ["build"]


def test_a_plan_keeps_its_latest_stages() -> None:
    events = [ended(f"s{i}", i) for i in range(MAX_STAGES + 8)]
    samples, state = read(events)
    assert [m.stage_id for m in state.stages or ()] == [e.stage for e in events[-MAX_STAGES:]]
    assert paths(samples)[-1] == [e.stage for e in events[-MAX_STAGES:]]


def test_an_end_without_a_reported_duration_lasts_from_its_running_event() -> None:
    """The plan's state records each stage start; an end that reports no ``duration_ms``
    lasts from its stage's latest start at or before it. A reported one is kept as sent."""
    started = ended("build", 1, status="running")
    build = ended("build", 2.5)
    samples, state = read([started, started, build, ended("execute", 3)])
    assert [m.event_id for m in state.stage_starts or ()] == [started.event_id]  # once
    assert [m.stage_id for m in state.stages or ()] == ["build", "execute"]  # not the start
    built, executed = samples
    assert built.output["duration_ms"] == 90000
    assert "duration_ms" not in executed.output  # no start seen, none reported
    reported = build.model_copy(
        update={"payload": build.payload.model_copy(update={"duration_ms": 1500})}
    )
    (kept,), _ = read([started, reported])
    assert (kept.output["duration_ms"], kept.output["result"]["duration_ms"]) == (1500, 1500)
    later_start = ended("build", 4, n=1, status="running")
    (before,), _ = read([later_start, build])  # a start after the end is no start of it
    assert "duration_ms" not in before.output
    assert on_stage(started, None, NOW).new_state is None  # no plan yet: not kept
    assert PlanState.from_table(state.to_table()) == state


def test_a_state_stored_without_stages_still_loads() -> None:
    raw = orjson.loads(plan_state().to_table())
    assert "stages" not in raw  # none recorded: nothing written
    assert PlanState.from_table(orjson.dumps(raw)).stages is None
    state = record_stage(plan_state(), StageMark.of(ended("build", 2)))
    stored = orjson.loads(state.to_table())["stages"]
    assert stored == [["build", "2026-03-01T11:02:00Z", ended("build", 2).event_id]]
    assert PlanState.from_table(state.to_table()) == state


_STAGE = st.tuples(st.sampled_from(["plan", "build", "test", "execute"]), st.integers(0, 6))


@st.composite
def _runs(draw: st.DrawFn) -> list[StageEvent]:
    drawn = draw(st.lists(_STAGE, min_size=1, max_size=8))
    return draw(st.permutations([ended(name, at, n=i) for i, (name, at) in enumerate(drawn)]))


@settings(max_examples=200, deadline=None)
@given(_runs(), st.integers(0, 8))
def test_a_replay_over_the_state_left_rebuilds_every_sample_the_same(
    events: list[StageEvent], crash: int
) -> None:
    samples, state = read(events)
    for sample, event in zip(samples, events, strict=True):
        path = sample.input["pipeline_path"]
        assert path[-1] == event.stage
        assert len(path) <= len(events)
    # records after the last commit are read again, over the state the first run wrote
    crash = min(crash, len(events))
    replayed, after = read(events[crash:], state)
    assert replayed == samples[crash:]
    assert after == state


@settings(max_examples=100, deadline=None)
@given(_runs())
def test_in_event_time_order_a_path_is_every_stage_up_to_its_own(events: list[StageEvent]) -> None:
    in_time = sorted(events, key=lambda e: (e.timestamp, e.event_id))
    samples, _ = read(in_time)
    for i, sample in enumerate(samples):
        assert sample.input["pipeline_path"] == [e.stage for e in in_time[: i + 1]]


# --- schemas ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validators(mplp_schemas: Path) -> dict[str, Any]:
    return learning_validators(mplp_schemas / "learning")


def test_a_sample_with_its_path_is_valid_in_json_and_avro(validators: dict[str, Any]) -> None:
    samples, _ = read([ended("plan", 1), ended("execute", 3)])
    wire = samples[-1].to_dict()
    for codec, decode in ((JsonSampleCodec(), json.loads), (AvroSampleCodec(), plain_read)):
        consumed = decode(codec.encode(wire))
        assert consumed == wire
        assert consumed["input"]["pipeline_path"] == ["plan", "execute"]
        assert mplp_errors(validators, consumed) == []
    assert validate_sample(wire) == []


# --- through the worker -----------------------------------------------------------------------


def stages_story(h: Harness) -> tuple[dict[str, Any], ...]:
    """Return a plan, its build and execute ending a minute apart, and a later correction."""
    snap = h.sim.plan(WHEN)
    build = h.sim.stage(snap, "completed", WHEN + timedelta(minutes=1), stage="build")
    done = h.sim.stage(snap, "completed", WHEN + timedelta(minutes=2))
    later = h.sim.delta(snap, WHEN + timedelta(minutes=5))
    return snap, build, done, later


async def test_the_worker_gives_the_same_paths_whichever_stage_settles_first(
    tmp_path: Any,
) -> None:
    async with harness(tmp_path / "a") as a:
        snap, build, done, later = stages_story(a)
        for field, record in (("plans", snap), ("pipeline_stage", build), ("pipeline_stage", done)):
            await a.put(field, js(record), key=key_of(snap))
        await correct(a, later, key_of(snap))
        in_order = bodies(a)
    async with harness(tmp_path / "b") as b:
        snap, build, done, later = stages_story(b)
        await b.put("plans", js(snap), key=key_of(snap))
        unread_corrections(b, 1)  # build waits for the corrections input...
        await b.put("pipeline_stage", js(build), key=key_of(snap))
        assert b.samples.await_count == 0
        caught_up(b)  # ...execute does not: its sample goes out first
        await b.put("pipeline_stage", js(done), key=key_of(snap))
        await correct(b, later, key_of(snap))
        outcomes = [s for s in b.sent() if s["sample_family"] == "pipeline_outcome"]
        assert [s["input"]["pipeline_path"] for s in outcomes] == [
            ["build", "execute"],
            ["build"],
        ]
        assert bodies(b) == in_order


async def test_the_worker_makes_a_skipped_stage_a_pipeline_outcome_off_the_path(
    tmp_path: Any,
) -> None:
    """Official stage events only (``stage_status``): a skipped stage is a sample with status
    skipped, acceptable; the stage the plan ran next does not name it."""
    async with harness(tmp_path) as h:
        snap, build, done, later = stages_story(h)
        skipped = {
            "event_id": str(uuid.uuid4()),
            "event_family": "pipeline_stage",
            "event_type": "pipeline_stage_skipped",
            "timestamp": (WHEN + timedelta(seconds=90)).isoformat(),
            "pipeline_id": str(uuid.uuid4()),
            "stage_id": "review",
            "stage_name": "Review",
            "stage_status": "skipped",
            "stage_order": 2,
            "payload": {"plan_id": snap["plan"]["plan_id"]},
        }
        await h.put("plans", js(snap), key=key_of(snap))
        for record in (build, skipped, done):
            await h.put("pipeline_stage", js(record), key=key_of(snap))
        await correct(h, later, key_of(snap))
        outcomes = {
            s["input"]["stage_id"]: s for s in h.sent() if s["sample_family"] == "pipeline_outcome"
        }
        assert set(outcomes) == {"build", "review", "execute"}
        review = outcomes["review"]
        assert (review["output"]["status"], review["output"]["result"]["status"]) == (
            "skipped",
            "skipped",
        )
        assert review["input"]["pipeline_path"] == ["build", "review"]
        assert (review["feedback"]["quality_label"], review["meta"]["quality_score"]) == (
            "acceptable",
            0.5,
        )
        assert outcomes["execute"]["input"]["pipeline_path"] == ["build", "execute"]
        assert validate_sample(review) == []
