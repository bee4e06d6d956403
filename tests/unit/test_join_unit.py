"""The join unit (streams/join/unit.py) on its own: no broker, no Faust, a clock passed in.

Each test feeds one key's records, state and ticks the way the agents do, and asserts what
the unit says to emit, store, park, release and dead-letter.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.routes import routes
from learnstream.streams.join.rules import plan_key
from learnstream.streams.join.unit import DELETED, MISSING, KeyJoin, Route, Step
from learnstream.streams.mplp.decode import RecordOrigin, decode_plan
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.sim.simulate import Simulator
from learnstream.streams.state.plan import PlanState, merge_snapshot

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
GRACE = timedelta(minutes=2)
TOPICS = TopicSettings()
ROUTES = routes(TOPICS)
SETTLED = lambda _entry: True  # noqa: E731  (the corrections input is read past everything)
UNSETTLED = lambda _entry: False  # noqa: E731


class Feed:
    """Records of one plan as the agents hand them to the unit, with offsets per topic."""

    def __init__(self) -> None:
        self.sim = Simulator(seed=5, pii_ratio=0.0)
        self.snap = self.sim.plan(T)
        self.offsets: dict[str, int] = {}

    @property
    def key(self) -> str:
        return plan_key(self.snap["plan"]["plan_id"])

    def record(
        self, field: str, body: dict[str, Any], fetched: datetime
    ) -> tuple[Any, ParkedEvent]:
        """Return (decoded event, its entry) of ``body`` read from topic ``field``."""
        topic = TOPICS.name(field)
        offset = self.offsets[topic] = self.offsets.get(topic, -1) + 1
        raw = orjson.dumps(body)
        route: Route = ROUTES[topic]
        event = route.decode(raw, RecordOrigin(topic, 0, offset, fetched), InputNotes())
        entry = ParkedEvent(
            source=route.source,
            topic=topic,
            partition=0,
            offset=offset,
            key=self.snap["plan"]["plan_id"],
            raw=raw.decode(),
            event_time=event.timestamp,
            parked_at=fetched,
        )
        return event, entry

    def decision(self, approved: bool = True, when: datetime = T) -> tuple[Any, ParkedEvent]:
        kind = "plan_approved" if approved else "plan_rejected"
        return self.record(kind, self.sim.decision(self.snap, approved, when), when)

    def delta(self, when: datetime) -> tuple[Any, ParkedEvent]:
        return self.record("delta_intents", self.sim.delta(self.snap, when), when)

    def execute(self, when: datetime, status: str = "completed") -> tuple[Any, ParkedEvent]:
        return self.record("pipeline_stage", self.sim.stage(self.snap, status, when), when)

    def plan_update(self, at: datetime = T) -> Any:
        snapshot = decode_plan(orjson.dumps(self.snap), InputNotes())
        return lambda state: merge_snapshot(state, snapshot, at)


def families(step: Step[Any]) -> list[tuple[str, str]]:
    return [(s.sample_family, s.feedback.quality_label) for s in step.samples]


def bodies(steps: list[Step[Any]]) -> list[dict[str, Any]]:
    """Return every sample of ``steps`` as written, without the wall-clock ``created_at``."""
    return [
        {**s.model_dump(mode="json"), "created_at": None} for step in steps for s in step.samples
    ]


@pytest.fixture
def feed() -> Feed:
    return Feed()


def unit(state: PlanState | None = None, parked: list[ParkedEvent] | None = None) -> KeyJoin[Any]:
    return KeyJoin(state, parked or [], ROUTES, GRACE)


def test_a_decision_before_its_plan_parks_then_completes_when_the_plan_comes(feed: Feed) -> None:
    join = unit()
    event, entry = feed.decision()
    live = join.on_event(event, entry, T)
    assert families(live) == [("confirm_decision", "good")]  # needs no plan
    assert live.parked == [entry]
    assert live.state is None
    assert join.waiting_since is None  # it waits for the plan, not the corrections input
    done = join.on_state(feed.plan_update(), T, SETTLED)
    assert families(done) == [("intent_resolution", "good")]  # no second confirm_decision
    assert done.released == [entry]
    assert done.failed == []
    assert isinstance(done.state, PlanState)
    assert join.parked == []


def test_both_arrival_orders_give_the_same_samples(feed: Feed) -> None:
    """Plan, correction, execute in order, and execute, correction, plan reversed."""
    delta, execute = feed.delta(T + timedelta(minutes=1)), feed.execute(T + timedelta(minutes=2))
    in_order = unit()
    first = [
        in_order.on_state(feed.plan_update(), T, SETTLED),
        in_order.on_event(*delta, T),
        in_order.on_event(*execute, T),
    ]
    reversed_ = unit()
    second = [
        reversed_.on_event(*execute, T),
        reversed_.on_event(*delta, T),
        reversed_.on_state(feed.plan_update(), T, SETTLED),
    ]
    assert families(second[-1]) == [
        ("error_correction", "acceptable"),
        ("pipeline_outcome", "acceptable"),  # the correction came first in event time
    ]
    assert bodies(first) == bodies(second)
    assert in_order.state == reversed_.state


def test_an_unsettled_execute_waits_for_the_corrections_input(feed: Feed) -> None:
    join = unit()
    join.on_state(feed.plan_update(), T, SETTLED)
    event, entry = feed.execute(T + timedelta(minutes=2))
    live = join.on_event(event, entry, T, settled=False)
    assert live.samples == []
    assert live.parked == [entry]
    assert join.waiting_since == entry.parked_at  # the watermark is told whom to wake
    assert join.on_tick(T, UNSETTLED).samples == []  # still not read past it
    earlier = feed.delta(T + timedelta(minutes=1))
    assert families(join.on_event(*earlier, T)) == [("error_correction", "acceptable")]
    settled = join.on_tick(T, SETTLED)
    assert families(settled) == [("pipeline_outcome", "acceptable")]
    assert settled.released == [entry]
    assert join.waiting_since is None


def test_an_unsettled_entry_completes_anyway_once_its_grace_ends(feed: Feed) -> None:
    join = unit()
    join.on_state(feed.plan_update(), T, SETTLED)
    join.on_event(*feed.execute(T), T, settled=False)
    assert join.on_tick(T + GRACE - timedelta(seconds=1), UNSETTLED).samples == []
    assert families(join.on_tick(T + GRACE, UNSETTLED)) == [("pipeline_outcome", "good")]


def test_an_entry_whose_plan_never_comes_is_dead_lettered_after_the_grace(feed: Feed) -> None:
    join = unit()
    _, entry = feed.execute(T)
    join.on_event(*feed.execute(T)[:1], entry, T)
    assert join.on_tick(T + GRACE - timedelta(seconds=1), SETTLED).failed == []
    expired = join.on_tick(T + GRACE, SETTLED)
    assert [(e.offset, reason) for e, reason, _ in expired.failed] == [(entry.offset, MISSING)]
    assert expired.failed[0][2] == "no state arrived within the grace (2m)"
    named = KeyJoin(None, [entry], ROUTES, GRACE, missing="no plan within X")
    assert named.on_tick(T + GRACE, SETTLED).failed[0][2] == "no plan within X (2m)"
    assert expired.released == [entry]
    assert join.parked == []


def test_a_deleted_plan_completes_what_waits_to_settle_and_ends_the_key(feed: Feed) -> None:
    """A tombstone or the plan's TTL: an execute waiting for the corrections input comes
    out now, as the plan stood (its grace is as good as over), and nothing waits behind."""
    join = unit()
    join.on_state(feed.plan_update(), T, SETTLED)
    join.on_event(*feed.delta(T + timedelta(minutes=1)), T)
    _, entry = execute = feed.execute(T + timedelta(minutes=2))
    join.on_event(*execute, T, settled=False)
    assert join.waiting_since == entry.parked_at
    ended = join.on_delete(T)
    assert families(ended) == [("pipeline_outcome", "acceptable")]  # its correction counted
    assert (ended.released, ended.failed) == ([entry], [])
    assert ended.close
    assert ended.state is None
    assert (join.state, join.parked, join.waiting_since) == (None, [], None)


def test_a_plan_deleted_before_it_came_dead_letters_what_waited_for_it(feed: Feed) -> None:
    join = unit()
    decision, execute = feed.decision(), feed.execute(T)
    for record in (decision, execute):
        assert join.on_event(*record, T).parked == [record[1]]
    ended = join.on_delete(T)
    assert ended.samples == []
    assert sorted((e.topic, r) for e, r, _ in ended.failed) == sorted(
        (entry.topic, DELETED) for _, entry in (decision, execute)
    )
    topics = sorted(entry.topic for _, entry in (decision, execute))
    assert sorted(e.topic for e in ended.released) == topics
    assert ended.close
    assert join.parked == []


def test_a_redelivered_record_is_parked_once(feed: Feed) -> None:
    join = unit()
    event, entry = feed.execute(T)
    assert join.on_event(event, entry, T).parked == [entry]
    again = entry.model_copy(update={"parked_at": T + timedelta(seconds=30)})
    assert join.on_event(event, again, T).parked == []  # read again after a crash
    assert [e.parked_at for e in join.parked] == [T]  # grace counts from the first fetch


def test_a_unit_restored_from_its_snapshot_completes_as_the_original(feed: Feed) -> None:
    """A restart: the tables give back the state and the entries; nothing else survives."""
    original = unit()
    original.on_event(*feed.decision(), T)
    original.on_event(*feed.delta(T + timedelta(minutes=1)), T)
    state, parked = original.snapshot()
    stored = [ParkedEvent.model_validate_json(e.to_table()) for e in parked]  # via the table
    restored = KeyJoin(state, stored, ROUTES, GRACE)
    done = [j.on_state(feed.plan_update(), T, SETTLED) for j in (original, restored)]
    assert bodies(done[:1]) == bodies(done[1:])
    assert families(done[1]) == [("intent_resolution", "good"), ("error_correction", "acceptable")]


def test_one_failing_entry_is_dead_lettered_alone(feed: Feed) -> None:
    join = unit()
    good = feed.execute(T + timedelta(minutes=1))
    join.on_event(*good, T)
    _, broken = feed.execute(T)
    broken = broken.model_copy(update={"raw": '{"not": "an event"}', "offset": 99})
    join = unit(parked=[*join.parked, broken])
    done = join.on_state(feed.plan_update(), T, SETTLED)
    assert families(done) == [("pipeline_outcome", "good")]
    assert [(e.offset, reason) for e, reason, _ in done.failed] == [(99, "unknown_event_type")]
    assert {e.offset for e in done.released} == {99, good[1].offset}


def test_an_entry_whose_samples_cannot_be_sent_is_dead_lettered_alone(feed: Feed) -> None:
    """The unit prepares each completed entry's samples apart: a sample the caller cannot
    send (privacy or encoding raises) fails its own entry, not its key's every completion,
    and leaves the state as if that entry had not come."""
    join = unit()
    delta, execute = feed.delta(T + timedelta(minutes=1)), feed.execute(T + timedelta(minutes=2))
    join.on_event(*delta, T)
    join.on_event(*execute, T)

    def prepare(samples: list[Any]) -> list[Any]:
        if any(s.sample_family == "error_correction" for s in samples):
            raise ValueError("cannot encode")
        return [("ready", s.sample_family) for s in samples]

    join = KeyJoin(None, join.parked, ROUTES, GRACE, prepare=prepare)
    done = join.on_state(feed.plan_update(), T, SETTLED)
    assert [(e.offset, reason, error) for e, reason, error in done.failed] == [
        (delta[1].offset, "builder_error", "ValueError while building its samples")
    ]
    assert done.ready == [("ready", "pipeline_outcome")]
    assert families(done) == [("pipeline_outcome", "good")]  # the failed correction not counted
    assert {e.offset for e in done.released} == {delta[1].offset, execute[1].offset}
    assert join.state is not None
    assert join.state.deltas == 0
    assert join.parked == []


def test_an_older_snapshot_changes_nothing(feed: Feed) -> None:
    join = unit()
    join.on_state(feed.plan_update(T), T, SETTLED)
    later = join.state
    assert join.on_state(lambda state: None, T, SETTLED) == Step()
    assert join.state is later


def test_a_session_window_fits_the_same_unit() -> None:
    """Designed for keyed joins beyond plans: a window keyed by a session id counts its turns,
    and emits one sample when its closing event comes, or on a tick once it timed out."""
    from learnstream.streams.join.outcome import Outcome

    def decode(data: bytes | None, _origin: RecordOrigin, _notes: InputNotes | None) -> Any:
        return orjson.loads(data or b"{}")

    def decide(event: Any, state: Any, _now: datetime, _parked: Any, _settled: bool) -> Any:
        turns = (state or 0) + (event["kind"] == "turn")
        if event["kind"] == "completed":
            return Outcome(samples=[f"session done after {turns} turns"], close=True)
        return Outcome(new_state=turns)

    def timed_out(turns: int, now: datetime) -> Any:
        if now - T < timedelta(minutes=30):
            return None
        return Outcome(samples=[f"session timed out after {turns} turns"], close=True)

    def record(kind: str, offset: int) -> tuple[dict[str, str], ParkedEvent]:
        entry = ParkedEvent(
            source="decisions", topic="map", partition=0, offset=offset, key="s1",
            raw=orjson.dumps({"kind": kind}).decode(), event_time=T, parked_at=T,
        )  # fmt: skip
        return {"kind": kind}, entry

    routes = {"map": Route("decisions", decode, decide, lambda _event: "session:s1")}
    session = KeyJoin[int](None, [], routes, GRACE, expire=timed_out)
    assert session.on_event(*record("turn", 0), T).state == 1
    assert session.on_event(*record("turn", 1), T).state == 2
    assert session.snapshot() == (2, [])
    closed = session.on_event(*record("completed", 2), T)
    assert (closed.samples, closed.close, session.state) == (
        ["session done after 2 turns"],
        True,
        None,
    )

    idle = KeyJoin[int](None, [], routes, GRACE, expire=timed_out)
    idle.on_event(*record("turn", 0), T)
    assert idle.on_tick(T + timedelta(minutes=29), SETTLED) == Step()
    late = idle.on_tick(T + timedelta(minutes=30), SETTLED)
    assert (late.samples, late.close) == (["session timed out after 1 turns"], True)
