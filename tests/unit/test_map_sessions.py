"""MAP sessions (streams/join/sessions.py): one multi_agent_coordination sample per session.

The pure part runs the session key space of the join unit with a clock passed in; the agent
part runs the worker's MAP agent through ``test_context`` (no broker), ticks included.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.sessions import (
    SEEN_IDS,
    SessionState,
    map_route,
    session_expiry,
    session_key,
)
from learnstream.streams.join.unit import KeyJoin, Step
from learnstream.streams.mplp.decode import RecordOrigin
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.mplp.map_events import decode_map_event
from learnstream.streams.samples.coordination import session_outcome
from learnstream.streams.sim.simulate import Simulator
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.worker import RunningWorker, running_worker, sent_samples
from tests.unit.test_mplp_inputs import MAX_EXAMPLES, generated_from, official

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
    def check(generated: dict[str, Any], _uuid: str) -> str:
        decoded = decode_map_event(json.dumps(generated).encode())
        assert decoded.session_id == generated["session_id"]
        outcome = map_route().decide(decoded, None, T, None, True)
        assert outcome.new_state is not None  # counted into a session
        SessionState.from_table(outcome.new_state.to_table())  # and storable
        return decoded.event_type

    name = "events/mplp-map-event.schema.json"
    seen = generated_from(official(mplp_schemas, name), check, name)
    assert sum(seen.values()) >= MAX_EXAMPLES // 2
    assert len(seen) >= 5  # many event types, not one


# --- through the worker: the MAP agent, the table, the tick ---------------------------------


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[RunningWorker]:
    async with running_worker(tmp_path, T) as built:
        yield built


class Played:
    """One simulated session fed to the worker's MAP agent, as a runtime keys it."""

    def __init__(self, worker: RunningWorker, seed: int, outcome: str | None) -> None:
        runtime, _, self.feed, _ = worker
        self.events = Simulator(seed=seed).map_session(T, outcome=outcome)
        self.session_id = self.events[0]["session_id"]
        self.key = session_key(self.session_id)
        self.partition = partition_of(self.session_id, runtime.settings.topics.partitions)
        self.values = [orjson.dumps(event) for event in self.events]

    async def put(self, *values: bytes) -> None:
        where = {"key": self.session_id.encode(), "partition": self.partition}
        await self.feed.put("map_sessions", TOPIC, *values, **where)


def sent(mocks: Any) -> list[dict[str, Any]]:
    return sent_samples(mocks)


async def test_the_worker_emits_a_session_sample_and_deletes_it_after_the_timeout(
    worker: RunningWorker,
) -> None:
    runtime, mocks, feed, clock = worker
    played = Played(worker, 14, "success")
    session_id, partition = played.session_id, played.partition
    values = played.values
    await played.put(*values)
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
    worker: RunningWorker,
) -> None:
    runtime, mocks, feed, clock = worker
    played = Played(worker, 15, None)
    partition = played.partition
    values = played.values
    await played.put(*values)
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
    worker: RunningWorker,
) -> None:
    """A kill -9 between the two must re-emit the sample, not lose it: until the send is
    acknowledged the table holds the session open, so the completion (replayed) or the
    timeout (on a tick) emits it again."""
    runtime, mocks, feed, _clock = worker
    played = Played(worker, 16, "success")
    events, session_id, partition = played.events, played.session_id, played.partition
    values = played.values
    await played.put(*values[:-1])
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
    worker: RunningWorker,
) -> None:
    """A session's state is written once its samples are acknowledged: until then another
    step of the same key (the MAP agent beside the sweeper's tick) must wait, or both would
    build on the open state the table still holds: two samples for one session."""
    runtime, mocks, feed, clock = worker
    played = Played(worker, 17, "success")
    session_id, partition = played.session_id, played.partition
    values = played.values
    await played.put(*values[:-1])
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
    worker: RunningWorker,
) -> None:
    """One unreadable row (written by another version) is left out of the quiet index; the
    other sessions of the worker still time out."""
    runtime, mocks, feed, clock = worker
    played = Played(worker, 18, None)
    partition = played.partition
    values = played.values
    await played.put(*values)
    runtime.tables.map_sessions.data["session:unreadable"] = b'{"session_id": 7}'
    await runtime.app.on_partitions_revoked.send(set())  # the index is rebuilt on the tick
    clock.now = T + TIMEOUT + timedelta(minutes=2)
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
    assert [s["output"]["closed_by"] for s in sent(mocks)] == ["timeout"]
    assert mocks["dlq"].await_count == 0  # the tick itself went through


async def test_quiet_sessions_wait_while_their_partition_has_unread_events(
    worker: RunningWorker,
) -> None:
    """A worker catching up (after a restart, or behind) must not time out a session whose
    next events it has not read yet."""
    runtime, mocks, feed, clock = worker
    played = Played(worker, 19, None)
    partition = played.partition
    values = played.values
    await played.put(*values)
    behind = {(TOPIC, partition)}
    runtime.join.unread = lambda topic, part: (topic, part) in behind
    clock.now = T + TIMEOUT + timedelta(minutes=2)
    async with runtime.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
        assert sent(mocks) == []
        behind.clear()  # caught up
        await agent.put(b"tick", partition=partition)
    assert [s["output"]["closed_by"] for s in sent(mocks)] == ["timeout"]
