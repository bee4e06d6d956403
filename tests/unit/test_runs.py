"""SA steps and runtime executions (streams/join/runs.py): a pipeline_outcome per run that
ends, with its duration from the start; pure, then through the worker's runs agent."""

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
from learnstream.streams.export.common import common_record
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.join.runs import (
    RunState,
    decide_execution,
    decide_sa,
    decide_stage_run,
    run_expiry,
    run_key,
    sa_route,
    stage_key,
)
from learnstream.streams.mplp.decode import decode_stage
from learnstream.streams.mplp.run_events import decode_execution, decode_sa_event
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.sim.simulate import Simulator
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.mplp_learning import format_checker
from tests.support.worker import RunningWorker, running_worker
from tests.unit.test_export_common import common_validator
from tests.unit.test_mplp_inputs import MAX_EXAMPLES, generated_from, official

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
P = "8e9f0a1b-2c3d-4e5f-9a6b-7c8d9e0f1a2b"  # a project, for the common export
TIMEOUT = timedelta(hours=1)


def fold(decode: Any, decide: Any, events: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    """Feed ``events`` (of one run, or keyless) in order; return the samples and last state."""
    state, samples = None, []
    for event in events:
        outcome = decide(decode(orjson.dumps(event)), state, T, None, True)
        samples += [s.to_dict() for s in outcome.samples]
        state = outcome.new_state or state
    return samples, state


def test_a_completed_step_is_an_outcome_with_its_duration() -> None:
    events = Simulator(seed=1).sa_run(T, plan_id="plan-7", steps=1)
    step = [e for e in events if e["event_type"].startswith("SAStep")]
    samples, state = fold(decode_sa_event, decide_sa, step)
    (sample,) = samples
    assert sample["sample_family"] == "pipeline_outcome"
    assert sample["input"] == {
        "pipeline_id": events[0]["sa_id"],
        "stage_id": step[0]["payload"]["step_id"],
        "stage_config": {"agent_role": "executor"},
        "source": "sa_step",
    }
    assert sample["output"] == {"status": "completed", "duration_ms": 1000, "result": {}}
    assert (sample["feedback"]["quality_label"], sample["meta"]["quality_score"]) == ("good", 1.0)
    assert sample["meta"]["id_refs"] == {"plan_id": "plan-7"}
    assert state.closed == "completed"


def test_a_failed_step_is_poor_and_keeps_its_error() -> None:
    events = Simulator(seed=2).sa_run(T, steps=1, fail_last=True)
    samples, _ = fold(decode_sa_event, decide_sa, events)
    (sample,) = samples
    assert sample["output"]["status"] == "failed"
    assert sample["output"]["error_info"] == "tool timed out"
    assert sample["feedback"]["quality_label"] == "poor"


def test_sa_events_other_than_steps_yield_nothing() -> None:
    events = Simulator(seed=3).sa_run(T, steps=0)
    assert [e["event_type"] for e in events] == ["SAInitialized", "SAPlanEvaluated", "SACompleted"]
    assert fold(decode_sa_event, decide_sa, events) == ([], None)


def test_a_step_end_without_its_start_has_no_duration() -> None:
    events = Simulator(seed=4).sa_run(T, steps=1)
    (sample,), _ = fold(decode_sa_event, decide_sa, [events[3]])
    assert "duration_ms" not in sample["output"]


@pytest.mark.parametrize(
    ("status", "label"), [("completed", "good"), ("failed", "poor"), ("cancelled", "acceptable")]
)
def test_an_execution_that_ends_is_an_outcome(status: str, label: str) -> None:
    events = Simulator(seed=5).execution(T, status=status, seconds=2.5)
    (sample,), state = fold(decode_execution, decide_execution, events)
    assert sample["input"]["pipeline_id"] == events[0]["execution_id"]
    assert sample["input"]["stage_id"] == "code_search"
    assert sample["output"]["status"] == status
    assert sample["output"]["duration_ms"] == 2500
    assert sample["feedback"]["quality_label"] == label
    assert state.closed == status


EXECUTION_ID = "4d5e6f70-8a9b-4c0d-9e1f-2a3b4c5d6e7f"


def official_execution(status: str, seconds: float, **payload: Any) -> dict[str, Any]:
    """Return a runtime execution event with what the official schema defines (the payload
    open), ``seconds`` after T."""
    return {
        "event_id": f"5e6f7a8b-9c0d-4e1f-8a2b-{int(seconds * 1000):012d}",
        "event_type": f"execution_{status}",
        "event_family": "runtime_execution",
        "timestamp": (T + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z"),
        "execution_id": EXECUTION_ID,
        "executor_kind": "llm",
        "executor_role": "planner",
        "status": status,
        **({"payload": payload} if payload else {}),
    }


def test_an_execution_reports_its_duration_tokens_and_error_into_the_sample_and_export(
    mplp_schemas: Path,
) -> None:
    """A reported ``payload.duration_ms`` wins over the time from the start; ``token_usage``
    and ``error_info`` are read; the mplp-common export carries the duration and tokens."""
    name = "events/mplp-runtime-execution-event.schema.json"
    validator = Draft7Validator(official(mplp_schemas, name), format_checker=format_checker())
    usage = {"prompt_tokens": 1200, "completion_tokens": 300, "by_agent": {"planner": 1500}}
    error = {"code": "RATE_LIMIT", "message": "429 from the model"}
    events = [
        official_execution("running", 0),
        official_execution("failed", 4, duration_ms=3250, token_usage=usage, error_info=error),
    ]
    for event in events:
        assert [e.message for e in validator.iter_errors(event)] == []
    (sample,), _ = fold(decode_execution, decide_execution, events)
    assert sample["output"] == {
        "status": "failed",
        "duration_ms": 3250,  # reported, not the 4000 between the events
        "token_usage": {
            "total_tokens": 1500,
            "prompt_tokens": 1200,
            "completion_tokens": 300,
            "by_agent": [{"agent_id": "planner", "tokens": 1500}],
        },
        "error_info": error,
    }
    owned = LearningSample.model_validate(sample)
    owned = owned.model_copy(update={"meta": owned.meta.model_copy(update={"project_id": P})})
    record = common_record(owned)
    assert record is not None
    assert (record["execution_time_ms"], record["token_usage"]["total_tokens"]) == (3250, 1500)
    assert record["error_info"] == {
        "error_code": "RATE_LIMIT",
        "error_message": "429 from the model",
    }
    assert record["success_flag"] is False
    assert [e.message for e in common_validator().iter_errors(record)] == []
    measured = [official_execution("running", 0), official_execution("completed", 2.5)]
    (timed,), _ = fold(decode_execution, decide_execution, measured)
    assert timed["output"] == {"status": "completed", "duration_ms": 2500}  # from the start
    bad = [official_execution("completed", 1, duration_ms=-5, token_usage={"total_tokens": "x"})]
    (unread,), _ = fold(decode_execution, decide_execution, bad)
    assert unread["output"] == {"status": "completed"}  # nothing usable reported, no start


def test_a_step_end_reports_its_error_info_and_tokens_too() -> None:
    events = Simulator(seed=9).sa_run(T, steps=1)
    end = events[3]
    end["payload"] |= {"error_info": "quota", "token_usage": {"total_tokens": 90}}
    (sample,), _ = fold(decode_sa_event, decide_sa, [events[2], end])
    assert (sample["output"]["error_info"], sample["output"]["token_usage"]) == (
        "quota",
        {"total_tokens": 90},
    )
    assert sample["output"]["duration_ms"] == 1000


def test_a_redelivered_end_and_a_late_event_make_no_second_sample() -> None:
    events = Simulator(seed=6).execution(T)
    samples, state = fold(decode_execution, decide_execution, [*events, events[1]])
    assert len(samples) == 1
    late = {**events[0], "event_id": Simulator(seed=7).uuid()}
    outcome = decide_execution(decode_execution(orjson.dumps(late)), state, T, None, True)
    assert outcome.samples == []
    assert outcome.new_state.late_events == 1


def test_a_quiet_run_is_dropped_without_a_sample() -> None:
    _, state = fold(decode_execution, decide_execution, Simulator(seed=8).execution(T)[:1])
    expire = run_expiry(TIMEOUT)
    assert expire(state, T + TIMEOUT - timedelta(seconds=1)) is None
    gone = expire(state, T + TIMEOUT)
    assert gone is not None
    assert (gone.close, gone.samples) == (True, [])


def test_an_execution_of_another_family_is_refused_by_name() -> None:
    event = {**Simulator(seed=9).execution(T)[0], "event_family": "cost_budget"}
    with pytest.raises(InvalidEvent) as info:
        decode_execution(orjson.dumps(event))
    assert info.value.reason == "unknown_event_type"


@pytest.mark.parametrize(
    ("name", "decode", "decide"),
    [
        ("events/mplp-sa-event.schema.json", decode_sa_event, decide_sa),
        ("events/mplp-runtime-execution-event.schema.json", decode_execution, decide_execution),
    ],
)
def test_events_generated_from_the_official_schemas_are_never_schema_violations(
    mplp_schemas: Path, name: str, decode: Any, decide: Any
) -> None:
    def check(generated: dict[str, Any], _uuid: str) -> str:
        decoded = decode(json.dumps(generated).encode())
        outcome = decide(decoded, None, T, None, True)
        for sample in outcome.samples:
            assert sample.sample_family == "pipeline_outcome"
        if outcome.new_state is not None:
            RunState.from_table(outcome.new_state.to_table())
        return str(decoded.event_type)

    seen = generated_from(official(mplp_schemas, name), check, name)
    assert sum(seen.values()) >= MAX_EXAMPLES // 2


# --- through the worker --------------------------------------------------------------------


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[RunningWorker]:
    async with running_worker(tmp_path, T) as built:
        yield built


async def test_the_worker_turns_steps_and_executions_into_outcomes(
    worker: RunningWorker,
) -> None:
    runtime, mocks, feed, clock = worker
    sim, topics, n = Simulator(seed=10), runtime.settings.topics, runtime.settings.topics.partitions
    sa = sim.sa_run(T, steps=2, fail_last=True)
    key = sa[0]["sa_id"]
    values = [orjson.dumps(e) for e in sa]
    await feed.put(
        "runs", topics.name("sa_events"), *values, key=key.encode(), partition=partition_of(key, n)
    )
    execution = sim.execution(T, status="cancelled")
    key = execution[0]["execution_id"]
    values = [orjson.dumps(e) for e in execution]
    await feed.put(
        "runs",
        topics.name("runtime_executions"),
        *values,
        key=key.encode(),
        partition=partition_of(key, n),
    )
    sent = [orjson.loads(c.kwargs["value"]) for c in mocks["samples"].await_args_list]
    assert [(s["input"]["source"], s["output"]["status"]) for s in sent] == [
        ("sa_step", "completed"),
        ("sa_step", "failed"),
        ("runtime_execution", "cancelled"),
    ]
    assert all(s["output"]["duration_ms"] >= 1000 for s in sent)
    assert mocks["dlq"].await_count == 0
    held = run_key("execution", key)
    assert held in runtime.tables.runs
    clock.now = T + TIMEOUT + timedelta(minutes=2)
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition_of(key, n))
    assert held not in runtime.tables.runs


def test_steps_of_two_agents_with_the_same_step_id_are_two_runs() -> None:
    """Step ids need not be unique across SAs (``step-1`` in each): a step is keyed by its SA
    and its id, so the second agent's step is not taken for a redelivery of the first's."""
    sim = Simulator(seed=11)
    first, second = sim.sa_run(T, steps=1), sim.sa_run(T, steps=1)
    for run in (first, second):
        for event in run:
            if "payload" in event and "step_id" in event["payload"]:
                event["payload"]["step_id"] = "step-1"
    route = sa_route()
    keys = {route.key(decode_sa_event(orjson.dumps(run[3]))) for run in (first, second)}
    assert len(keys) == 2
    assert all(key is not None and key.startswith("run:step:") for key in keys)


# --- pipeline stages of no plan: official stage events alone ---------------------------------

PIPELINE_ID = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"


def official_stage_event(status: str, seconds: float, n: int = 0, **payload: Any) -> dict[str, Any]:
    """Return a pipeline stage event with only what the official schema defines (no plan)."""
    return {
        "event_id": f"9a8b7c6d-5e4f-4a3b-9c2d-{n:06d}{int(seconds):06d}",
        "event_type": f"pipeline_stage_{status}",
        "event_family": "pipeline_stage",
        "timestamp": (T + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z"),
        "pipeline_id": PIPELINE_ID,
        "stage_id": "analyze",
        "stage_name": "Analyze",
        "stage_status": status,
        "stage_order": 1,
        **({"payload": payload} if payload else {}),
    }


def decide_stage(event: Any, state: Any, now: datetime, parked: Any, settled: bool) -> Any:
    return decide_stage_run(event, state, now)


def test_a_stage_of_no_plan_lasts_from_its_running_event_and_may_run_again(
    mplp_schemas: Path,
) -> None:
    name = "events/mplp-pipeline-stage-event.schema.json"
    validator = Draft7Validator(official(mplp_schemas, name), format_checker=format_checker())
    events = [
        official_stage_event("pending", 0),
        official_stage_event("running", 5),
        official_stage_event("failed", 65),
        official_stage_event("running", 70, n=1),
        official_stage_event("completed", 100, n=1),
        official_stage_event("completed", 100, n=1),  # redelivered
    ]
    for event in events:
        assert [e.message for e in validator.iter_errors(event)] == []
    key = stage_key(decode_stage(orjson.dumps(events[1])))
    assert key == f"run:stage:{PIPELINE_ID}:{canonical_id('analyze')}"
    samples, state = fold(decode_stage, decide_stage, events)
    failed, completed = samples
    assert failed["output"] == {
        "result": {"stage": "analyze", "stage_name": "Analyze", "status": "failed"},
        "status": "failed",
        "duration_ms": 60000,
    }
    assert completed["output"]["duration_ms"] == 30000  # the retry, from its own start
    assert completed["input"] == {
        "pipeline_id": PIPELINE_ID,
        "stage_id": "analyze",
        "pipeline_path": ["analyze"],
    }
    assert [s["feedback"]["quality_label"] for s in samples] == ["poor", "good"]
    assert (state.kind, state.closed, state.started_at) == ("stage", "completed", None)
    assert RunState.from_table(state.to_table()) == state
    reported = [official_stage_event("running", 5), official_stage_event("completed", 9, n=2)]
    reported[1]["payload"] = {"duration_ms": 1234}
    (sample,), _ = fold(decode_stage, decide_stage, reported)
    assert sample["output"]["duration_ms"] == 1234  # reported wins
    (alone,), _ = fold(decode_stage, decide_stage, [official_stage_event("skipped", 3)])
    assert "duration_ms" not in alone["output"]  # no start seen
    assert alone["output"]["status"] == "skipped"


def test_stage_ids_outside_the_collected_ones_are_noted_but_make_no_sample() -> None:
    events = [official_stage_event("running", 1), official_stage_event("completed", 2)]
    state = None
    for event in events:
        outcome = decide_stage_run(
            decode_stage(orjson.dumps(event)), state, T, frozenset({"execute"})
        )
        assert outcome.samples == []
        state = outcome.new_state or state
    assert state is not None
    assert state.closed == "completed"


async def test_the_worker_times_a_stage_of_no_plan_from_its_running_event(
    worker: RunningWorker,
) -> None:
    runtime, mocks, feed, clock = worker
    # The wall clock: a stage's samples wait for an end-offset round started after it was
    # read (the corrections input and the consent view), which a stopped clock never sees.
    clock.now = None
    topics = runtime.settings.topics
    events = [official_stage_event("running", 5), official_stage_event("completed", 47)]
    values = [orjson.dumps(e) for e in events]
    partition = partition_of(PIPELINE_ID, topics.partitions)
    await feed.put(
        "outcomes",
        topics.name("pipeline_stage"),
        *values,
        key=PIPELINE_ID.encode(),
        partition=partition,
    )
    sent = [orjson.loads(c.kwargs["value"]) for c in mocks["samples"].await_args_list]
    (sample,) = sent
    assert (sample["output"]["status"], sample["output"]["duration_ms"]) == ("completed", 42000)
    assert f"run:stage:{PIPELINE_ID}:{canonical_id('analyze')}" in runtime.tables.runs
    assert mocks["dlq"].await_count == 0
