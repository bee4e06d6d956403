"""PSG graph updates (streams/join/graphs.py): a graph_evolution sample when a graph's
structure changes significantly within a window; pure, then through the worker."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft7Validator
from pydantic import ValidationError

from learnstream.streams.config.settings import GraphSettings, Settings
from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.encoding.codecs import AvroSampleCodec, decode_any
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.join.graphs import CREATED, GraphState, decider, graph_expiry
from learnstream.streams.mplp.graph_events import decode_graph_update
from learnstream.streams.sim.simulate import Simulator
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.mplp_learning import format_checker
from tests.support.worker import RunningWorker, running_worker, sent_samples
from tests.unit.test_mplp_inputs import MAX_EXAMPLES, generated_from, official

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=10)
TTL = timedelta(days=7)
DECIDE = decider(0.2, WINDOW)


def fold(events: list[dict[str, Any]], state: GraphState | None = None) -> tuple[list[Any], Any]:
    samples = []
    for event in events:
        outcome = DECIDE(decode_graph_update(orjson.dumps(event)), state, T, None, True)
        samples += [s.to_dict() for s in outcome.samples]
        state = outcome.new_state or state
    return samples, state


def created(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return ``events`` with the first saying its graph was created (its size before: 0)."""
    return [{**events[0], "event_type": CREATED}, *events[1:]]


def test_a_significant_change_is_one_sample_with_the_taxonomy_fields() -> None:
    sim = Simulator(seed=1)
    grown = created(sim.graph_updates(T, [("bulk", 10, 12)]))  # from nothing: score 1
    _, state = fold(grown)
    events = sim.graph_updates(
        T + timedelta(minutes=20),
        [("node_add", 2, 0), ("edge_add", 0, 1), ("node_delete", -1, 0), ("edge_add", 0, 2)],
        graph_id=grown[0]["graph_id"],
    )
    samples, state = fold(events, state)
    (sample,) = samples  # 2 + 1 + 1 of 22: 0.18; the fourth update makes it 0.27
    assert sample["sample_family"] == "graph_evolution"
    assert sample["input"]["trigger_event_id"] == events[0]["event_id"]
    assert sample["input"]["change_type"] == "mixed"
    assert sample["input"]["plan_id"] == events[0]["payload"]["plan_id"]
    assert sample["state"] == {"node_count_before": 10, "edge_count_before": 12}
    assert sample["output"] == {
        "nodes_added": 2,
        "nodes_removed": 1,
        "edges_added": 3,
        "edges_removed": 0,
        "topology_change_score": round(6 / 22, 4),
        "node_count_after": 11,
        "edge_count_after": 15,
        "updates": 4,
    }
    assert sample["feedback"]["quality_label"] == "acceptable"  # something was removed
    assert sample["meta"]["quality_score"] == round(5 / 6, 4)
    assert state.window is None  # a new window starts with the next update


def test_small_changes_make_no_sample_and_a_graph_untouched_for_its_ttl_is_closed() -> None:
    sim = Simulator(seed=2)
    base = created(sim.graph_updates(T, [("bulk", 50, 50)]))
    _, state = fold(base)
    small = sim.graph_updates(
        T + timedelta(minutes=20), [("node_add", 1, 0)], graph_id=base[0]["graph_id"]
    )
    samples, state = fold(small, state)
    assert samples == []
    assert (state.window is not None, state.nodes, state.touched_at) == (True, 51, T)
    expire = graph_expiry(TTL)
    assert expire(state, T + WINDOW) is None  # the window waits for the next update
    assert expire(state, T + TTL - timedelta(seconds=1)) is None  # the size is kept
    closed = expire(state, T + TTL)
    assert closed is not None
    assert (closed.close, closed.samples, closed.new_state) == (True, [], None)


def test_the_ttl_is_a_setting_no_shorter_than_the_window() -> None:
    assert GraphSettings().ttl == timedelta(days=7)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LEARNSTREAM_GRAPHS__TTL", "2h")
        assert Settings().graphs.ttl == timedelta(hours=2)
    with pytest.raises(ValidationError, match="LEARNSTREAM_GRAPHS__TTL must be at least"):
        GraphSettings(ttl=timedelta(minutes=5))


def test_removal_only_is_poor_and_a_window_older_than_its_span_starts_over() -> None:
    sim = Simulator(seed=3)
    events = created(sim.graph_updates(T, [("bulk", 20, 20)]))
    _, state = fold(events)
    later = sim.graph_updates(
        T + timedelta(minutes=30), [("node_delete", -2, 0)], graph_id=events[0]["graph_id"]
    )
    samples, state = fold(later, state)
    assert samples == []  # 2 of 40
    much_later = sim.graph_updates(
        T + timedelta(minutes=45), [("edge_delete", 0, -8)], graph_id=events[0]["graph_id"]
    )
    (sample,), _ = fold(much_later, state)  # a new window: 8 of 38
    assert sample["output"]["nodes_removed"] == 0  # the older window's removal is not in it
    assert (sample["feedback"]["quality_label"], sample["meta"]["quality_score"]) == ("poor", 0.0)


def test_a_graph_first_seen_mid_stream_is_counted_from_then_and_says_so_until_sized() -> None:
    """Its size before is unknown: counted from 0 since its first update seen, and every
    sample of that count says since when (``state.size_counted_since``). An update that
    gives the size (node_count / edge_count after it) ends the counting: exact from there."""
    sim = Simulator(seed=8)
    unseen = sim.graph_updates(T, [("node_add", 5, 0), ("edge_add", 0, 9)])
    first, then = (decode_graph_update(orjson.dumps(e)).timestamp for e in unseen)
    samples, state = fold(unseen)
    since = unseen[0]["timestamp"]
    assert [s["state"] for s in samples] == [
        {"node_count_before": 0, "edge_count_before": 0, "size_counted_since": since},
        {"node_count_before": 5, "edge_count_before": 0, "size_counted_since": since},
    ]  # 5 of nothing, then 9 of 5: each 1 (at most)
    assert [s["output"]["topology_change_score"] for s in samples] == [1.0, 1.0]
    assert (state.sized, state.nodes, state.edges, state.counted_since) == (True, 5, 9, first)
    assert then > first  # the mark is when counting began, not the last update
    sized = sim.graph_updates(
        T + timedelta(minutes=1), [("node_add", 2, 0)], graph_id=unseen[0]["graph_id"]
    )
    sized[0]["payload"] |= {"node_count": 30, "edge_count": 12}
    samples, state = fold(sized, state)
    assert samples == []  # 2 of 28 + 12
    assert (state.sized, state.nodes, state.edges, state.counted_since) == (True, 30, 12, None)
    assert (state.window.nodes_before, state.window.edges_before) == (28, 12)
    assert state.window.counted_since is None
    grown = sim.graph_updates(
        T + timedelta(minutes=2), [("edge_add", 0, 7)], graph_id=unseen[0]["graph_id"]
    )
    (sample,), state = fold(grown, state)  # 2 + 7 of 40
    assert sample["state"] == {"node_count_before": 28, "edge_count_before": 12}
    assert sample["output"]["topology_change_score"] == round(9 / 40, 4)
    assert (sample["output"]["node_count_after"], sample["output"]["edge_count_after"]) == (30, 19)


def official_graph_update(
    graph_id: str, when: datetime, kind: str, nodes: int, edges: int, number: int
) -> dict[str, Any]:
    """Return a GraphUpdateEvent with only what the official schema defines: no payload
    counts, no ``graph_created``."""
    return {
        "event_id": f"7e57a0b1-2c3d-4e5f-8a9b-{number:012d}",
        "event_type": "graph_updated",
        "event_family": "graph_update",
        "timestamp": (when + timedelta(seconds=number)).isoformat().replace("+00:00", "Z"),
        "graph_id": graph_id,
        "update_kind": kind,
        "node_delta": nodes,
        "edge_delta": edges,
        "source_module": "plan",
    }


#: A schema-only runtime's graph: built (bulk), grown a little, then rewired.
SCHEMA_ONLY_GRAPH = "0b7c6d5e-4f3a-4b2c-9d1e-0f9a8b7c6d5e"
SCHEMA_ONLY = [
    ("bulk", 10, 14, 0),
    ("node_add", 1, 0, 20 * 60),
    ("edge_delete", 0, -3, 20 * 60 + 5),
    ("edge_add", 0, 2, 20 * 60 + 9),
]


def schema_only_updates(mplp_schemas: Path) -> list[dict[str, Any]]:
    """Return the SCHEMA_ONLY updates, each checked against the official schema."""
    name = "events/mplp-graph-update-event.schema.json"
    validator = Draft7Validator(official(mplp_schemas, name), format_checker=format_checker())
    events = [
        official_graph_update(SCHEMA_ONLY_GRAPH, T, kind, nodes, edges, seconds)
        for kind, nodes, edges, seconds in SCHEMA_ONLY
    ]
    for event in events:
        assert [e.message for e in validator.iter_errors(event)] == []
    return events


def test_a_runtime_sending_only_the_schema_fields_gets_graph_evolution_samples(
    mplp_schemas: Path,
) -> None:
    """node_delta and edge_delta alone: the graph is counted from its first update (its
    creation, here), each sample marked as counted since then."""
    events = schema_only_updates(mplp_schemas)
    samples, state = fold(events)
    built, rewired = samples
    since = events[0]["timestamp"]
    assert built["state"] == {
        "node_count_before": 0,
        "edge_count_before": 0,
        "size_counted_since": since,
    }
    assert built["output"] == {
        "nodes_added": 10,
        "nodes_removed": 0,
        "edges_added": 14,
        "edges_removed": 0,
        "topology_change_score": 1.0,
        "node_count_after": 10,
        "edge_count_after": 14,
        "updates": 1,
    }
    assert built["input"]["change_type"] == "bulk"
    assert built["feedback"]["quality_label"] == "good"
    # 1 of 24, then 1 + 3 of 24, then 1 + 3 + 2 of 24: the third update makes it significant
    assert rewired["state"] == {
        "node_count_before": 10,
        "edge_count_before": 14,
        "size_counted_since": since,
    }
    assert rewired["input"]["trigger_event_id"] == events[1]["event_id"]
    assert rewired["input"]["change_type"] == "mixed"
    assert rewired["output"]["topology_change_score"] == round(6 / 24, 4)
    assert (rewired["output"]["node_count_after"], rewired["output"]["edge_count_after"]) == (
        11,
        13,
    )
    assert rewired["feedback"]["quality_label"] == "acceptable"
    assert (state.nodes, state.edges, state.window) == (11, 13, None)
    for sample in samples:  # our JSON and Avro schemas take the mark
        assert validate_sample(sample) == []
        assert decode_any(AvroSampleCodec().encode(sample)) == sample


def test_an_update_that_says_the_graph_was_created_is_scored_from_zero() -> None:
    """The one case where a first update's size before is 0: it says so (``event_type``
    graph_created; the schema's update kinds have no creation). A payload's counts say the
    size too, on a first update as on any."""
    sim = Simulator(seed=9)
    events = sim.graph_updates(T, [("node_add", 3, 0)])
    (counted,), _ = fold(events)  # unsaid: counted from this update on, and marked so
    assert counted["state"]["size_counted_since"] == events[0]["timestamp"]
    (sample,), state = fold(created(events))
    assert sample["state"] == {"node_count_before": 0, "edge_count_before": 0}
    assert sample["output"]["topology_change_score"] == 1.0
    assert (state.sized, state.nodes, state.edges, state.window) == (True, 3, 0, None)
    assert state.counted_since is None
    counted = sim.graph_updates(T, [("bulk", 1, 1)])
    counted[0]["payload"] |= {"node_count": 50, "edge_count": 50}
    samples, state = fold(counted)
    assert samples == []  # 2 of 98
    assert (state.window.nodes_before, state.window.edges_before) == (49, 49)


def test_a_redelivered_update_is_counted_once() -> None:
    events = Simulator(seed=4).graph_updates(T, [("node_add", 1, 0)])
    _, once = fold(events)
    _, twice = fold(events, once)
    assert twice == once


def test_an_event_of_another_family_is_refused_by_name() -> None:
    event = {**Simulator(seed=5).graph_updates(T, [("bulk", 1, 1)])[0], "event_family": "intent"}
    with pytest.raises(InvalidEvent) as info:
        decode_graph_update(orjson.dumps(event))
    assert info.value.reason == "unknown_event_type"


def test_graph_updates_generated_from_the_official_schema_are_never_schema_violations(
    mplp_schemas: Path,
) -> None:
    def check(generated: dict[str, Any], _uuid: str) -> str:
        decoded = decode_graph_update(json.dumps(generated).encode())
        outcome = DECIDE(decoded, None, T, None, True)
        assert outcome.new_state is not None
        GraphState.from_table(outcome.new_state.to_table())
        return decoded.update_kind

    name = "events/mplp-graph-update-event.schema.json"
    seen = generated_from(official(mplp_schemas, name), check, name)
    assert sum(seen.values()) >= MAX_EXAMPLES // 2


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[RunningWorker]:
    async with running_worker(tmp_path, T) as built:
        yield built


async def test_the_worker_turns_a_significant_change_into_a_sample(worker: RunningWorker) -> None:
    runtime, mocks, feed, _ = worker
    events = created(Simulator(seed=6).graph_updates(T, [("bulk", 5, 4), ("node_add", 1, 0)]))
    graph_id = events[0]["graph_id"]
    partition = partition_of(graph_id, runtime.settings.topics.partitions)
    topic = runtime.settings.topics.name("graph_updates")
    values = [orjson.dumps(event) for event in events]
    await feed.put("graphs", topic, *values, key=graph_id.encode(), partition=partition)
    (sample,) = sent_samples(mocks)  # the first update is the whole change from nothing
    assert sample["output"]["nodes_added"] == 5
    assert mocks["dlq"].await_count == 0
    assert f"graph:{graph_id}" in runtime.tables.graphs


async def test_the_worker_scores_a_graph_from_schema_only_updates(
    worker: RunningWorker, mplp_schemas: Path
) -> None:
    runtime, mocks, feed, _ = worker
    events = schema_only_updates(mplp_schemas)
    partition = partition_of(SCHEMA_ONLY_GRAPH, runtime.settings.topics.partitions)
    topic = runtime.settings.topics.name("graph_updates")
    values = [orjson.dumps(event) for event in events]
    key = SCHEMA_ONLY_GRAPH.encode()
    await feed.put("graphs", topic, *values, key=key, partition=partition)
    built, rewired = sent_samples(mocks)
    since = events[0]["timestamp"]
    assert [s["state"]["size_counted_since"] for s in (built, rewired)] == [since, since]
    assert (built["output"]["nodes_added"], built["output"]["edges_added"]) == (10, 14)
    assert rewired["output"]["topology_change_score"] == 0.25
    assert mocks["dlq"].await_count == 0


async def test_the_worker_keeps_a_quiet_graph_until_its_ttl_then_deletes_it(
    worker: RunningWorker,
) -> None:
    """The graphs key space's one deadline is the TTL: a tick past the window leaves the
    graph (and its open window) be; one past the TTL deletes it."""
    runtime, mocks, feed, clock = worker
    (event,) = Simulator(seed=7).graph_updates(T, [("node_add", 1, 0)])
    graph_id = event["graph_id"]
    partition = partition_of(graph_id, runtime.settings.topics.partitions)
    topic = runtime.settings.topics.name("graph_updates")
    await feed.put("graphs", topic, orjson.dumps(event), key=graph_id.encode(), partition=partition)
    key = f"graph:{graph_id}"
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        for moment, kept in ((T + 2 * WINDOW, True), (T + TTL + timedelta(minutes=2), False)):
            clock.now = moment  # the quiet index counts whole minutes
            await agent.put(b"tick", partition=partition)
            assert (key in runtime.tables.graphs) is kept
    assert mocks["dlq"].await_count == 0


def test_the_simulator_says_a_graph_is_new_only_when_asked_so_a_demo_graph_is_scored() -> None:
    sim = Simulator(seed=3)
    deltas = [("node_add", 2, 0), ("edge_add", 0, 1)]
    first = sim.graph_updates(T, deltas, graph_id="g-1", created=True)
    later = sim.graph_updates(T, deltas, graph_id="g-1")
    assert [e["event_type"] for e in first] == [CREATED, "graph_updated"]
    assert [e["event_type"] for e in later] == ["graph_updated", "graph_updated"]
