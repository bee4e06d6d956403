"""Plan state (last writer wins by plan time, terminal expiry) and the join's grace buffer."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from learnstream.streams.join.parked import ParkedEvent, ParkedIndex, entry_key, parse_entries
from learnstream.streams.join.rules import plan_key
from learnstream.streams.mplp.models import PlanSnapshot
from learnstream.streams.samples.ids import derived_uuid
from learnstream.streams.state.plan import PlanState, expired, merge_snapshot, record_delta

PLAN_ID = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
T = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
TTL = timedelta(hours=24)


def snapshot(
    updated: datetime | None,
    status: str = "in_progress",
    *,
    created: datetime | None = None,
    title: str = "Add a cache",
) -> PlanSnapshot:
    meta: dict[str, Any] = {"protocolVersion": "1.0.0"}
    if updated is not None:
        meta["updated_at"] = updated.isoformat()
    if created is not None:
        meta["created_at"] = created.isoformat()
    return PlanSnapshot.model_validate(
        {
            "plan": {
                "meta": meta,
                "plan_id": PLAN_ID,
                "context_id": "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e",
                "title": title,
                "objective": "Add a Redis cache",
                "status": status,
                "steps": [],
            }
        }
    )


def merged(current: PlanState | None, snap: PlanSnapshot, arrival: datetime) -> PlanState:
    state = merge_snapshot(current, snap, arrival)
    assert state is not None
    return state


# --- plan state -----------------------------------------------------------------------------


def test_first_snapshot_is_taken_at_the_plans_own_time() -> None:
    state = merged(None, snapshot(T), arrival=T + timedelta(hours=5))
    assert (state.updated_at, state.deltas, state.terminal_since) == (T, 0, None)
    assert state.snapshot.plan.title == "Add a cache"


def test_older_snapshot_loses_even_when_it_arrives_last() -> None:
    current = merged(None, snapshot(T, title="v2"), arrival=T)
    assert (
        merge_snapshot(
            current, snapshot(T - timedelta(seconds=1), title="v1"), T + timedelta(hours=1)
        )
        is None
    )


def test_as_of_counts_only_corrections_made_at_or_before_the_moment() -> None:
    base = merged(None, snapshot(T), T)
    state = record_delta(
        record_delta(base, "d1", T + timedelta(minutes=1)), "d2", T + timedelta(minutes=3)
    )
    counts = [state.as_of(T + timedelta(minutes=m)).deltas for m in (0, 1, 2, 3, 9)]
    assert counts == [0, 1, 1, 2, 2]
    assert state.as_of(T + timedelta(minutes=9)) is state  # nothing filtered: no copy


def test_as_of_is_the_same_whatever_order_corrections_were_recorded_in() -> None:
    base = merged(None, snapshot(T), T)
    early, late = ("d1", T + timedelta(minutes=1)), ("d2", T + timedelta(minutes=5))
    one = record_delta(record_delta(base, *early), *late)
    other = record_delta(record_delta(base, *late), *early)
    moment = T + timedelta(minutes=2)
    assert one.as_of(moment).deltas == other.as_of(moment).deltas == 1


def test_state_stored_before_correction_times_counts_its_corrections_always() -> None:
    current = merged(None, snapshot(T), T)
    raw = json.loads(current.to_table())
    raw["delta_ids"] = ["d1"]
    del raw["delta_times"]  # what a worker wrote before corrections kept their time
    state = PlanState.from_table(json.dumps(raw).encode())
    assert state.as_of(T - timedelta(days=1)).deltas == 1
    assert record_delta(state, "d1", T).delta_times == {}  # idempotent: no time added


def test_newer_snapshot_replaces_and_keeps_the_correction_count() -> None:
    current = record_delta(record_delta(merged(None, snapshot(T, title="v1"), T), "d1"), "d2")
    state = merged(current, snapshot(T + timedelta(minutes=1), title="v2"), T)
    assert (state.snapshot.plan.title, state.updated_at, state.deltas) == (
        "v2",
        T + timedelta(minutes=1),
        2,
    )


def test_same_time_snapshot_replaces_so_a_replay_is_idempotent() -> None:
    current = merged(None, snapshot(T, title="v1"), T)
    assert merged(current, snapshot(T, title="v1b"), T).snapshot.plan.title == "v1b"


def test_plan_time_falls_back_to_created_at_then_record_time() -> None:
    assert merged(None, snapshot(None, created=T), T + timedelta(hours=1)).updated_at == T
    assert merged(None, snapshot(None), T + timedelta(hours=1)).updated_at == T + timedelta(hours=1)


def test_record_delta_returns_a_new_state() -> None:
    state = merged(None, snapshot(T), T)
    assert record_delta(state, "d1").deltas == 1
    assert record_delta(record_delta(state, "d1"), "d1").deltas == 1  # replay-safe
    assert state.deltas == 0


def test_table_form_round_trips() -> None:
    state = record_delta(merged(None, snapshot(T, "completed"), T), "d1")
    stored = state.to_table()
    assert isinstance(stored, bytes)
    table = json.loads(stored)
    assert table["updated_at"] == "2026-03-01T10:00:00Z"
    assert table["terminal_since"] == "2026-03-01T10:00:00Z"
    assert PlanState.from_table(stored) == state
    assert PlanState.from_table(stored.decode()) == state
    assert PlanState.from_table(table) == state  # the dict form tables held before


@pytest.mark.parametrize("status", ["completed", "cancelled", "failed"])
def test_terminal_plan_expires_after_ttl(status: str) -> None:
    state = merged(None, snapshot(T, status), T)
    assert state.terminal_since == T
    assert expired(state, T + TTL - timedelta(microseconds=1), TTL) is False
    assert expired(state, T + TTL, TTL) is True


def test_terminal_since_is_kept_across_later_terminal_snapshots() -> None:
    done = merged(None, snapshot(T, "completed"), T)
    later = merged(done, snapshot(T + timedelta(hours=2), "completed"), T)
    assert later.terminal_since == T
    assert expired(later, T + TTL, TTL) is True


def test_reopened_plan_stops_expiring() -> None:
    done = merged(None, snapshot(T, "failed"), T)
    reopened = merged(done, snapshot(T + timedelta(hours=1), "in_progress"), T)
    assert reopened.terminal_since is None
    assert expired(reopened, T + 10 * TTL, TTL) is False


# --- grace buffer ---------------------------------------------------------------------------


def entry(
    offset: int,
    *,
    event_min: int = 0,
    parked_min: int = 0,
    topic: str = "mplp.deltas",
    partition: int = 0,
) -> ParkedEvent:
    return ParkedEvent(
        source="deltas",
        topic=topic,
        partition=partition,
        offset=offset,
        key=PLAN_ID,
        raw=f'{{"n": {offset}}}',
        event_time=T + timedelta(minutes=event_min),
        parked_at=T + timedelta(minutes=parked_min),
    )


def test_an_entry_is_stored_as_its_own_json_under_its_own_key() -> None:
    stored = entry(7).to_table()
    assert json.loads(stored) == {
        "source": "deltas",
        "topic": "mplp.deltas",
        "partition": 0,
        "offset": 7,
        "key": PLAN_ID,
        "raw": '{"n": 7}',
        "event_time": "2026-03-01T10:00:00Z",
        "parked_at": "2026-03-01T10:00:00Z",
        "plan_known": False,
    }
    table_key = entry_key(PLAN_ID, entry(7).place)
    assert table_key == f"{PLAN_ID}|mplp.deltas|0|7"
    assert parse_entries(table_key, stored) == (PLAN_ID, [entry(7)])


def test_a_list_under_the_bare_key_is_still_read() -> None:
    """The layout that kept a plan's entries in one list: an upgrade loses none of them."""
    legacy = json.dumps([json.loads(entry(5).to_table()), json.loads(entry(6).to_table())])
    assert parse_entries(PLAN_ID, legacy.encode()) == (PLAN_ID, [entry(5), entry(6)])
    index = ParkedIndex()
    index.rebuild([(PLAN_ID, legacy.encode())], timedelta(minutes=2))
    assert {e.offset for e in index.of(PLAN_ID)} == {5, 6}
    assert index.stored_under(PLAN_ID, entry(5).place) == PLAN_ID  # the list's key


def test_the_index_holds_a_redelivered_record_once() -> None:
    index = ParkedIndex()
    assert index.add(PLAN_ID, entry(7), timedelta(minutes=2))
    assert not index.add(PLAN_ID, entry(7, parked_min=3), timedelta(minutes=2))  # after a crash
    assert index.add(PLAN_ID, entry(7, partition=1), timedelta(minutes=2))
    assert len(index) == 2
    index.remove(PLAN_ID, [entry(7).place, entry(7, partition=1).place])
    assert (len(index), PLAN_ID in index) == (0, False)


def test_deadlines_come_due_per_partition_in_time_order() -> None:
    index, grace = ParkedIndex(), timedelta(minutes=2)
    index.add("late", entry(1, parked_min=5), grace)
    index.add("early", entry(2, parked_min=1), grace)
    index.add("other", entry(3, parked_min=0, partition=1), grace)
    assert list(index.due(0, T + timedelta(minutes=2))) == []
    assert list(index.due(0, T + timedelta(minutes=3))) == ["early"]
    assert list(index.due(0, T + timedelta(minutes=10))) == ["late"]  # each popped once
    assert list(index.due(1, T + timedelta(minutes=10))) == ["other"]


# --- plan keys and stored snapshots of seed-shaped plans ------------------------------------


def test_plan_key_joins_every_spelling_of_a_plan_id() -> None:
    assert plan_key(PLAN_ID.upper()) == plan_key(PLAN_ID) == PLAN_ID
    assert plan_key("plan-123") == derived_uuid("plan-123") == plan_key("plan-123")
    assert plan_key("plan-123") != plan_key("PLAN-123")  # runtime ids are case-sensitive


def test_a_seed_shaped_snapshot_survives_the_table_round_trip() -> None:
    snap = PlanSnapshot.model_validate(
        {
            "plan": {
                "meta": {"protocolVersion": "1.0.0", "updated_at": "2026-03-01T10:00:00"},
                "plan_id": "plan-123",
                "context_id": "ctx-1",
                "title": "Add a cache",
                "objective": "Add a Redis cache",
                "status": "proposed",
                "steps": [{"step_id": "step-1", "description": "Measure"}],
                "original_intent": "orders are slow",
            },
            "project_id": "proj-7",
        }
    )
    state = merged(None, snap, T)
    assert state.updated_at == T  # no zone: read as UTC
    again = PlanState.from_table(state.to_table())
    assert again == state
    assert json.loads(state.to_table())["snapshot"]["plan"]["original_intent"] == "orders are slow"
