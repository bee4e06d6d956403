"""Issue 44 on a real broker: a runtime that sends only what the official MPLP event schemas
define gets its samples. A graph known only by its deltas, an impact analysis naming only its
delta, stages of a pipeline naming no plan (one skipped, one timed from its ``running``
event), a runtime execution reporting its duration, tokens and error, two bare Plans of one
context and objective each executed (a plan_optimization; the later one's tokens from a
cost_budget event) and an IntentEvent of the first one (its intent_resolution's intent) each
make the sample the unit tests describe, valid against the official learning schemas;
nothing dead-lettered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import AvroSampleCodec, decode_any
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic
from learnstream.streams.sim.simulate import Simulator
from tests.support.mplp_learning import learning_validators, mplp_errors
from tests.unit.test_graphs import T, schema_only_updates
from tests.unit.test_impacts import schema_only_analysis
from tests.unit.test_official_facts import (
    INTENT_ID,
    INTENT_TEXT,
    PLANS,
    bare_plan,
    cost_event,
    decision,
    intent_event,
    stage,
)
from tests.unit.test_runs import official_execution, official_stage_event

pytestmark = pytest.mark.integration

#: Samples the first records below make: 2 graph_evolution, 1 error_correction,
#: 1 delta_impact, 3 stage outcomes and 1 execution outcome.
FIRST = 8
#: Then the bare plans' records: 2 execute outcomes, 1 plan_optimization, 1 confirm_decision
#: and 1 intent_resolution.
EXPECTED = FIRST + 5


async def _publish(bootstrap: str, topics: TopicSettings, embedded: bool, schemas: Path) -> Any:
    sim = Simulator(seed=44, pii_ratio=0.0)
    snap = sim.plan(T)
    delta = sim.delta(snap, T)
    analysis = schema_only_analysis(delta)
    stages = [
        official_stage_event("running", 5),
        official_stage_event("completed", 47),
        official_stage_event("skipped", 50, n=1) | {"stage_id": "review"},
        official_stage_event("running", 60, n=2) | {"stage_id": "deploy"},
        official_stage_event("failed", 61, n=2, duration_ms=700) | {"stage_id": "deploy"},
    ]
    usage = {"prompt_tokens": 1200, "completion_tokens": 300}
    execution = [
        official_execution("running", 0),
        official_execution("completed", 4, duration_ms=3250, token_usage=usage),
    ]
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        _publish_bare_plans(pub)
        pub.publish_plan(snap)
        pub.publish_delta(delta)
        pub.publish_core_event(analysis, key=snap["plan"]["plan_id"])  # the delta's partition
        for update in schema_only_updates(schemas):
            pub.publish_graph_update(update)
        for event in stages:
            pub.publish_stage(event)
        for event in execution:
            pub.publish_execution(event)
    assert (pub.stats.dropped, pub.stats.failed) == (0, 0)
    return delta, analysis


def _publish_bare_plans(pub: RuntimePublisher) -> None:
    """Two bare Plans of one context and objective, each with its IntentEvent (one intent),
    the second with a cost_budget event; their stages come later (``_run_bare_plans``)."""
    for n in range(2):
        pub.publish_core_event(intent_event(1 + n, 0, PLANS[n]))
        pub.publish_plan(bare_plan(PLANS[n]))
    pub.publish_core_event(cost_event(30, 20, plan_id=PLANS[1], total_tokens=1200))


async def _run_bare_plans(bootstrap: str, topics: TopicSettings, embedded: bool) -> None:
    """Execute both bare plans (the second faster) and approve the first, once the worker
    has long read their IntentEvents and the cost: a decision or stage does not wait for
    core events (docs/architecture.md §5, "Intents and costs")."""
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        for n, duration in enumerate((9000, 3000)):
            ended = stage(PLANS[n], "completed", 10 + 20 * n, 40 + n)
            ended["payload"] |= {"duration_ms": duration}
            pub.publish_stage(ended)
        pub.publish_decision(decision(PLANS[0]))
    assert (pub.stats.dropped, pub.stats.failed) == (0, 0)


async def _samples(bootstrap: str, topic: str, expected: int = EXPECTED) -> list[dict[str, Any]]:
    """Re-read the samples topic until ``expected`` samples are there, or 90 s passed."""
    samples: list[dict[str, Any]] = []
    for _ in range(90):
        samples = [decode_any(r.value) for r in await read_topic(bootstrap, topic)]
        if len({s["sample_id"] for s in samples}) >= expected:
            break
        await asyncio.sleep(1.0)
    return samples


async def test_schema_only_events_make_their_samples(
    broker: Any, start_worker: Any, namespace: str, mplp_schemas: Path
) -> None:
    topics = TopicSettings(prefix=namespace)
    start_worker()
    delta, analysis = await _publish(broker.bootstrap, topics, broker.embedded, mplp_schemas)
    await _samples(broker.bootstrap, topics.name("samples"), FIRST)
    await _run_bare_plans(broker.bootstrap, topics, broker.embedded)
    samples = await _samples(broker.bootstrap, topics.name("samples"))
    by_family: dict[str, list[dict[str, Any]]] = {}
    for sample in {s["sample_id"]: s for s in samples}.values():
        by_family.setdefault(sample["sample_family"], []).append(sample)

    graphs = sorted(by_family["graph_evolution"], key=lambda s: s["meta"]["event_time"])
    assert [g["state"]["node_count_before"] for g in graphs] == [0, 10]
    assert {g["state"]["size_counted_since"] for g in graphs} == {"2026-03-01T12:00:00Z"}

    (impact,) = by_family["delta_impact"]
    assert impact["input"]["delta_id"] == delta["payload"]["delta_id"]
    assert impact["output"]["actual_impact_summary"] == "Login service redeployed"
    assert impact["meta"]["source_event_ids"][0] == analysis["event_id"]

    outcomes = {s["input"]["stage_id"]: s["output"] for s in by_family["pipeline_outcome"]}
    assert outcomes["analyze"]["duration_ms"] == 42000  # from its running event
    assert outcomes["review"]["status"] == "skipped"
    assert (outcomes["deploy"]["status"], outcomes["deploy"]["duration_ms"]) == ("failed", 700)
    assert outcomes["planner"]["duration_ms"] == 3250  # the execution, by its role
    assert outcomes["planner"]["token_usage"]["total_tokens"] == 1500

    (optimization,) = by_family["plan_optimization"]
    assert optimization["input"]["intent_id"] == INTENT_ID  # the first plan's IntentEvent
    assert optimization["input"]["plan"]["plan_id"] == PLANS[0]
    assert optimization["output"]["plan"]["plan_id"] == PLANS[1]
    assert optimization["output"]["execution"]["token_usage"] == {"total_tokens": 1200}
    assert optimization["output"]["improvement"] == {"duration_ms": 0.6667}
    (resolution,) = by_family["intent_resolution"]
    assert resolution["input"]["intent_id"] == INTENT_ID
    assert resolution["input"]["raw_request_summary"] == INTENT_TEXT
    assert resolution["output"]["final_intent_summary"] == bare_plan()["objective"]

    validators = learning_validators(mplp_schemas / "learning")
    for sample in samples:
        assert mplp_errors(validators, sample) == [], sample["sample_family"]
        assert validate_sample(sample) == [], sample["sample_family"]
        assert decode_any(AvroSampleCodec().encode(sample)) == sample
    dead = await read_topic(broker.bootstrap, topics.name("dlq"))
    assert [dict(r.headers)["reason"] for r in dead] == []
