"""The kill -9 workload with every MPLP stream (``build_workload(..., sessions=...)``): what
the verifier expects is what the worker emits, and nothing goes to the DLQ."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson

from learnstream.streams.sim.workload import build_workload, verify
from tests.support.outputs import AGENT_OF
from tests.unit.test_agents import harness

#: Agents of the inputs that join a key space (agents/joins/window_inputs.py) and of the rest.
AGENTS = AGENT_OF | {
    "map_events": "map_sessions",
    "sa_events": "runs",
    "runtime_executions": "runs",
    "graph_updates": "graphs",
    "core_events": "core_events",
}


async def test_every_stream_of_the_workload_yields_what_the_verifier_expects(
    tmp_path: Path,
) -> None:
    workload = build_workload(400, seed=17, sessions=1.0)
    topics = Counter(record.topic for record in workload.records)
    expected = Counter(family for family, _ in workload.expected.values())
    for topic in ("map_events", "sa_events", "runtime_executions", "core_events"):
        assert topics[topic] > 0, topic  # else this test proves nothing of them
    assert expected["delta_impact"] > 0
    core_families = Counter(
        orjson.loads(r.value)["event_family"] for r in workload.records if r.topic == "core_events"
    )
    async with harness(tmp_path) as h:
        names = h.runtime.settings.topics
        for record in workload.records:
            topic = names.name(record.topic)
            await h.feed.put(AGENTS[record.topic], topic, record.value, key=record.key)
        samples = h.sent()
        assert h.dlq.await_count == 0
        core = "learnstream_core_events_total"
        for family in ("intent", "cost_budget"):
            published = core_families[family]
            assert h.metric(core, family=family, use="joined") == published
        assert h.metric(core, family="impact_analysis", use="joined") == expected["delta_impact"]
    verdict = verify(workload.expected, samples)
    assert Counter(verdict.missing.values()) == Counter()
    assert verdict.wrong == {}
    assert verdict.duplicated == {}
    sent = Counter(s["sample_family"] for s in samples)
    assert {family: sent[family] for family in expected} == dict(expected)
