"""Every MPLP collection point on a real broker (issue 28's "done when"): one stream of the
official event shapes yields samples of all seven families (the six of seed 004 §7 and
plan_optimization), each valid against the official learning schemas, in JSON and Avro.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic
from learnstream.streams.join.graphs import CREATED
from learnstream.streams.sim.simulate import Simulator
from tests.support.mplp_learning import learning_validators, mplp_errors

pytestmark = pytest.mark.integration

#: The six families of seed 004 §7 and seed 000's plan_optimization.
FAMILIES = {
    "intent_resolution",
    "delta_impact",
    "pipeline_outcome",
    "confirm_decision",
    "graph_evolution",
    "multi_agent_coordination",
    "plan_optimization",
}


def _stage(sim: Simulator, snap: dict[str, Any], when: datetime, ms: int) -> dict[str, Any]:
    event = sim.stage(snap, "completed", when)
    event["payload"]["duration_ms"] = ms
    return event


async def _publish(bootstrap: str, topics: TopicSettings, embedded: bool) -> None:
    """Publish one stream with a trigger of every collection point."""
    sim, t0 = Simulator(seed=28, pii_ratio=0.0), datetime.now(UTC)
    first = sim.plan(t0)
    replan = sim.plan(t0, project_id=first["project_id"], intent=first["intent"])
    corrected = sim.plan(t0, project_id=first["project_id"])
    delta = sim.delta(corrected, t0 + timedelta(seconds=1))
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        for snap in (first, replan, corrected):
            pub.publish_plan(snap)
        pub.publish_decision(sim.decision(first, True, t0))  # intent_resolution, confirm
        for event in sim.sa_run(t0, plan_id=first["plan"]["plan_id"], steps=1):
            pub.publish_sa_event(event)  # plan_generation, and a step's pipeline_outcome
        pub.publish_delta(delta)  # error_correction
        pub.publish_core_event(sim.impact_analysis(delta, t0 + timedelta(seconds=2)))
        # two executions of one intent, the later one faster: plan_optimization
        pub.publish_stage(_stage(sim, first, t0 + timedelta(minutes=1), 9000))
        pub.publish_stage(_stage(sim, replan, t0 + timedelta(minutes=5), 2000))
        for event in sim.map_session(t0, outcome="success"):
            pub.publish_map_event(event)
        graph = sim.graph_updates(t0, [("node_add", 3, 0), ("edge_add", 0, 2)])
        graph[0]["event_type"] = CREATED  # a new graph: its size before is exact, 0 (else counted)
        for event in graph:
            pub.publish_graph_update(event)
        for event in sim.execution(t0, status="failed"):
            pub.publish_execution(event)
    assert pub.stats.dropped == 0
    assert pub.stats.failed == 0


def _intent_sources(samples: list[dict[str, Any]]) -> set[str]:
    return {s["feedback"]["source"] for s in samples if s["sample_family"] == "intent_resolution"}


async def _samples(bootstrap: str, topic: str, wanted: set[str]) -> list[dict[str, Any]]:
    """Re-read the samples topic until every ``wanted`` family is there, and both
    intent_resolution samples (a decision's may come after the plan evaluation's), or 90 s
    passed."""
    samples: list[dict[str, Any]] = []
    for _ in range(90):
        samples = [decode_any(r.value) for r in await read_topic(bootstrap, topic)]
        families = {s["sample_family"] for s in samples}
        if wanted <= families and _intent_sources(samples) == {"user", "system"}:
            break
        await asyncio.sleep(1.0)
    return samples


@pytest.mark.parametrize("sample_format", ["json", "avro"])
async def test_every_collection_point_yields_its_family_valid_in_both_formats(
    broker: Any, start_worker: Any, namespace: str, mplp_schemas: Path, sample_format: str
) -> None:
    topics = TopicSettings(prefix=namespace)
    start_worker(LEARNSTREAM_SAMPLE_FORMAT=sample_format)
    await _publish(broker.bootstrap, topics, broker.embedded)
    samples = await _samples(broker.bootstrap, topics.name("samples"), FAMILIES)
    families = Counter(s["sample_family"] for s in samples)
    assert set(families) >= FAMILIES, families
    assert _intent_sources(samples) == {
        "user",
        "system",
    }  # the decision's, and the plan evaluation's
    validators = learning_validators(mplp_schemas / "learning")
    for sample in samples:
        assert mplp_errors(validators, sample) == [], sample["sample_family"]
        assert validate_sample(sample) == [], sample["sample_family"]
    dead = await read_topic(broker.bootstrap, topics.name("dlq"))
    assert [dict(r.headers)["reason"] for r in dead] == []
