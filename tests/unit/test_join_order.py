"""Samples follow event time, not the order two topics are read in (agents/joins/plan_join.py).

Each case feeds the same records in two orders, or a record again as a replay after a
crash would, and asserts the samples are identical but for ``created_at``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import orjson
import pytest
from faust.types import TP

import learnstream.agents.joins.plan_join
from learnstream.agents.joins.planstore import PlanStore
from learnstream.streams.dlq.record import parse_headers
from learnstream.streams.join.expiry import ExpiryIndex, partition_of
from learnstream.streams.state.plan import PlanState
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.outputs import corrections_end
from tests.unit.test_agents import WHEN, Harness, harness, js, key_of


@pytest.fixture
async def h(tmp_path: Any) -> AsyncIterator[Harness]:
    async with harness(tmp_path) as built:
        yield built


def bodies(h: Harness) -> dict[str, dict[str, Any]]:
    """Return the samples sent, by id, without ``created_at``."""
    return {s["sample_id"]: {**s, "created_at": None} for s in h.sent()}


def unread_corrections(h: Harness, count: int) -> None:
    """Say the broker holds ``count`` corrections more than were fed (not read yet)."""
    deltas = h.runtime.settings.topics.name("delta_intents")
    corrections_end(h.runtime, lambda: h.feed.offsets.get((deltas, None), 0) + count)


def caught_up(h: Harness) -> None:
    unread_corrections(h, 0)


async def correct(h: Harness, delta: dict[str, Any], key: bytes) -> None:
    """Deliver ``delta`` and wait until it is fully processed.

    A test context's ``put`` returns once a record *enters* its agent, and the context's exit
    cancels what is still running: the samples a correction settles go out after an await,
    so a second record (a correction of an unknown plan: parked, no sample) follows it.
    """
    stranger = h.sim.delta(h.sim.plan(WHEN), WHEN)
    await h.put("delta_intents", js(delta), js(stranger), key=key)


async def ticks(h: Harness, plan_id: str) -> None:
    """Deliver two sweep ticks to the partition ``plan_id`` was parked on (the first is
    then fully processed)."""
    partition = h.runtime.join.parked(plan_id)[-1].partition
    async with h.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
        await agent.put(b"tick", partition=partition)


def story(h: Harness) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Return a plan, its approval, a correction a minute later and an execute after that."""
    snap = h.sim.plan(WHEN)
    decision = h.sim.decision(snap, True, WHEN)
    delta = h.sim.delta(snap, WHEN + timedelta(minutes=1))
    done = h.sim.stage(snap, "completed", WHEN + timedelta(minutes=2))
    return snap, decision, delta, done


async def test_execute_read_before_its_earlier_correction_waits_and_is_acceptable(
    tmp_path: Any,
) -> None:
    async with harness(tmp_path / "a") as a:
        snap, _, delta, done = story(a)
        for field, record in (("plans", snap), ("delta_intents", delta), ("pipeline_stage", done)):
            await a.put(field, js(record), key=key_of(snap))
        in_order = bodies(a)
    async with harness(tmp_path / "b") as b:
        snap, _, delta, done = story(b)
        await b.put("plans", js(snap), key=key_of(snap))
        unread_corrections(b, 1)  # the correction is on the broker, not read yet
        await b.put("pipeline_stage", js(done), key=key_of(snap))
        assert b.samples.await_count == 0  # it waits: "after a delta" is not known yet
        assert [e.plan_known for e in b.runtime.join.parked(snap["plan"]["plan_id"])] == [True]
        caught_up(b)
        await correct(b, delta, key_of(snap))
        assert b.families() == [
            ("error_correction", "acceptable"),
            ("pipeline_outcome", "acceptable"),
        ]
        assert b.runtime.join.parked(snap["plan"]["plan_id"]) == []
        assert bodies(b) == in_order


async def test_a_later_correction_does_not_make_an_execute_acceptable(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    done = h.sim.stage(snap, "completed", WHEN)
    later = h.sim.delta(snap, WHEN + timedelta(minutes=5))
    await h.put("plans", js(snap), key=key_of(snap))
    unread_corrections(h, 1)
    await h.put("pipeline_stage", js(done), key=key_of(snap))
    await correct(h, later, key_of(snap))  # read past the execute's time
    assert h.families() == [("error_correction", "acceptable"), ("pipeline_outcome", "good")]


@pytest.fixture
async def written(tmp_path: Any) -> AsyncIterator[Harness]:
    """A worker that writes every parked entry and every changed plan state at once (as
    exactly_once does, or ``LEARNSTREAM_JOIN__HOLD_IN_MEMORY=0s``)."""
    async with harness(tmp_path, join={"hold_in_memory": "0s"}) as built:
        yield built


async def test_an_entry_waiting_for_corrections_completes_on_a_tick_after_a_rebalance(
    written: Harness,
) -> None:
    """A rebalance (or a restart) drops what the watermark knew of the partitions: the entries
    the table still holds must be woken by the next tick, not wait out the whole grace."""
    h = written
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plans", js(snap), key=key_of(snap))
    unread_corrections(h, 1)
    await h.put("pipeline_stage", js(h.sim.stage(snap, "completed", WHEN)), key=key_of(snap))
    assert [e.plan_known for e in h.runtime.join.parked(plan_id)] == [True]
    partitions = set(range(h.runtime.settings.topics.partitions))
    h.runtime.join.on_revoked(partitions)  # what the worker does when partitions go
    caught_up(h)  # the correction is read meanwhile (by whoever owns it now)
    await ticks(h, plan_id)
    assert h.families() == [("pipeline_outcome", "good")]
    assert h.runtime.join.parked(plan_id) == []


async def test_a_rebuild_wakes_only_entries_whose_plan_is_known(written: Harness) -> None:
    """After a rebalance the index is rebuilt from the table: an entry waiting for the
    corrections input is handed to the watermark; one waiting for its plan is not (the plan
    completes it), so the watermark asks no end offsets for it on every tick."""
    h = written
    known, unknown = h.sim.plan(WHEN), h.sim.plan(WHEN)
    await h.put("plans", js(known), key=key_of(known))
    unread_corrections(h, 1)
    for snap in (known, unknown):
        await h.put("pipeline_stage", js(h.sim.stage(snap, "completed", WHEN)), key=key_of(snap))
    join = h.runtime.join
    join.on_revoked(set(range(h.runtime.settings.topics.partitions)))
    join.parked(known["plan"]["plan_id"])  # the first use rebuilds the index
    waiting = {plan for plans in join.watermark.waiting.values() for plan in plans}
    assert waiting == {known["plan"]["plan_id"]}
    assert [e.plan_known for e in join.parked(unknown["plan"]["plan_id"])] == [False]


async def hold_passes(h: Harness, partition: int) -> None:
    """Move the join's clock past ``join.hold_in_memory`` and tick ``partition``."""
    clock = h.runtime.join.clock
    h.runtime.join.clock = lambda: clock() + h.runtime.settings.join.hold_in_memory
    topic = h.runtime.topics.join_ticks.get_topic_name()
    await h.feed.put("sweeper", topic, b"tick", partition=partition)


def pinned(h: Harness, field: str, partition: int = 0) -> int | None:
    return h.runtime.progress.pinned(TP(h.runtime.settings.topics.name(field), partition))


async def test_an_entry_waits_in_memory_with_its_offset_pinned_then_is_done_with(
    h: Harness,
) -> None:
    """at_least_once: an execute waiting for the corrections input costs no pending record;
    its offset holds the partition's commits back until it completes."""
    snap, _, delta, execute = story(h)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plans", js(snap), key=key_of(snap))
    unread_corrections(h, 1)
    await h.put("pipeline_stage", js(execute), key=key_of(snap))
    (entry,) = h.runtime.join.parked(plan_id)
    assert not list(h.runtime.tables.pending.keys())  # in memory only
    assert pinned(h, "pipeline_stage") == entry.offset == 0
    caught_up(h)
    await correct(h, delta, key_of(snap))
    assert h.families() == [("error_correction", "acceptable"), ("pipeline_outcome", "acceptable")]
    assert h.runtime.join.parked(plan_id) == []
    assert not list(h.runtime.tables.pending.keys())  # never written, nothing to delete
    # The plan's state now records the ended stage: held in memory, it carries the execute's
    # record, which stays pinned until a tick past the hold writes the state.
    assert pinned(h, "pipeline_stage") == entry.offset
    assert plan_id not in h.runtime.tables.plan_state
    assert h.runtime.plans.get(plan_id).stages  # type: ignore[union-attr]
    await hold_passes(h, entry.partition)
    assert pinned(h, "pipeline_stage") is None
    assert pinned(h, "plans") is None
    assert PlanState.from_table(h.runtime.tables.plan_state[plan_id]).stages


async def test_an_entry_held_past_the_hold_is_written_on_a_tick_and_unpinned(
    h: Harness,
) -> None:
    """A decision whose plan does not come: after ``join.hold_in_memory`` the sweep writes
    it to pending and lets commits pass it; it completes from the table as before."""
    clock = h.runtime.join.clock
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    (entry,) = h.runtime.join.parked(plan_id)
    topic = h.runtime.topics.join_ticks.get_topic_name()
    await h.feed.put("sweeper", topic, b"tick", partition=entry.partition)  # within the hold
    assert not list(h.runtime.tables.pending.keys())
    assert pinned(h, "plan_approved") == entry.offset
    h.runtime.join.clock = lambda: clock() + h.runtime.settings.join.hold_in_memory
    await h.feed.put("sweeper", topic, b"tick", partition=entry.partition)
    stored = dict(h.runtime.tables.pending.data)
    assert [orjson.loads(v)["offset"] for v in stored.values()] == [entry.offset]
    assert pinned(h, "plan_approved") is None
    h.runtime.join.on_revoked({entry.partition})  # a restart: rebuilt from the table
    await h.put("plans", js(snap), key=key_of(snap))
    await h.feed.put("sweeper", topic, b"tick", partition=entry.partition)  # it settles
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert not list(h.runtime.tables.pending.keys())


async def test_a_rebalance_drops_entries_held_in_memory_but_not_their_pins(h: Harness) -> None:
    """Their records were never committed past: whoever owns the partition next reads them
    again. The pins hold until the assignment, so the commit Faust makes as the partitions
    go does not pass them."""
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    (entry,) = h.runtime.join.parked(plan_id)
    h.runtime.join.on_revoked({entry.partition})
    assert h.runtime.join.parked(plan_id) == []
    assert pinned(h, "plan_approved") == entry.offset
    h.runtime.progress.assign([])
    assert pinned(h, "plan_approved") is None


def send_waits(h: Harness, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """Return the list the join's sends are noted in from now on: (samples, whether it
    waited for their acks), for sends that carry samples."""
    waits: list[tuple[int, bool]] = []
    emitter = h.runtime.join.emitter
    real = emitter.send

    async def noting(ready: Any, source: tuple[str, int], *, wait: bool = False) -> Any:
        if ready:
            waits.append((len(ready), wait))
        return await real(ready, source, wait=wait)

    monkeypatch.setattr(emitter, "send", noting)
    return waits


async def test_completing_an_entry_held_in_memory_does_not_wait_for_acks(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing stored goes once its samples are acked: the entry's record is unpinned, and
    the commit that may pass it flushes the producer first (agents/joins/plan_join.py)."""
    waits = send_waits(h, monkeypatch)
    snap = h.sim.plan(WHEN)
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    (entry,) = h.runtime.join.parked(snap["plan"]["plan_id"])
    assert pinned(h, "plan_approved") == entry.offset
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert waits == [(1, False), (1, False)]  # the decision's own, then the completion's
    assert h.runtime.join.parked(snap["plan"]["plan_id"]) == []


async def test_completing_an_entry_stored_in_pending_waits_for_acks(
    written: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its tombstone must not reach the broker before the samples it stands for."""
    h = written
    waits = send_waits(h, monkeypatch)
    snap = h.sim.plan(WHEN)
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    assert list(h.runtime.tables.pending.keys())
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert waits == [(1, False), (1, True)]
    assert not list(h.runtime.tables.pending.keys())


def table_writes(h: Harness, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Return the list the plan_state table's writes are noted in from now on."""
    writes: list[str] = []
    table_type = type(h.runtime.plans.table)
    real = table_type.__setitem__

    def counting(table: Any, key: str, value: Any) -> None:
        if table is h.runtime.plans.table:
            writes.append(key)
        real(table, key, value)

    monkeypatch.setattr(table_type, "__setitem__", counting)
    return writes


async def test_a_plan_changed_many_times_within_the_hold_is_written_once(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """at_least_once: the snapshot, a correction and a stage's end each change the plan;
    the state waits in memory with their three records pinned, and the tick after the hold
    writes it once."""
    writes = table_writes(h, monkeypatch)
    snap, decision, delta, done = story(h)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put("plan_approved", js(decision), key=key_of(snap))
    await correct(h, delta, key_of(snap))
    await h.put("pipeline_stage", js(done), key=key_of(snap))
    assert h.families() == [
        ("confirm_decision", "good"),
        ("intent_resolution", "good"),
        ("error_correction", "acceptable"),
        ("pipeline_outcome", "acceptable"),
    ]
    state = h.runtime.plans.get(plan_id)
    assert state is not None  # read from memory
    assert state.delta_ids
    assert state.stages
    assert writes == []
    assert (pinned(h, "plans"), pinned(h, "delta_intents"), pinned(h, "pipeline_stage")) == (
        0,
        0,
        0,
    )
    assert h.runtime.plans.held(0) == 1
    registry, labels = h.runtime.metrics.registry, {"table": "plan_state"}
    assert registry.get_sample_value("learnstream_held_writes", labels) == 1
    await hold_passes(h, 0)
    assert registry.get_sample_value("learnstream_held_writes", labels) == 0
    assert writes == [plan_id]
    assert PlanState.from_table(h.runtime.tables.plan_state[plan_id]) == state
    assert (pinned(h, "plans"), pinned(h, "delta_intents"), pinned(h, "pipeline_stage")) == (
        None,
        None,
        None,
    )
    assert h.runtime.plans.held() == 0


async def test_a_plan_that_completes_a_stored_entry_is_written_at_once(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decision that waited past the hold is in ``pending``: the plan that completes it
    deletes that record, so the plan's state goes to the table first, not into memory."""
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    (entry,) = h.runtime.join.parked(plan_id)
    await hold_passes(h, entry.partition)
    assert list(h.runtime.tables.pending.keys())  # spilled
    writes = table_writes(h, monkeypatch)
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert writes == [plan_id]
    assert h.runtime.plans.held() == 0
    assert pinned(h, "plans") is None
    assert not list(h.runtime.tables.pending.keys())


async def test_a_rebalance_drops_held_plan_states_and_their_records_come_again(
    h: Harness,
) -> None:
    """A held state was never written: after a revocation the store no longer has it, the
    pins hold until the assignment, and the plan's record read again stores it again."""
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plans", js(snap), key=key_of(snap))
    assert plan_id in h.runtime.plans
    h.runtime.join.on_revoked({0})
    assert plan_id not in h.runtime.plans
    assert h.runtime.plans.get(plan_id) is None
    assert pinned(h, "plans") == 0
    h.runtime.progress.assign([])
    assert pinned(h, "plans") is None


async def test_a_rebalances_commit_writes_what_is_held_and_unpins_it(h: Harness) -> None:
    """Partitions going to another worker: the commit Faust makes on the way out first
    writes the plan states and parked entries held in memory, so it passes their records
    and the next owner reads the tables instead of those records again."""
    known, waiting = h.sim.plan(WHEN), h.sim.plan(WHEN)  # the second's plan comes later
    known_id, waiting_id = known["plan"]["plan_id"], waiting["plan"]["plan_id"]
    await h.put("plans", js(known), key=key_of(known))
    decision = h.sim.decision(waiting, True, WHEN)
    await h.put("plan_approved", js(decision), key=key_of(waiting))
    (entry,) = h.runtime.join.parked(waiting_id)
    assert pinned(h, "plans") == 0
    assert pinned(h, "plan_approved", entry.partition) == entry.offset
    h.runtime.progress.before_commit()  # an ordinary commit: everything stays held
    assert known_id not in h.runtime.tables.plan_state
    assert not list(h.runtime.tables.pending.keys())

    h.runtime.app.rebalancing = True
    try:
        h.runtime.progress.before_commit()
    finally:
        h.runtime.app.rebalancing = False
    assert PlanState.from_table(h.runtime.tables.plan_state[known_id]).snapshot.plan.plan_id
    stored = [orjson.loads(v) for v in h.runtime.tables.pending.data.values()]
    assert [(e["topic"], e["offset"]) for e in stored] == [(entry.topic, entry.offset)]
    assert pinned(h, "plans") is None
    assert pinned(h, "plan_approved", entry.partition) is None
    assert h.runtime.plans.held() == 0

    h.runtime.join.on_revoked(set(range(h.runtime.settings.topics.partitions)))
    h.runtime.progress.assign([])  # the next owner: the tables, not the records
    await h.put("plans", js(waiting), key=key_of(waiting))
    topic = h.runtime.topics.join_ticks.get_topic_name()
    await h.feed.put("sweeper", topic, b"tick", partition=entry.partition)
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]


async def test_the_last_commit_before_partitions_go_hands_over_while_sends_can_go(
    h: Harness,
) -> None:
    from learnstream.agents.seams.faust_compat import handing_over

    app = h.runtime.app
    assert not handing_over(app)  # an ordinary commit
    app.rebalancing = True
    assert handing_over(app)
    app.rebalancing = False
    app._stopped.set()  # the worker stops: Faust commits once more on the way out
    try:
        assert handing_over(app)
        app.producer.buffer._stopped.set()  # nothing written now would be sent: keep it held
        assert not handing_over(app)
    finally:
        app._stopped.clear()
        app.producer.buffer._stopped.clear()


async def test_a_handover_that_fails_leaves_what_is_held_pinned(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """If writing what is held fails, the rebalance's commit goes on without it: the records
    stay pinned and the next owner reads them again, as with no handover at all."""
    snap = h.sim.plan(WHEN)
    await h.put("plans", js(snap), key=key_of(snap))

    def failing() -> None:
        raise OSError("store gone")

    h.runtime.handover[:] = [failing]
    h.runtime.app.rebalancing = True
    try:
        h.runtime.progress.before_commit()
    finally:
        h.runtime.app.rebalancing = False
    assert pinned(h, "plans") == 0
    assert "could not write what is held before the partitions go (OSError)" in caplog.text
    assert "store gone" not in caplog.text  # the error's text may carry a value: not logged


async def test_exactly_once_writes_every_changed_plan_state(tmp_path: Any) -> None:
    async with harness(tmp_path, processing_guarantee="exactly_once") as h:
        assert not h.runtime.plans.holds
        snap = h.sim.plan(WHEN)
        await h.put("plans", js(snap), key=key_of(snap))
        assert snap["plan"]["plan_id"] in h.runtime.tables.plan_state
        assert h.runtime.plans.held() == 0


async def test_a_replayed_decision_counts_what_its_first_copy_counted(h: Harness) -> None:
    """kill -9 after a decision and a later correction: the decision is read again."""
    snap, decision, delta, _ = story(h)
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put("plan_approved", js(decision), key=key_of(snap))
    await h.put("delta_intents", js(delta), key=key_of(snap))
    await h.put("plan_approved", js(decision), key=key_of(snap))  # the replay
    intents = [s for s in h.sent() if s["sample_family"] == "intent_resolution"]
    assert [s["state"]["corrections_so_far"] for s in intents] == [0, 0]
    assert {**intents[0], "created_at": None} == {**intents[1], "created_at": None}


async def test_decision_waits_for_unread_corrections_then_counts_the_earlier_one(
    h: Harness,
) -> None:
    snap, _, delta, _ = story(h)
    decision = h.sim.decision(snap, True, WHEN + timedelta(minutes=3))
    await h.put("plans", js(snap), key=key_of(snap))
    unread_corrections(h, 1)
    await h.put("plan_approved", js(decision), key=key_of(snap))
    assert h.families() == [("confirm_decision", "good")]  # needs no plan, goes out at once
    caught_up(h)
    await correct(h, delta, key_of(snap))
    intent = h.sent()[-1]
    assert (intent["sample_family"], intent["state"]["corrections_so_far"]) == (
        "intent_resolution",
        1,
    )
    assert [f for f, _ in h.families()].count("confirm_decision") == 1  # not sent again


async def test_the_sweep_completes_a_waiting_execute_after_the_grace(tmp_path: Any) -> None:
    async with harness(tmp_path, join={"grace": "0s"}) as h:
        snap = h.sim.plan(WHEN)
        await h.put("plans", js(snap), key=key_of(snap))
        unread_corrections(h, 1)  # corrections that never come
        await h.put("pipeline_stage", js(h.sim.stage(snap, "completed", WHEN)), key=key_of(snap))
        assert h.samples.await_count == 0
        await ticks(h, snap["plan"]["plan_id"])
        assert h.families() == [("pipeline_outcome", "good")]
        assert h.dlq.await_count == 0


async def test_a_sweep_that_raises_is_dead_lettered_and_the_next_tick_runs(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, calls = learnstream.agents.joins.plan_join.Join.sweep, []

    async def flaky(
        self: learnstream.agents.joins.plan_join.Join, partition: int, source: tuple[str, int]
    ) -> None:
        calls.append(partition)
        if len(calls) == 1:
            raise RuntimeError("boom")
        await real(self, partition, source)

    monkeypatch.setattr(learnstream.agents.joins.plan_join.Join, "sweep", flaky)
    done = h.sim.plan(WHEN, status="completed")  # terminal since March: expires at the sweep
    partition = partition_of(done["plan"]["plan_id"], h.runtime.settings.topics.partitions)
    plans = h.runtime.settings.topics.name("plans")
    await h.feed.put("plans", plans, js(done), key=key_of(done), partition=partition)
    async with h.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)
        assert h.dlq.await_args is not None
        record = parse_headers(h.dlq.await_args.kwargs["headers"])
        assert record.reason == "builder_error"
        assert record.topic == h.runtime.topics.join_ticks.get_topic_name()
        assert "boom" not in record.error
        assert done["plan"]["plan_id"] in h.runtime.plans  # the sweep did nothing
        await agent.put(b"tick", partition=partition)  # the next tick, not the same one again
        await agent.put(b"tick", partition=partition)
    assert calls == [partition, partition, partition]
    assert done["plan"]["plan_id"] not in h.runtime.plans


async def test_a_sweep_key_that_fails_is_due_again_and_the_others_complete(
    tmp_path: Any,
) -> None:
    """Two plans' decisions waited out the grace for plans that never came; the first dead
    letter fails. The other key completes on the same tick, the tick is dead-lettered, and
    the next tick handles the key that failed: none lost its deadline on the way."""
    async with harness(tmp_path, join={"grace": "0s"}) as h:
        mine = [h.sim.plan(WHEN) for _ in range(2)]
        for snap in mine:
            await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
        parked = [h.runtime.join.parked(s["plan"]["plan_id"]) for s in mine]
        (partition,) = {entry.partition for entries in parked for entry in entries}
        real, failures = h.dlq.side_effect, [ConnectionError("broker gone")]

        async def flaky(*args: Any, **kwargs: Any) -> Any:
            if failures:
                raise failures.pop()
            return None if real is None else await real(*args, **kwargs)

        h.dlq.side_effect = flaky
        async with h.app.agents["learnstream.sweeper"].test_context() as agent:
            await agent.put(b"tick", partition=partition)  # fails on the first key
            await agent.put(b"tick", partition=partition)
            await agent.put(b"tick", partition=partition)
        reasons = [parse_headers(c.kwargs["headers"]).reason for c in h.dlq.await_args_list]
        # the failed send, the other key beside it, the tick it failed, then the first again
        assert reasons == [
            "plan_state_missing",
            "plan_state_missing",
            "builder_error",
            "plan_state_missing",
        ]
        assert all(h.runtime.join.parked(s["plan"]["plan_id"]) == [] for s in mine)
        assert not list(h.runtime.tables.pending.keys())
        errors = {
            parse_headers(c.kwargs["headers"]).error
            for i, c in enumerate(h.dlq.await_args_list)
            if i in (1, 3)
        }
        assert errors == {"no plan state arrived within LEARNSTREAM_JOIN__GRACE (0s)"}


class CountingTable(dict[str, Any]):
    """A plan_state table that counts its writes (each one a changelog record)."""

    writes = 0

    def __setitem__(self, key: str, value: Any) -> None:
        self.writes += 1
        super().__setitem__(key, value)


async def test_plan_state_is_written_only_when_it_changed(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    table = CountingTable()
    store = PlanStore(table, ExpiryIndex(4))  # type: ignore[arg-type]
    state = PlanState.from_table(orjson.dumps({"snapshot": snap, "updated_at": WHEN.isoformat()}))
    assert store.store("p", state) is True
    assert store.store("p", state) is False  # the very state it holds
    assert store.store("p", PlanState.from_table(table["p"])) is False  # an equal one
    changed = state.model_copy(update={"delta_ids": ("d1",)})
    assert store.store("p", changed) is True
    assert table.writes == 2


async def test_a_decision_leaves_plan_state_unwritten_and_a_stage_writes_it_once(
    written: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = written
    snap, decision, _, done = story(h)
    await h.put("plans", js(snap), key=key_of(snap))
    writes: list[str] = []
    table_type = type(h.runtime.plans.table)
    real = table_type.__setitem__

    def counting(table: Any, key: str, value: Any) -> None:
        writes.append(key)
        real(table, key, value)

    monkeypatch.setattr(table_type, "__setitem__", counting)
    await h.put("plan_approved", js(decision), key=key_of(snap))
    assert writes == []
    await h.put("pipeline_stage", js(done), key=key_of(snap))  # its ended stage is recorded
    await h.put("pipeline_stage", js(done), key=key_of(snap))  # redelivered: not again
    await h.put("plans", js(snap), key=key_of(snap))  # the same snapshot again
    assert len(writes) == 1
    first, again = [s for s in h.sent() if s["sample_family"] == "pipeline_outcome"]
    assert {**first, "created_at": None} == {**again, "created_at": None}
    assert first["input"]["pipeline_path"] == ["execute"]


async def test_captured_events_can_be_switched_off(tmp_path: Any) -> None:
    async with harness(tmp_path, topics={"emit_captured": False}) as h:
        snap, decision, _, _ = story(h)
        await h.put("plans", js(snap), key=key_of(snap))
        await h.put("plan_approved", js(decision), key=key_of(snap))
        assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
        assert h.events.await_count == 0
    async with harness(tmp_path / "on") as on:  # the default: one captured event per sample
        snap, decision, _, _ = story(on)
        await on.put("plans", js(snap), key=key_of(snap))
        await on.put("plan_approved", js(decision), key=key_of(snap))
        assert on.events.await_count == 2
        assert on.events.await_args is not None
        captured = orjson.loads(on.events.await_args.kwargs["value"])
        assert captured["event_type"] == "learning_sample_captured"


async def test_the_parked_index_is_rebuilt_in_slices_while_records_wait(
    written: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a rebalance the pending table is read a slice at a time, the event loop handed
    back between slices (a consumer's heartbeat must not starve on a large table); the
    record that asked for the index waits for all of it, and completes what it should."""
    h = written
    monkeypatch.setattr(learnstream.agents.joins.plan_join, "SCAN_SLICE", 2)
    snaps = [h.sim.plan(WHEN) for _ in range(5)]
    for snap in snaps:
        await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    assert len(list(h.runtime.tables.pending.keys())) == 5
    join = h.runtime.join
    join.on_revoked(set(range(h.runtime.settings.topics.partitions)))
    turns = 0

    async def count_turns() -> None:
        nonlocal turns
        while not join.index.built:
            turns += 1
            await asyncio.sleep(0)

    steps: list[int] = []  # the loop turns seen by each slice
    real_step = join.index.step

    def step(count: int, grace: timedelta) -> bool:
        steps.append(turns)
        return real_step(count, grace)

    monkeypatch.setattr(join.index, "step", step)
    counting = asyncio.ensure_future(count_turns())
    await h.put("plans", js(snaps[-1]), key=key_of(snaps[-1]))
    await asyncio.wait_for(counting, 5)
    assert len(steps) == 3  # five values in slices of two
    assert steps[0] < steps[1] < steps[2]  # the loop ran between the slices
    assert len(join.index) == 5  # every one indexed; the plan's decision waits to settle
    await ticks(h, snaps[-1]["plan"]["plan_id"])
    assert len(join.index) == 4
    assert [f for f, _ in h.families()].count("intent_resolution") == 1


async def test_keys_settled_together_complete_side_by_side(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys complete side by side, so their acks come back together: here each key's
    completion waits until every key of the wave has started (one after another, the
    first would wait for ever). A key that fails is retried, the others complete, and the
    first failure is raised once all are done."""
    monkeypatch.setattr(learnstream.agents.joins.plan_join, "COMPLETING", 3)
    keys, started, done = [f"plan-{n}" for n in range(5)], [], []
    everyone = asyncio.Event()

    async def complete(key: str, source: tuple[str, int]) -> None:
        started.append(key)
        if len(started) in (3, 5):  # each wave of three, then the last two
            everyone.set()
        await everyone.wait()
        if key == "plan-1":
            raise ConnectionError("broker gone")
        done.append(key)
        if len(started) == 3 and len(done) == 2:
            everyone.clear()  # the next wave waits for its own

    monkeypatch.setattr(h.runtime.join, "complete", complete)
    retried: list[str] = []
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(h.runtime.join._complete_all(keys, ("t", 0), retried.append), 5)
    assert sorted(done) == ["plan-0", "plan-2", "plan-3", "plan-4"]
    assert retried == ["plan-1"]


async def test_a_cancelled_settle_retries_every_key_not_done(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled mid-wave (a revocation), the keys not completed, in the wave and after it,
    are all retried, and none is left running."""
    monkeypatch.setattr(learnstream.agents.joins.plan_join, "COMPLETING", 2)
    never, running = asyncio.Event(), []

    async def complete(key: str, source: tuple[str, int]) -> None:
        if key == "plan-0":
            return
        running.append(key)
        try:
            await never.wait()
        finally:
            running.remove(key)

    monkeypatch.setattr(h.runtime.join, "complete", complete)
    retried: list[str] = []
    keys = [f"plan-{n}" for n in range(4)]
    task = asyncio.ensure_future(h.runtime.join._complete_all(keys, ("t", 0), retried.append))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert retried == ["plan-1", "plan-2", "plan-3"]
    assert running == []
