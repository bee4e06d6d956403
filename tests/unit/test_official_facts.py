"""Issue 44: what an official IntentEvent and CostAndBudgetEvent give a plan
(streams/state/facts.py), and plan_optimization from bare official Plans.

Every input here is what the official MPLP v1.0 schemas define (bare Plans, core events,
pipeline stage events naming their plan only in the payload); the join unit first, pure,
then the worker through ``test_context``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft7Validator

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.routes import routes
from learnstream.streams.join.unit import MISSING, KeyJoin, Step
from learnstream.streams.mplp.core_events import (
    core_use,
    cost_stated,
    decode_core_event,
    intent_stated,
)
from learnstream.streams.mplp.decode import RecordOrigin, decode_plan
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.samples.executions import Execution, execution_of
from learnstream.streams.samples.ids import objective_intent_id
from learnstream.streams.samples.pairs import pair_sample
from learnstream.streams.samples.replans import IntentPlans, match_execution
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.state.plan import PlanState, merge_snapshot
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.mplp_learning import format_checker, learning_validators, mplp_errors
from tests.support.worker import RunningWorker, running_worker, sent_samples
from tests.unit.test_mplp_inputs import official

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOW = T + timedelta(hours=1)
GRACE = timedelta(minutes=2)
TOPICS = TopicSettings()
ROUTES = routes(TOPICS)
SETTLED = lambda _entry: True  # noqa: E731  (the corrections input is read past everything)
PROJECT = "7d1c0e52-3b8a-4f6e-9d2c-1a0b9c8d7e6f"
CONTEXT = "5b0e8a4c-2d6f-4e1a-8c3b-9f7d6e5c4b3a"
PLANS = ("3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a01", "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a02")
PIPELINE = "6c7d8e9f-0a1b-4c2d-9e3f-4a5b6c7d8e9f"
INTENT_ID = "2e4f6a8c-0b1d-4e3f-a5b7-c9d1e3f5a7b9"
INTENT_TEXT = "Make the orders page load faster"


def at(minutes: float) -> str:
    return (T + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def uuid_of(n: int, tag: int = 0) -> str:
    return f"0e1d2c3b-4a59-4867-8f6e-{tag:04d}{n:08d}"


def bare_plan(plan_id: str = PLANS[0], objective: str = "Cache the orders API") -> dict[str, Any]:
    """Return an official Plan, bare (no snapshot wrapper, no intent, no project)."""
    return {
        "meta": {
            "protocol_version": "1.0.0",
            "schema_version": "1.0.0",
            "updated_at": "2026-03-01T11:00:00Z",
        },
        "plan_id": plan_id,
        "context_id": CONTEXT,
        "title": "Orders cache",
        "objective": objective,
        "status": "approved",
        "steps": [{"step_id": uuid_of(1, 9), "description": "Add Redis", "status": "pending"}],
    }


def core(family: str, n: int, minutes: float, **payload: Any) -> dict[str, Any]:
    """Return an official core event of ``family`` (``events/mplp-event-core.schema.json``)."""
    return {
        "event_id": uuid_of(n, 1),
        "event_type": f"{family}_recorded",
        "event_family": family,
        "timestamp": at(minutes),
        "project_id": PROJECT,
        "payload": payload,
    }


def intent_event(n: int = 1, minutes: float = 0, plan_id: str = PLANS[0], **more: Any) -> Any:
    payload = {"plan_id": plan_id, "intent_id": INTENT_ID, "intent_text": INTENT_TEXT} | more
    return core("intent", n, minutes, **payload)


def cost_event(n: int, minutes: float, plan_id: str = PLANS[0], **usage: Any) -> dict[str, Any]:
    return core("cost_budget", n, minutes, plan_id=plan_id, token_usage=usage)


def decision(plan_id: str = PLANS[0], minutes: float = 30) -> dict[str, Any]:
    return {
        "event_id": uuid_of(7, 2),
        "event_family": "pipeline_stage",
        "event_type": "plan_approved",
        "timestamp": at(minutes),
        "project_id": PROJECT,
        "payload": {"plan_id": plan_id, "confirm_id": uuid_of(7, 3), "decided_by_role": "lead"},
    }


def stage(plan_id: str, status: str, minutes: float, n: int) -> dict[str, Any]:
    """Return the official ``execute`` stage event of a plan (its plan in the payload only)."""
    return {
        "event_id": uuid_of(n, 4),
        "event_type": f"pipeline_stage_{status}",
        "event_family": "pipeline_stage",
        "timestamp": at(minutes),
        "project_id": PROJECT,
        "pipeline_id": PIPELINE,
        "stage_id": "execute",
        "stage_status": status,
        "payload": {"plan_id": plan_id},
    }


def schema_errors(mplp_schemas: Path, name: str, event: dict[str, Any]) -> list[str]:
    schema = official(mplp_schemas, name)
    validator = Draft7Validator(schema, format_checker=format_checker())
    return [e.message for e in validator.iter_errors(event)]


class Key:
    """One plan's join unit, fed records the way the agents hand them over."""

    def __init__(self, plan: dict[str, Any] | None = None) -> None:
        self.value = plan or bare_plan()  # a bare Plan, or a snapshot wrapping one
        self.plan: dict[str, Any] = self.value.get("plan", self.value)
        self.join: KeyJoin[Any] = KeyJoin(None, [], ROUTES, GRACE)
        self.offset = 0

    def put(self, field: str, body: dict[str, Any], now: datetime = NOW) -> Step[Any]:
        topic, raw = TOPICS.name(field), orjson.dumps(body)
        self.offset += 1
        event = ROUTES[topic].decode(raw, RecordOrigin(topic, 0, self.offset, now), None)
        entry = ParkedEvent(
            source=ROUTES[topic].source,
            topic=topic,
            partition=0,
            offset=self.offset,
            key=self.plan["plan_id"],
            raw=raw.decode(),
            event_time=event.timestamp,
            parked_at=now,
        )
        return self.join.on_event(event, entry, now)

    def plan_comes(self, now: datetime = NOW) -> Step[Any]:
        snapshot = decode_plan(orjson.dumps(self.value), InputNotes())
        return self.join.on_state(lambda s: merge_snapshot(s, snapshot, T), now, SETTLED)

    @property
    def state(self) -> PlanState:
        assert isinstance(self.join.state, PlanState)
        return self.join.state


def resolution(steps: list[Step[Any]]) -> dict[str, Any]:
    (sample,) = [
        s.to_dict()
        for step in steps
        for s in step.samples
        if s.sample_family == "intent_resolution"
    ]
    return sample


# --- decoding -------------------------------------------------------------------------------


def test_intent_and_cost_events_are_official_core_events_read_by_their_plan(
    mplp_schemas: Path,
) -> None:
    name = "events/mplp-event-core.schema.json"
    bare = core("intent", 2, 0, plan_id=PLANS[0], text="Ship it")  # no intent id: the event's
    costs = [cost_event(3, 1, total_tokens=900), cost_event(4, 1, prompt_tokens=5)]
    for event in (intent_event(), bare, *costs):
        assert schema_errors(mplp_schemas, name, event) == []
    stated = intent_stated(decode_core_event(orjson.dumps(intent_event())))
    assert stated is not None
    assert (stated.plan_id, stated.intent_id, stated.text) == (PLANS[0], INTENT_ID, INTENT_TEXT)
    own = intent_stated(decode_core_event(orjson.dumps(bare)))
    assert own is not None
    assert (own.intent_id, own.text) == (bare["event_id"], "Ship it")
    flat = decode_core_event(orjson.dumps(core("cost_budget", 5, 1, plan_id="p", tokens=40)))
    assert cost_stated(flat) is not None
    assert cost_stated(flat).total_tokens == 40  # type: ignore[union-attr]
    split = cost_event(6, 1, prompt_tokens=30, completion_tokens=12)
    assert cost_stated(decode_core_event(orjson.dumps(split))).total_tokens == 42  # type: ignore[union-attr]
    unnamed = core("intent", 7, 0, intent_id=INTENT_ID, intent_text=INTENT_TEXT)
    uses = [core_use(decode_core_event(orjson.dumps(e))) for e in (unnamed, costs[1])]
    assert uses == ["incomplete", "incomplete"]  # no plan; prompt tokens alone are no total


# --- point 1: IntentEvents joined into intent_resolution -------------------------------------


def test_an_intent_before_its_plan_parks_and_the_decision_carries_it() -> None:
    key = Key()
    parked = key.put("core_events", intent_event())
    assert (parked.samples, parked.state, len(parked.parked)) == ([], None, 1)
    waiting = key.put("plan_approved", decision())  # its plan is not known either
    done = key.plan_comes()
    assert len(done.released) == 2  # intent first (earlier in event time), then the decision
    sample = resolution([waiting, done])
    assert sample["input"]["intent_id"] == INTENT_ID
    assert sample["input"]["raw_request_summary"] == INTENT_TEXT
    assert sample["input"]["intent_text"] == INTENT_TEXT
    assert sample["output"]["final_intent_summary"] == "Cache the orders API"
    assert key.state.intent is not None


def test_an_intent_after_its_plan_is_recorded_and_the_decision_carries_it() -> None:
    key = Key()
    key.plan_comes()
    recorded = key.put("core_events", intent_event())
    assert (recorded.samples, recorded.parked) == ([], [])
    assert recorded.state is not None
    assert recorded.state.intent.intent_id == INTENT_ID
    again = key.put("core_events", intent_event())  # redelivered: nothing changes
    assert again.state is None
    sample = resolution([key.put("plan_approved", decision())])
    assert (sample["input"]["intent_id"], sample["input"]["intent_text"]) == (
        INTENT_ID,
        INTENT_TEXT,
    )


def test_the_latest_intent_wins_and_the_snapshot_intent_comes_first() -> None:
    key = Key()
    key.plan_comes()
    key.put("core_events", intent_event(2, 5, intent_text="Clarified: page under 1 s"))
    key.put("core_events", intent_event(1, 0))  # older, read later: kept out
    sample = resolution([key.put("plan_approved", decision())])
    assert sample["input"]["intent_text"] == "Clarified: page under 1 s"
    wrapped = {"plan": bare_plan(), "intent": {"intent_id": "intent-9", "text": "From the plan"}}
    snap_key = Key(wrapped)
    snap_key.plan_comes()
    snap_key.put("core_events", intent_event())
    sample = resolution([snap_key.put("plan_approved", decision())])
    assert (sample["input"]["intent_id"], sample["input"]["intent_text"]) == (
        "intent-9",
        "From the plan",
    )


def test_an_intent_whose_plan_never_comes_is_dead_lettered_after_the_grace() -> None:
    key = Key()
    key.put("core_events", intent_event())
    assert key.join.on_tick(NOW + GRACE / 2, SETTLED).failed == []
    late = key.join.on_tick(NOW + GRACE, SETTLED)
    assert [(reason, entry.topic) for entry, reason, _ in late.failed] == [
        (MISSING, TOPICS.name("core_events"))
    ]
    assert late.samples == []


def test_an_intent_naming_no_plan_joins_nothing() -> None:
    event = decode_core_event(orjson.dumps(core("intent", 8, 0, intent_text="Anything")))
    route = ROUTES[TOPICS.name("core_events")]
    assert route.key(event) is None
    assert route.decide(event, None, NOW, None, True).samples == []


# --- point 2: tokens from cost_budget, plan_optimization from bare official Plans -----------


def executed(key: Key, start: float, end: float, n: int) -> LearningSample:
    """Run the plan's ``execute`` stage from ``start`` to ``end`` (minutes); its sample."""
    assert key.put("pipeline_stage", stage(key.plan["plan_id"], "running", start, n)).samples == []
    (sample,) = key.put(
        "pipeline_stage", stage(key.plan["plan_id"], "completed", end, n + 1)
    ).samples
    return sample


def test_a_stage_reporting_no_tokens_has_its_plans_costs_up_to_its_time() -> None:
    key = Key()
    key.put("core_events", cost_event(1, 1, prompt_tokens=300, completion_tokens=100))
    key.plan_comes()  # the cost waited for its plan
    key.put("core_events", cost_event(2, 2, total_tokens=600))
    key.put("core_events", cost_event(2, 2, total_tokens=600))  # redelivered: counted once
    key.put("core_events", cost_event(3, 50, total_tokens=7000))  # after the stage: not its
    sample = executed(key, 0, 10, 10)
    assert sample.output["token_usage"] == {"total_tokens": 1000}
    assert sample.output["duration_ms"] == 600_000  # from its running event
    assert sample.input["intent_id"] == objective_intent_id(CONTEXT, "Cache the orders API")


def execution(sample: LearningSample) -> Execution:
    written = pair_sample(sample.to_dict())
    assert written is not None
    found = execution_of(written)
    assert isinstance(found, Execution)
    return found


def test_two_bare_plans_of_one_context_and_objective_make_a_plan_optimization(
    mplp_schemas: Path,
) -> None:
    slow, fast = Key(bare_plan(PLANS[0])), Key(bare_plan(PLANS[1], " cache the ORDERS api. "))
    for plan in (slow.plan, fast.plan):
        assert schema_errors(mplp_schemas, "mplp-plan.schema.json", plan) == []
    for n, key in enumerate((slow, fast)):
        key.plan_comes()
        key.put("core_events", cost_event(20 + n, 1, plan_id=key.plan["plan_id"], tokens=4000))
    runs = [execution(executed(slow, 0, 10, 30)), execution(executed(fast, 20, 24, 40))]
    assert runs[0].intent_id == runs[1].intent_id  # one intent: they meet in pair_intents
    held: IntentPlans | None = None
    made: list[LearningSample] = []
    for found in runs:
        held, samples, reason = match_execution(held, found, NOW, 1, 0.2)
        assert reason is None
        made += samples
    (sample,) = made
    assert sample.sample_family == "plan_optimization"
    assert sample.input["plan"]["plan_id"] == PLANS[0]
    assert sample.output["plan"]["plan_id"] == PLANS[1]
    assert sample.output["improvement"] == {"duration_ms": 0.6, "tokens": 0.0}
    validators = learning_validators(mplp_schemas / "learning")
    assert mplp_errors(validators, sample.to_dict()) == []


def test_cost_events_alone_make_two_executions_comparable() -> None:
    keys = [Key(bare_plan(PLANS[0])), Key(bare_plan(PLANS[1]))]
    runs = []
    for n, (key, tokens) in enumerate(zip(keys, (5000, 2000), strict=True)):
        key.plan_comes()
        key.put(
            "core_events", cost_event(50 + n, 10 * n, plan_id=key.plan["plan_id"], tokens=tokens)
        )
        (sample,) = key.put(
            "pipeline_stage", stage(key.plan["plan_id"], "completed", 10 * n + 5, 60 + n)
        ).samples  # no running event, no duration: the tokens alone
        runs.append(execution(sample))
    assert [r.tokens for r in runs] == [5000, 2000]
    assert [r.duration_ms for r in runs] == [None, None]
    held, _, _ = match_execution(None, runs[0], NOW, 1, 0.2)
    _, samples, _ = match_execution(held, runs[1], NOW, 1, 0.2)
    (sample,) = samples
    assert sample.output["improvement"] == {"tokens": 0.6}


# --- through the worker ---------------------------------------------------------------------


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[RunningWorker]:
    async with running_worker(tmp_path, NOW) as built:
        built[3].now = None  # the wall clock: a decision settles after an end-offset round
        yield built


async def put(
    worker: RunningWorker, agent: str, field: str, body: dict[str, Any], plan: str
) -> None:
    runtime, _, feed, _ = worker
    where = {
        "key": plan.encode(),
        "partition": partition_of(plan, runtime.settings.topics.partitions),
    }
    await feed.put(agent, runtime.settings.topics.name(field), orjson.dumps(body), **where)


async def test_the_worker_joins_an_intent_event_in_either_order(worker: RunningWorker) -> None:
    mocks = worker[1]
    for n, intent_first in enumerate((True, False)):
        plan_id = PLANS[n]
        steps = [("plans", "plans", bare_plan(plan_id))]
        intent = ("core_events", "core_events", intent_event(10 + n, 0, plan_id))
        steps.insert(0 if intent_first else 1, intent)
        for agent, field, body in steps:
            await put(worker, agent, field, body, plan_id)
        await put(
            worker,
            "decisions",
            "plan_approved",
            decision(plan_id) | {"event_id": uuid_of(n, 5)},
            plan_id,
        )
    resolutions = [s for s in sent_samples(mocks) if s["sample_family"] == "intent_resolution"]
    assert len(resolutions) == len({s["sample_id"] for s in resolutions}) == 2
    for sample in resolutions:
        assert (sample["input"]["intent_id"], sample["input"]["raw_request_summary"]) == (
            INTENT_ID,
            INTENT_TEXT,
        )
    assert mocks["dlq"].await_count == 0


async def test_the_worker_pairs_two_bare_official_plans_by_context_and_objective(
    worker: RunningWorker,
) -> None:
    runtime, mocks, feed, _ = worker
    for n, (plan_id, start, end) in enumerate(((PLANS[0], 0, 10), (PLANS[1], 20, 24))):
        await put(worker, "plans", "plans", bare_plan(plan_id), plan_id)
        cost = cost_event(70 + n, start, plan_id=plan_id, total_tokens=3000 - 1000 * n)
        await put(worker, "core_events", "core_events", cost, plan_id)
        for status, minutes, m in (("running", start, 80), ("completed", end, 90)):
            await put(
                worker,
                "outcomes",
                "pipeline_stage",
                stage(plan_id, status, minutes, m + n),
                plan_id,
            )
    rekeyed = [c.kwargs for c in mocks["pair_intents"].await_args_list]
    intent = objective_intent_id(CONTEXT, "Cache the orders API")
    assert [r["key"] for r in rekeyed] == [f"{PROJECT}:{intent}".encode()] * 2
    topic = runtime.topics.pair_intents.get_topic_name()
    for record in rekeyed:
        await feed.put("replans", topic, record["value"], key=record["key"], partition=1)
    (sample,) = [s for s in sent_samples(mocks) if s["sample_family"] == "plan_optimization"]
    assert (sample["input"]["plan"]["plan_id"], sample["output"]["plan"]["plan_id"]) == PLANS
    assert sample["output"]["improvement"] == {"duration_ms": 0.6, "tokens": 0.3333}
    assert sample["input"]["execution"]["token_usage"] == {"total_tokens": 3000}
    assert mocks["dlq"].await_count == 0
