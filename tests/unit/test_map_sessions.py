"""MAP sessions (streams/join/sessions.py): one multi_agent_coordination sample per session.

The pure part runs the session key space of the join unit with a clock passed in; the agent
part runs the worker's MAP agent through ``test_context`` (no broker), ticks included.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

from agents.runtime import Runtime
from agents.wiring import wire
from streams.config.settings import Settings
from streams.dlq.errors import InvalidEvent
from streams.io.app import create_app
from streams.join.expiry import partition_of
from streams.join.parked import ParkedEvent
from streams.join.sessions import (
    SEEN_IDS,
    SessionState,
    map_route,
    session_expiry,
    session_key,
)
from streams.join.unit import KeyJoin, Step
from streams.mplp.decode import RecordOrigin
from streams.mplp.fields import InputNotes
from streams.mplp.map_events import decode_map_event
from streams.samples.coordination import session_outcome
from streams.sim.simulate import Simulator
from tests.support.apps import close_consumer_loop
from tests.support.clock import SettableClock
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.offsets import FakeEnds
from tests.support.outputs import Feed, mock_outputs
from tests.unit.test_mplp_inputs import ANY_UUID, FORMATS, MAX_EXAMPLES, official

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TIMEOUT = timedelta(minutes=30)
TOPIC = "mplp.map_events"
ROUTES = {TOPIC: map_route()}


class Session:
    """Feed one session's events to the unit the way the join does: decode, then on_event."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.join: KeyJoin[SessionState] = KeyJoin(
            None, [], ROUTES, timedelta(minutes=5), expire=session_expiry(TIMEOUT)
        )
        self.offset = 0

    def send(self, event: dict[str, Any], now: datetime = T) -> Step[SessionState]:
        raw = orjson.dumps(event)
        origin = RecordOrigin(TOPIC, 0, self.offset, now)
        decoded = decode_map_event(raw, origin, InputNotes())
        entry = ParkedEvent(
            source="map_sessions",
            topic=TOPIC,
            partition=0,
            offset=self.offset,
            key=event["session_id"],
            raw=raw.decode(),
            event_time=decoded.timestamp,
            parked_at=now,
        )
        self.offset += 1
        return self.join.on_event(decoded, entry, now)

    def all(self, now: datetime = T) -> list[Step[SessionState]]:
        return [self.send(event, now) for event in self.events]


def samples(steps: list[Step[Any]]) -> list[dict[str, Any]]:
    return [s.to_dict() for step in steps for s in step.samples]


def test_a_completed_session_yields_one_sample_with_the_taxonomy_fields() -> None:
    events = Simulator(seed=3).map_session(T, outcome="success", roles=3, turns=4)
    session = Session(events)
    steps = session.all()
    assert [len(step.samples) for step in steps] == [0] * (len(events) - 1) + [1]
    (sample,) = samples(steps)
    assert sample["sample_family"] == "multi_agent_coordination"
    assert sample["input"]["session_id"] == events[0]["session_id"]
    assert sample["input"]["participant_count"] == 3
    assert sample["input"]["initiator_role"] == events[0]["initiator_role"]
    assert sample["input"]["coordination_mode"] == events[0]["payload"]["coordination_mode"]
    assert sample["output"] == {
        "total_turns": 4,
        "handoffs_count": 3,  # roles 0, 1, 2, 0: the turn moved three times
        "conflicts_detected": 1,
        "conflicts_resolved": 1,
        "outcome": "success",
        "duration_ms": (len(events) - 1) * 1000,
        "closed_by": "completed",
    }
    assert sample["feedback"]["quality_label"] == "good"
    assert sample["meta"]["quality_score"] == 1.0
    assert sample["meta"]["source_event_ids"] == [events[-1]["event_id"]]
    assert session.join.state is not None
    assert session.join.state.closed == "completed"


def test_an_unresolved_conflict_makes_the_session_partial() -> None:
    events = Simulator(seed=4).map_session(T, outcome="partial")
    (sample,) = samples(Session(events).all())
    assert (sample["output"]["outcome"], sample["feedback"]["quality_label"]) == (
        "partial",
        "acceptable",
    )
    assert sample["meta"]["quality_score"] == 0.4  # 0.5, less 0.1 for the open conflict


def test_the_runtime_saying_failed_wins_over_the_counts() -> None:
    events = Simulator(seed=5).map_session(T, outcome="failed")
    (sample,) = samples(Session(events).all())
    assert sample["output"]["outcome"] == "failed"
    assert sample["feedback"]["quality_label"] == "poor"
    assert sample["meta"]["quality_score"] == 0.0


def test_a_quiet_session_times_out_then_late_events_are_counted_and_dropped() -> None:
    events = Simulator(seed=6).map_session(T, outcome=None)
    session = Session(events)
    session.all()
    assert session.join.on_tick(T + TIMEOUT - timedelta(seconds=1), lambda _e: True) == Step()
    timed_out = session.join.on_tick(T + TIMEOUT, lambda _e: True)
    (sample,) = samples([timed_out])
    assert sample["output"]["closed_by"] == "timeout"
    assert sample["output"]["outcome"] == "partial"  # turns completed, never reported
    assert sample["feedback"]["quality_label"] == "poor"
    assert sample["meta"]["quality_score"] == 0.25
    assert timed_out.state is not None
    assert timed_out.state.closed == "timeout"
    late = {**events[-1], "event_id": Simulator(seed=7).uuid(), "event_type": "MAPSessionCompleted"}
    step = session.send(late, T + TIMEOUT)
    assert step.samples == []  # not a second sample for the same session
    assert step.state is not None
    assert step.state.late_events == 1
    gone = session.join.on_tick(T + 2 * TIMEOUT, lambda _e: True)
    assert (gone.close, gone.samples, session.join.state) == (True, [], None)


def test_a_redelivered_event_is_counted_once() -> None:
    events = Simulator(seed=8).map_session(T, outcome="success", turns=2)
    session = Session(events)
    steps = [session.send(event) for event in events[:4]]
    again = session.send(events[3])  # at-least-once: the same record once more
    assert again == Step()
    steps += [session.send(event) for event in events[4:]]
    (sample,) = samples(steps)
    assert sample["output"]["total_turns"] == 2


def test_the_state_keeps_the_latest_event_ids_only() -> None:
    sim = Simulator(seed=9)
    events = sim.map_session(T, outcome=None, turns=SEEN_IDS)
    session = Session(events)
    session.all()
    assert session.join.state is not None
    assert len(session.join.state.seen) == SEEN_IDS
    assert session.join.state.seen[-1] == events[-1]["event_id"]


def test_a_timeout_and_a_completion_give_the_same_sample_id() -> None:
    events = Simulator(seed=10).map_session(T, outcome="success")
    completed = samples(Session(events).all())
    quiet = Session(events[:-1])
    quiet.all()
    timed_out = samples([quiet.join.on_tick(T + TIMEOUT, lambda _e: True)])
    assert completed[0]["sample_id"] == timed_out[0]["sample_id"]
    assert session_key(events[0]["session_id"]).startswith("session:")


def test_outcome_of_a_completed_session_with_an_open_turn_is_partial() -> None:
    events = Simulator(seed=11).map_session(T, outcome="success")
    dispatched = {**events[2], "event_id": Simulator(seed=12).uuid()}  # a turn never completed
    session = Session([*events[:-1], dispatched, events[-1]])
    session.all()
    assert session.join.state is not None
    assert session_outcome(session.join.state, "completed") == "partial"


def test_an_unknown_map_event_type_is_refused_by_name() -> None:
    event = {**Simulator(seed=13).map_session(T)[0], "event_type": "MAPHandoffInitiated"}
    with pytest.raises(InvalidEvent) as info:
        decode_map_event(orjson.dumps(event))
    assert info.value.reason == "unknown_event_type"


def test_map_events_generated_from_the_official_schema_are_never_schema_violations(
    mplp_schemas: Path,
) -> None:
    schema = official(mplp_schemas, "events/mplp-map-event.schema.json")
    seen: Counter[str] = Counter()

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(from_schema(schema, custom_formats=FORMATS), ANY_UUID)
    def run(generated: dict[str, Any], _uuid: str) -> None:
        try:
            decoded = decode_map_event(json.dumps(generated).encode())
        except InvalidEvent as exc:
            raise AssertionError(f"{exc} for {json.dumps(generated)[:2000]}") from None
        assert decoded.session_id == generated["session_id"]
        outcome = map_route().decide(decoded, None, T, None, True)
        assert outcome.new_state is not None  # counted into a session
        SessionState.from_table(outcome.new_state.to_table())  # and storable
        seen[decoded.event_type] += 1

    run()
    assert sum(seen.values()) >= MAX_EXAMPLES // 2
    assert len(seen) >= 5  # many event types, not one


# --- through the worker: the MAP agent, the table, the tick ---------------------------------


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[tuple[Runtime, Any, Feed, SettableClock]]:
    settings = Settings(store="memory://", sample_format="json", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    clock = SettableClock(T)
    runtime = wire(app, settings, ends=FakeEnds(), clock=clock)
    mocks = mock_outputs(app, runtime, "samples", "dlq", "events")
    try:
        yield runtime, mocks, Feed(app), clock
    finally:
        close_consumer_loop(app)


def sent(mocks: Any) -> list[dict[str, Any]]:
    return [orjson.loads(c.kwargs["value"]) for c in mocks["samples"].await_args_list]


async def test_the_worker_emits_a_session_sample_and_deletes_it_after_the_timeout(
    worker: tuple[Runtime, Any, Feed, SettableClock],
) -> None:
    runtime, mocks, feed, clock = worker
    events = Simulator(seed=14).map_session(T, outcome="success")
    session_id = events[0]["session_id"]
    partition = partition_of(session_id, runtime.settings.topics.partitions)
    values = [orjson.dumps(event) for event in events]
    await feed.put("map_sessions", TOPIC, *values, key=session_id.encode(), partition=partition)
    (sample,) = sent(mocks)
    assert sample["sample_family"] == "multi_agent_coordination"
    assert sample["output"]["outcome"] == "success"
    key = session_key(session_id)
    assert key in runtime.tables.map_sessions  # kept, closed, for late events
    assert mocks["dlq"].await_count == 0
    clock.now = T + TIMEOUT + timedelta(minutes=2)  # the quiet index counts whole minutes
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
    assert key not in runtime.tables.map_sessions
    assert len(sent(mocks)) == 1


async def test_the_worker_times_out_a_quiet_session_on_a_tick(
    worker: tuple[Runtime, Any, Feed, SettableClock],
) -> None:
    runtime, mocks, feed, clock = worker
    events = Simulator(seed=15).map_session(T, outcome=None)
    session_id = events[0]["session_id"]
    partition = partition_of(session_id, runtime.settings.topics.partitions)
    values = [orjson.dumps(event) for event in events]
    await feed.put("map_sessions", TOPIC, *values, key=session_id.encode(), partition=partition)
    assert sent(mocks) == []
    await runtime.app.on_partitions_revoked.send(set())  # the index is rebuilt from the table
    clock.now = T + TIMEOUT + timedelta(minutes=2)
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
    (sample,) = sent(mocks)
    assert (sample["output"]["closed_by"], sample["feedback"]["quality_label"]) == (
        "timeout",
        "poor",
    )


async def test_a_session_is_stored_closed_only_once_its_sample_is_on_the_broker(
    worker: tuple[Runtime, Any, Feed, SettableClock],
) -> None:
    """A kill -9 between the two must re-emit the sample, not lose it: until the send is
    acknowledged the table holds the session open, so the completion (replayed) or the
    timeout (on a tick) emits it again."""
    runtime, mocks, feed, _clock = worker
    events = Simulator(seed=16).map_session(T, outcome="success")
    session_id = events[0]["session_id"]
    partition = partition_of(session_id, runtime.settings.topics.partitions)
    values = [orjson.dumps(event) for event in events]
    await feed.put(
        "map_sessions", TOPIC, *values[:-1], key=session_id.encode(), partition=partition
    )
    mocks["samples"].side_effect = RuntimeError("broker gone")
    await feed.put("map_sessions", TOPIC, values[-1], key=session_id.encode(), partition=partition)
    held = SessionState.from_table(runtime.tables.map_sessions[session_key(session_id)])
    assert held.closed is None
    assert events[-1]["event_id"] not in held.seen
    mocks["samples"].side_effect = None
    await feed.put("map_sessions", TOPIC, values[-1], key=session_id.encode(), partition=partition)
    assert [s["output"]["closed_by"] for s in sent(mocks)[-1:]] == ["completed"]
    held = SessionState.from_table(runtime.tables.map_sessions[session_key(session_id)])
    assert held.closed == "completed"


async def test_two_steps_of_one_session_do_not_build_on_the_same_state(
    worker: tuple[Runtime, Any, Feed, SettableClock],
) -> None:
    """A session's state is written once its samples are acknowledged: until then another
    step of the same key (the MAP agent beside the sweeper's tick) must wait, or both would
    build on the open state the table still holds: two samples for one session."""
    runtime, mocks, feed, clock = worker
    events = Simulator(seed=17).map_session(T, outcome="success")
    session_id = events[0]["session_id"]
    partition = partition_of(session_id, runtime.settings.topics.partitions)
    values = [orjson.dumps(event) for event in events]
    await feed.put(
        "map_sessions", TOPIC, *values[:-1], key=session_id.encode(), partition=partition
    )
    release = asyncio.Event()

    async def held_send(*_args: Any, **_kwargs: Any) -> None:
        await release.wait()

    mocks["samples"].side_effect = held_send
    clock.now = T + TIMEOUT + timedelta(minutes=2)
    ticks = runtime.app.agents["learnstream.sweeper"].test_context()
    sessions = runtime.app.agents["learnstream.map_sessions"].test_context()
    sessions.original_channel = runtime.app.topic(TOPIC)
    sessions.sent_offset = feed.offsets[(TOPIC, partition)]  # the next offset, no hole
    async with ticks as tick, sessions as session:
        await tick.put(b"tick", partition=partition)  # times the session out; its send waits
        completion = asyncio.create_task(
            session.put(values[-1], key=session_id.encode(), partition=partition)
        )
        for _ in range(20):
            await asyncio.sleep(0)
        assert mocks["samples"].await_count == 1  # the completion waits for the key
        release.set()
        await completion
        for _ in range(20):
            await asyncio.sleep(0)
    assert [s["output"]["closed_by"] for s in sent(mocks)] == ["timeout"]
    held = SessionState.from_table(runtime.tables.map_sessions[session_key(session_id)])
    assert (held.closed, held.late_events) == ("timeout", 1)
    assert runtime.join._locks == {}  # nothing left behind


async def test_a_state_that_cannot_be_read_does_not_stop_the_sweep(
    worker: tuple[Runtime, Any, Feed, SettableClock],
) -> None:
    """One unreadable row (written by another version) is left out of the quiet index; the
    other sessions of the worker still time out."""
    runtime, mocks, feed, clock = worker
    events = Simulator(seed=18).map_session(T, outcome=None)
    session_id = events[0]["session_id"]
    partition = partition_of(session_id, runtime.settings.topics.partitions)
    values = [orjson.dumps(event) for event in events]
    await feed.put("map_sessions", TOPIC, *values, key=session_id.encode(), partition=partition)
    runtime.tables.map_sessions.data["session:unreadable"] = b'{"session_id": 7}'
    await runtime.app.on_partitions_revoked.send(set())  # the index is rebuilt on the tick
    clock.now = T + TIMEOUT + timedelta(minutes=2)
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
    assert [s["output"]["closed_by"] for s in sent(mocks)] == ["timeout"]
    assert mocks["dlq"].await_count == 0  # the tick itself went through


async def test_quiet_sessions_wait_while_their_partition_has_unread_events(
    worker: tuple[Runtime, Any, Feed, SettableClock],
) -> None:
    """A worker catching up (after a restart, or behind) must not time out a session whose
    next events it has not read yet."""
    runtime, mocks, feed, clock = worker
    events = Simulator(seed=19).map_session(T, outcome=None)
    session_id = events[0]["session_id"]
    partition = partition_of(session_id, runtime.settings.topics.partitions)
    values = [orjson.dumps(event) for event in events]
    await feed.put("map_sessions", TOPIC, *values, key=session_id.encode(), partition=partition)
    behind = {(TOPIC, partition)}
    runtime.join.unread = lambda topic, part: (topic, part) in behind
    clock.now = T + TIMEOUT + timedelta(minutes=2)
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
        assert sent(mocks) == []
        behind.clear()  # caught up
        await agent.put(b"tick", partition=partition)
    assert [s["output"]["closed_by"] for s in sent(mocks)] == ["timeout"]
