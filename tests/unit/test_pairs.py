"""Preference pairs: the wire model, replan matching in event time, corrections as merge
patches, expiry, and the two agents through ``test_context`` (no broker)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import AsyncMock

import faust
import orjson
import pytest

from learnstream.agents.runtime import Runtime
from learnstream.agents.sender import Sender
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.io.app import create_app
from learnstream.streams.join.expiry import EXPIRY_BUCKET
from learnstream.streams.mplp.decode import decode_decision, decode_delta, decode_plan
from learnstream.streams.samples.builders import build_error_correction, build_intent_resolution
from learnstream.streams.samples.ids import is_uuid4
from learnstream.streams.samples.outbox import prepare
from learnstream.streams.samples.pairs import (
    PreferencePair,
    correction_pair,
    merge_patch,
    pair_id,
    pair_sample,
)
from learnstream.streams.samples.replans import (
    MAX_PLAN_BYTES,
    MAX_PLANS,
    IntentPlans,
    Plan,
    due,
    match,
    plan_of,
    read_plan,
)
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.sim.simulate import PII_SAMPLES, Simulator
from learnstream.streams.state.plan import merge_snapshot
from tests.support.apps import close_consumer_loop
from tests.support.clock import SettableClock
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.offsets import FakeEnds
from tests.support.outputs import Feed, mock_outputs
from tests.unit.test_layers import KAFKA_CLIENTS, closure, imports, is_under

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CREATED = "2026-03-02T09:00:00Z"
WIRE_FIELDS = [
    "pair_id", "kind", "intent_id", "project_id", "family", "prompt", "chosen", "rejected",
    "chosen_sample_id", "rejected_sample_id", "event_time", "created_at", "margin",
]  # fmt: skip


class Scenario:
    """Samples of one seeded simulator, built as the worker builds them."""

    def __init__(self, pii_ratio: float = 0.0) -> None:
        self.sim = Simulator(seed=11, pii_ratio=pii_ratio)

    def plan(self, intent_of: dict[str, Any] | None = None) -> dict[str, Any]:
        if intent_of is None:
            return self.sim.plan(T0)
        # a replan: the same intent, in the same project (plans of two projects never meet)
        return self.sim.plan(T0, project_id=intent_of["project_id"], intent=intent_of["intent"])

    def decided(self, snap: dict[str, Any], approved: bool, seconds: float) -> LearningSample:
        when = T0 + timedelta(seconds=seconds)
        state = merge_snapshot(None, decode_plan(orjson.dumps(snap)), when)
        kind = "plan_approved" if approved else "plan_rejected"
        event = decode_decision(orjson.dumps(self.sim.decision(snap, approved, when)), kind)
        assert state is not None
        return build_intent_resolution(event, state, NOW)

    def corrected(self, snap: dict[str, Any], changes: dict[str, Any] | None) -> LearningSample:
        state = merge_snapshot(None, decode_plan(orjson.dumps(snap)), T0)
        event = decode_delta(orjson.dumps(self.sim.delta(snap, T0, changes=changes)))
        assert state is not None
        return build_error_correction(event, state, NOW)


def plan(sample: LearningSample) -> Plan:
    found = plan_of(sample)
    assert isinstance(found, Plan)
    return found


def feed(*samples: LearningSample) -> tuple[list[PreferencePair], IntentPlans | None]:
    """Match samples in arrival order as one partition would; return pairs and the holdings."""
    held: IntentPlans | None = None
    out: list[PreferencePair] = []
    for sample in samples:
        held, pairs, reason = match(held, plan(sample), NOW, 2)
        assert reason is None
        out += pairs
    return out, held


def without_created(pairs: list[PreferencePair]) -> list[dict[str, Any]]:
    return [p.model_dump(exclude={"created_at"}) for p in pairs]


# --- the wire model ---------------------------------------------------------------------------


def test_pair_ids_are_uuid4_and_a_pure_function_of_kind_and_samples() -> None:
    one = pair_id("replan", "r", "a")
    assert is_uuid4(one)
    assert one == pair_id("replan", "r", "a")
    assert len({one, pair_id("replan", "a", "r"), pair_id("correction", "r", "a")}) == 3


def test_the_wire_form_has_every_field_and_round_trips() -> None:
    s = Scenario()
    snap = s.plan()
    (pair,), _ = feed(s.decided(snap, False, 0), s.decided(s.plan(snap), True, 60))
    value = orjson.loads(pair.to_json())
    assert list(value) == WIRE_FIELDS
    assert value["margin"] == 1.0  # approved 1.0 over rejected 0.0 (meta.quality_score)
    assert pair.key() == value["pair_id"].encode()
    assert PreferencePair.model_validate_json(pair.to_json()) == pair


# --- replans ----------------------------------------------------------------------------------


def test_a_rejection_then_an_approval_of_one_intent_is_one_pair() -> None:
    s = Scenario()
    first = s.plan()
    rejected, approved = s.decided(first, False, 0), s.decided(s.plan(first), True, 60)
    (pair,), held = feed(rejected, approved)
    assert pair.kind == "replan"
    assert pair.family == "intent_resolution"
    assert pair.intent_id == first["intent"]["intent_id"]
    assert pair.project_id == rejected.meta.project_id
    assert pair.prompt == rejected.input
    assert pair.rejected == {
        k: v for k, v in rejected.output.items() if k != "resolution_quality_label"
    }
    assert pair.chosen["plan_id"] == approved.output["plan_id"] != pair.rejected["plan_id"]
    assert "resolution_quality_label" not in pair.chosen
    assert (pair.rejected_sample_id, pair.chosen_sample_id) == (
        rejected.sample_id,
        approved.sample_id,
    )
    assert pair.pair_id == pair_id("replan", rejected.sample_id, approved.sample_id)
    assert pair.event_time == approved.meta.event_time == "2026-03-01T12:01:00Z"
    assert pair.created_at == CREATED
    assert held is not None
    assert [p.prompt for p in held.approved] == [{}]


def test_the_approval_arriving_first_makes_the_same_pair() -> None:
    s = Scenario()
    first = s.plan()
    rejected, approved = s.decided(first, False, 0), s.decided(s.plan(first), True, 60)
    in_order, _ = feed(rejected, approved)
    reversed_, _ = feed(approved, rejected)
    assert len(in_order) == 1
    assert without_created(reversed_) == without_created(in_order)


@pytest.mark.parametrize("arrival", ["rejection first", "approval first"])
def test_an_approval_before_the_rejection_in_event_time_makes_no_pair(arrival: str) -> None:
    s = Scenario()
    first = s.plan()
    approved, rejected = s.decided(first, True, 0), s.decided(s.plan(first), False, 60)
    order = (rejected, approved) if arrival == "rejection first" else (approved, rejected)
    assert feed(*order)[0] == []


def test_equal_event_times_make_no_pair() -> None:
    s = Scenario()
    first = s.plan()
    assert feed(s.decided(first, False, 5), s.decided(s.plan(first), True, 5))[0] == []


def test_each_rejection_before_the_approval_makes_a_pair_and_a_later_one_none() -> None:
    s = Scenario()
    first = s.plan()
    r1, r2 = s.decided(first, False, 0), s.decided(s.plan(first), False, 30)
    approved, r3 = s.decided(s.plan(first), True, 60), s.decided(s.plan(first), False, 90)
    for order in ((r1, r2, approved, r3), (r3, approved, r2, r1), (approved, r1, r3, r2)):
        pairs, held = feed(*order)
        assert sorted(p.rejected_sample_id for p in pairs) == sorted([r1.sample_id, r2.sample_id])
        assert {p.chosen_sample_id for p in pairs} == {approved.sample_id}
        assert held is not None
        assert (len(held.rejected), len(held.approved)) == (3, 1)


def test_other_intents_do_not_pair() -> None:
    s = Scenario()
    a, b = s.plan(), s.plan()
    assert a["intent"]["intent_id"] != b["intent"]["intent_id"]
    # The agent keeps one holding per intent id: two holdings, no pair.
    assert feed(s.decided(a, False, 0))[0] == feed(s.decided(b, True, 60))[0] == []


def test_a_replayed_plan_pairs_again_with_the_same_id_but_is_held_once() -> None:
    s = Scenario()
    first = s.plan()
    rejected, approved = s.decided(first, False, 0), s.decided(s.plan(first), True, 60)
    pairs, held = feed(rejected, approved, approved)
    assert len(pairs) == 2
    assert pairs[0].pair_id == pairs[1].pair_id
    assert held is not None
    assert len(held.approved) == 1


def test_an_intent_holds_at_most_max_plans_per_side() -> None:
    s = Scenario()
    first = s.plan()
    held: IntentPlans | None = None
    for i in range(MAX_PLANS):
        held, _, reason = match(held, plan(s.decided(first, False, i)), NOW, 0)
        assert reason is None
    late = plan(s.decided(first, False, MAX_PLANS))
    held, _, reason = match(held, late, NOW, 0)
    assert reason == "intent_full"
    assert len(held.rejected) == MAX_PLANS
    held, pairs, _ = match(held, plan(s.decided(first, True, 10_000)), NOW, 0)
    assert len(pairs) == MAX_PLANS
    held, _, reason = match(held, late, NOW, 0)  # a replay of a plan not held: still full
    assert reason == "intent_full"


def test_an_intent_holds_at_most_max_held_bytes() -> None:
    s = Scenario()
    first = s.plan()
    big = plan(s.decided(first, False, 0))
    big = big.model_copy(update={"prompt": {"text": "x" * (MAX_PLAN_BYTES // 3)}})
    held: IntentPlans | None = None
    reasons = []
    for i in range(4):
        moved = big.model_copy(update={"sample_id": f"s{i}"})
        held, _, reason = match(held, moved, NOW, 0)
        reasons.append(reason)
    assert reasons == [None, None, "intent_full", "intent_full"]
    assert held is not None
    assert held.size == sum(len(p.to_json()) for p in held.rejected) <= MAX_PLAN_BYTES


def test_an_undecided_plan_makes_no_plan() -> None:
    s = Scenario()
    sample = s.decided(s.plan(), True, 0)
    output = {k: v for k, v in sample.output.items() if k != "resolution_quality_label"}
    assert plan_of(sample.model_copy(update={"output": output})) == "undecided"


def test_an_intent_is_due_ttl_after_its_last_plan() -> None:
    s = Scenario()
    _, held = feed(s.decided(s.plan(), False, 0))
    assert held is not None
    ttl = Settings().pairs.ttl
    assert ttl == timedelta(hours=24)
    assert not due(held, NOW + ttl - timedelta(seconds=1), ttl)
    assert due(held, NOW + ttl, ttl)


def test_the_ttl_reads_like_the_other_durations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_PAIRS__TTL", "90m")
    assert Settings().pairs.ttl == timedelta(minutes=90)
    assert orjson.loads(Settings().model_dump_json())["pairs"]["ttl"] == "90m"


def test_a_ttl_longer_than_the_rekey_topic_keeps_records_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Intents restore from the re-key topic: a TTL it does not keep records for is an error
    naming the limit, not pairs lost after a rebalance."""
    monkeypatch.setenv("LEARNSTREAM_PAIRS__TTL", "7d")
    with pytest.raises(ValueError, match="at most 7 days less an hour"):
        Settings()
    monkeypatch.setenv("LEARNSTREAM_PAIRS__TTL", "6d")
    assert Settings().pairs.ttl == timedelta(days=6)


# --- corrections ------------------------------------------------------------------------------


def test_an_applicable_correction_is_a_pair_of_the_plan_before_and_after() -> None:
    s = Scenario()
    snap = s.plan()
    sample = s.corrected(snap, {"title": "Roll back first"})
    pair = correction_pair(sample, CREATED)
    assert isinstance(pair, PreferencePair)
    state = sample.input["plan_state"]
    assert pair.rejected == state
    assert pair.chosen == {**state, "title": "Roll back first"}
    assert pair.prompt == {k: v for k, v in sample.input.items() if k != "plan_state"}
    assert (pair.kind, pair.family, pair.intent_id) == (
        "correction", "error_correction", snap["intent"]["intent_id"],
    )  # fmt: skip
    assert pair.chosen_sample_id == pair.rejected_sample_id == sample.sample_id
    assert pair.pair_id == pair_id("correction", sample.sample_id, sample.sample_id)
    assert pair.event_time == sample.meta.event_time


def test_a_steps_patch_replaces_the_steps() -> None:
    s = Scenario()
    steps = [{"description": "Take a backup", "status": "pending"}]
    pair = correction_pair(s.corrected(s.plan(), {"steps": steps}), CREATED)
    assert isinstance(pair, PreferencePair)
    assert pair.chosen["steps"] == steps != pair.rejected["steps"]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (None, "unknown_key"),  # the simulator's default {"steps_added": 1}
        ({"title": "x", "owner": "y"}, "unknown_key"),
        ({}, "unknown_key"),  # the simulator maps {} to its default as well
    ],
)
def test_a_change_description_is_no_patch(changes: dict[str, Any] | None, reason: str) -> None:
    s = Scenario()
    assert correction_pair(s.corrected(s.plan(), changes), CREATED) == reason


@pytest.mark.parametrize(
    ("result", "state", "reason"),
    [
        ("Add a rollback step", {"title": "a"}, "not_an_object"),  # no changes: the summary
        ([{"op": "add"}], {"title": "a"}, "not_an_object"),  # a JSON Patch (RFC 6902) is not
        ({}, {"title": "a"}, "empty_patch"),
        ({"title": "a"}, {"title": "a"}, "no_change"),
        ({"title": "b"}, "a plan", "no_plan_state"),
    ],
)
def test_no_pair_reasons(result: Any, state: Any, reason: str) -> None:
    s = Scenario()
    sample = s.corrected(s.plan(), {"title": "b"})
    sample = sample.model_copy(
        update={
            "output": {**sample.output, "result": result},
            "input": {**sample.input, "plan_state": state},
        }
    )
    assert correction_pair(sample, CREATED) == reason


def test_merge_patch_follows_rfc_7386() -> None:
    # Examples of RFC 7386 appendix A.
    assert merge_patch({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "b"}, {"b": "c"}) == {"a": "b", "b": "c"}
    assert merge_patch({"a": "b"}, {"a": None}) == {}
    assert merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert merge_patch({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}
    assert merge_patch({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert merge_patch({"a": "foo"}, "bar") == "bar"
    target = {"a": {"b": 1}}
    merge_patch(target, {"a": {"b": 2}})
    assert target == {"a": {"b": 1}}  # never changes its input


def test_a_patch_that_deletes_a_field_is_applicable() -> None:
    s = Scenario()
    sample = s.corrected(s.plan(), {"objective": None})
    pair = correction_pair(sample, CREATED)
    assert isinstance(pair, PreferencePair)
    assert "objective" not in pair.chosen
    assert "objective" in pair.rejected


# --- decoding ---------------------------------------------------------------------------------


def test_a_sample_as_written_validates_into_the_same_sample() -> None:
    s = Scenario()
    sample = s.decided(s.plan(), True, 0)
    assert pair_sample(sample.to_dict()) == sample  # type: ignore[arg-type]


def test_samples_of_other_families_are_skipped_unvalidated() -> None:
    assert pair_sample({"sample_family": "confirm_decision", "input": "not validated"}) is None


@pytest.mark.parametrize(
    "sample",
    [
        {"note": PII_SAMPLES["email"]},
        {"sample_family": "intent_resolution", "dana_whitfield": 1},
        {"sample_family": "error_correction", "sample_id": "dana_w"},
    ],
)
def test_invalid_samples_are_invalid_events_naming_no_value(sample: dict[str, Any]) -> None:
    with pytest.raises(InvalidEvent) as caught:
        pair_sample(sample)
    assert caught.value.reason == "schema_violation"
    assert all(v not in str(caught.value) for v in PII_SAMPLES.values())
    assert "dana" not in str(caught.value)


def test_a_bad_rekeyed_record_is_an_invalid_event() -> None:
    with pytest.raises(InvalidEvent) as caught:
        read_plan(b'{"sample_id": "' + PII_SAMPLES["email"].encode() + b'"}')
    assert caught.value.reason == "schema_violation"
    assert PII_SAMPLES["email"] not in str(caught.value)


@pytest.mark.parametrize(
    "name", ["learnstream.streams.samples.pairs", "learnstream.streams.samples.replans"]
)
def test_the_pair_logic_is_pure(name: str) -> None:
    bad = [f"{m}: {i}" for m in closure(name) for i in imports(m) if is_under(i, KAFKA_CLIENTS)]
    assert name in closure(name)
    assert not bad


# --- the agents -------------------------------------------------------------------------------


class Rekeys:
    """The re-key topic as the replans agent was fed it: what a restore reads back."""

    def __init__(self) -> None:
        #: partition -> (offset, timestamp in ms, value) of every record fed
        self.records: dict[int, list[tuple[int, int, bytes]]] = {}
        #: (partition, since_ms, until) of every read
        self.reads: list[tuple[int, int, int]] = []

    async def read(self, partition: int, since_ms: int, until: int) -> AsyncIterator[Any]:
        self.reads.append((partition, since_ms, until))
        for offset, timestamp, value in self.records.get(partition, []):
            if offset < until and timestamp >= since_ms:
                yield offset, timestamp, value


@dataclass
class Worker:
    """Every agent wired; the pairs, re-key and DLQ topics' sends recorded."""

    app: faust.App
    runtime: Runtime
    mocks: dict[str, AsyncMock]
    feed: Feed
    clock: SettableClock
    rekeys: Rekeys

    async def sample(self, sample: LearningSample, source: int = 2) -> None:
        """Send one sample through the emitter's hooks, then what it re-keyed to the replans
        agent."""
        rekeyed = self.mocks["pair_intents"].await_count
        out = prepare(sample, self.runtime.anonymizer, self.runtime.codec, NOW)
        for hook in self.runtime.on_sent:
            await hook(out, (self.runtime.settings.topics.name("plans"), source))
        for call in self.mocks["pair_intents"].await_args_list[rekeyed:]:
            await self.rekeyed(call.kwargs["value"], call.kwargs["key"])

    async def rekeyed(self, value: bytes, key: bytes, partition: int = 1) -> None:
        topic = self.runtime.topics.pair_intents.get_topic_name()
        offset = self.feed.offsets.get((topic, partition), 0)
        at = int(self.clock().timestamp() * 1000)
        self.rekeys.records.setdefault(partition, []).append((offset, at, value))
        await self.feed.put("replans", topic, value, key=key, partition=partition)

    @property
    def steps(self) -> Any:
        """The pairs miner's steps (the object whose ``mine`` is the on_sent hook)."""
        return next(hook.__self__ for hook in self.runtime.on_sent)

    def pairs(self) -> list[dict[str, Any]]:
        out = []
        for call in self.mocks["preference_pairs"].await_args_list:
            pair = orjson.loads(call.kwargs["value"])
            assert call.kwargs["key"] == pair["pair_id"].encode()
            out.append(pair)
        return out

    def metric(self, name: str, **labels: str) -> float | None:
        return self.runtime.metrics.registry.get_sample_value(name, labels)


@contextlib.asynccontextmanager
async def running(tmp_path: Any, **settings_: Any) -> AsyncIterator[Worker]:
    settings = Settings(
        store="memory://", sample_format="json", data_dir=str(tmp_path), **settings_
    )
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    clock, rekeys = SettableClock(), Rekeys()
    runtime = wire(app, settings, ends=FakeEnds(), clock=clock, replay=rekeys)
    mocks = mock_outputs(app, runtime, "preference_pairs", "pair_intents")
    yield Worker(app, runtime, mocks, Feed(app), clock, rekeys)
    close_consumer_loop(app)


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[Worker]:
    async with running(tmp_path) as built:
        yield built


def intent_key(snap: dict[str, Any]) -> str:
    return f"{snap['project_id']}:{snap['intent']['intent_id']}"


async def test_intents_are_held_in_memory_with_no_table_and_nothing_pinned(
    tmp_path: Any,
) -> None:
    """at_least_once: the intents have no changelog, so no re-keyed record waits for a write
    (the pins hold none) and the first record of a partition reads nothing back."""
    async with running(tmp_path) as worker:
        s = Scenario()
        worker.clock.now = NOW
        first = s.plan()
        await worker.sample(s.decided(first, False, 0))
        await worker.sample(s.decided(s.plan(first), True, 20))
        assert len(worker.pairs()) == 1
        assert "pair_intents" not in worker.app.tables
        assert set(worker.steps.intents[1]) == {intent_key(first)}
        topic = worker.runtime.topics.pair_intents.get_topic_name()
        progress = worker.runtime.progress
        (tp,) = [tp for tp in progress.partitions() if tp.topic == topic]
        assert progress.pinned(tp) is None
        assert progress.next_offset(tp) == 2
        assert worker.rekeys.reads == []  # offset 0 first: nothing before it to fold


async def test_a_partition_assigned_again_restores_its_intents_from_the_rekey_topic(
    worker: Worker,
) -> None:
    """Revoked, a partition's intents are forgotten; its next record first folds the
    partition's re-keyed records below it again (ticks and bad records skipped, nothing
    sent), so a replan after the rebalance makes the pair it would have made without one."""
    s = Scenario()
    worker.clock.now = NOW
    first, other = s.plan(), s.plan()
    rejected = s.decided(first, False, 0)
    await worker.sample(rejected)
    await worker.sample(s.decided(other, True, 0))
    await worker.rekeyed(b"", b"tick")
    await worker.rekeyed(b'{"not": "a plan"}', b"k")  # dead-lettered as it is read
    assert worker.mocks["dlq"].await_count == 1
    before = {key: held.model_dump() for key, held in worker.steps.intents[1].items()}
    sent = worker.mocks["preference_pairs"].await_count, worker.mocks["samples"].await_count

    worker.steps.invalidate({1})  # a revocation
    assert 1 not in worker.steps.intents
    worker.clock.now = NOW + timedelta(minutes=5)
    approved = s.decided(s.plan(first), True, 20)
    await worker.sample(approved)

    since = NOW + timedelta(minutes=5) - worker.runtime.settings.pairs.ttl - EXPIRY_BUCKET
    assert worker.rekeys.reads == [(1, int(since.timestamp() * 1000), 4)]
    assert worker.metric("learnstream_pair_intents_restored_total") == 4
    (pair,) = worker.pairs()
    assert pair["rejected_sample_id"] == rejected.sample_id
    assert pair["chosen_sample_id"] == approved.sample_id
    assert worker.mocks["dlq"].await_count == 1  # the bad record is not dead-lettered again
    assert worker.mocks["preference_pairs"].await_count == sent[0] + 1
    assert worker.mocks["samples"].await_count == sent[1]  # no plan_optimization either
    restored = worker.steps.intents[1]
    assert restored[intent_key(other)].model_dump() == before[intent_key(other)]
    assert len(restored[intent_key(first)].approved) == 1


async def test_a_restore_runs_before_its_record_is_handled_so_commits_need_not_wait(
    tmp_path: Any,
) -> None:
    """exactly_once: a commit waits for the records being handled (``Progress.quiet``); the
    restore runs before its record is, up to where the partition's records start, so a
    commit during a long restore goes through."""
    async with running(tmp_path, processing_guarantee="exactly_once") as worker:
        s = Scenario()
        worker.clock.now = NOW
        first = s.plan()
        await worker.sample(s.decided(first, False, 0))
        worker.steps.invalidate({1})
        read, committed = worker.rekeys.read, []

        async def committing_meanwhile(
            partition: int, since_ms: int, until: int
        ) -> AsyncIterator[Any]:
            async with asyncio.timeout(1.0), worker.runtime.progress.quiet():
                committed.append(until)
            async for record in read(partition, since_ms, until):
                yield record

        worker.rekeys.read = committing_meanwhile  # type: ignore[method-assign]
        await worker.sample(s.decided(s.plan(first), True, 20))
        assert committed == [1]  # up to the next record to handle: the rejection is read back
        assert len(worker.pairs()) == 1


async def test_a_restore_folds_only_the_last_ttl_and_counts_no_expiry(worker: Worker) -> None:
    """An intent whose last plan came over ``pairs.ttl`` (and the index's minute) before the
    restore is not read back: a replan of it then pairs with nothing, as it would have
    without the rebalance, and no expiry is counted twice."""
    s = Scenario()
    ttl = worker.runtime.settings.pairs.ttl
    worker.clock.now = NOW
    old, recent = s.plan(), s.plan()
    await worker.sample(s.decided(old, False, 0))
    worker.clock.now = NOW + ttl
    await worker.sample(s.decided(recent, False, 0))
    worker.steps.invalidate({1})
    worker.clock.now = NOW + ttl + 2 * EXPIRY_BUCKET
    await worker.sample(s.decided(s.plan(old), True, 20))
    assert set(worker.steps.intents[1]) == {intent_key(old), intent_key(recent)}
    assert worker.steps.intents[1][intent_key(old)].rejected == []
    assert worker.pairs() == []
    assert worker.metric("learnstream_pair_intents_restored_total") == 1
    assert not worker.metric("learnstream_pair_intents_expired_total", approved="false")


async def test_a_failed_restore_is_retried_before_the_record_is_matched(
    worker: Worker, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A read that fails (a broker away) is retried: matching against a partial intent
    would lose its pair for good, and the record must not be dead-lettered."""
    s = Scenario()
    worker.clock.now = NOW
    first = s.plan()
    await worker.sample(s.decided(first, False, 0))
    worker.steps.invalidate({1})
    read, failures = worker.rekeys.read, [OSError("broker away")]

    async def flaky(partition: int, since_ms: int, until: int) -> AsyncIterator[Any]:
        async for record in read(partition, since_ms, until):
            if failures:
                raise failures.pop()
            yield record

    monkeypatch.setattr(worker.rekeys, "read", flaky)
    monkeypatch.setattr("learnstream.agents.joins.pair_miner.asyncio.sleep", AsyncMock())
    await worker.sample(s.decided(s.plan(first), True, 20))
    assert len(worker.pairs()) == 1
    assert worker.mocks["dlq"].await_count == 0
    assert "restoring learnstream.pair_intents[1] failed (OSError" in caplog.text


async def test_plans_of_one_intent_id_in_two_projects_never_pair(worker: Worker) -> None:
    """Runtime intent ids recur across projects: a pair would carry one project's plan under
    the other's consent."""
    s = Scenario()
    first = s.plan()
    elsewhere = s.sim.plan(T0, intent=first["intent"])  # the same intent id, another project
    assert elsewhere["project_id"] != first["project_id"]
    await worker.sample(s.decided(first, False, 0))
    await worker.sample(s.decided(elsewhere, True, 60))
    keys = {c.kwargs["key"] for c in worker.mocks["pair_intents"].await_args_list}
    assert len(keys) == 2
    assert worker.pairs() == []


async def test_agents_rekey_plans_by_intent_and_send_the_pair(worker: Worker) -> None:
    s = Scenario()
    first = s.plan()
    rejected, approved = s.decided(first, False, 0), s.decided(s.plan(first), True, 60)
    await worker.sample(approved)
    await worker.sample(rejected)
    keys = [c.kwargs["key"] for c in worker.mocks["pair_intents"].await_args_list]
    assert keys == [f"{first['project_id']}:{first['intent']['intent_id']}".encode()] * 2
    (pair,) = worker.pairs()
    assert pair["pair_id"] == pair_id("replan", rejected.sample_id, approved.sample_id)
    written = prepare(rejected, worker.runtime.anonymizer, worker.runtime.codec, NOW).clean
    assert pair["prompt"] == written["input"] != rejected.input  # opt-out patterns applied
    assert worker.metric("learnstream_preference_pairs_total", kind="replan") == 1
    assert worker.mocks["dlq"].await_count == 0


async def test_agents_send_correction_pairs_and_count_the_others(worker: Worker) -> None:
    s = Scenario()
    snap = s.plan()
    await worker.sample(s.corrected(snap, {"title": "Roll back first"}))
    await worker.sample(s.corrected(snap, None))
    await worker.sample(s.corrected(snap, None))
    assert [p["kind"] for p in worker.pairs()] == ["correction"]
    assert worker.metric("learnstream_no_pair_total", reason="unknown_key") == 2
    assert worker.mocks["pair_intents"].await_count == 0  # corrections need no re-key


async def test_samples_of_other_families_send_nothing(worker: Worker) -> None:
    s = Scenario()
    other = s.decided(s.plan(), True, 0).model_copy(update={"sample_family": "pipeline_outcome"})
    await worker.sample(other)
    assert worker.mocks["pair_intents"].await_count == worker.mocks["dlq"].await_count == 0
    assert worker.pairs() == []


async def test_the_pairs_come_from_the_anonymized_sample(worker: Worker) -> None:
    s = Scenario(pii_ratio=1.0)
    first = s.plan()
    await worker.sample(s.decided(first, False, 0))
    await worker.sample(s.decided(s.plan(first), True, 60))
    (pair,) = worker.pairs()
    wire = orjson.dumps(pair).decode()
    assert all(value not in wire for value in PII_SAMPLES.values())
    assert "<" in pair["prompt"]["intent_text"], "the intent's PII was replaced"


def test_the_samples_topic_is_not_read_back(tmp_path: Any) -> None:
    settings = Settings(store="memory://", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings)
    samples = settings.topics.name("samples")
    assert all(samples not in agent.channel.topics for agent in app.agents.values())
    assert len(runtime.on_sent) == 1


async def test_a_restore_finished_after_a_revocation_is_used_once_not_kept(
    worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The partition went while its intents were read back: the record being handled is
    matched against them, but they are not kept (its next owner, maybe this worker again,
    restores from where it starts)."""
    s = Scenario()
    worker.clock.now = NOW
    first = s.plan()
    await worker.sample(s.decided(first, False, 0))
    worker.steps.invalidate({1})
    read = worker.rekeys.read

    async def revoked_meanwhile(partition: int, since_ms: int, until: int) -> AsyncIterator[Any]:
        async for record in read(partition, since_ms, until):
            yield record
        worker.steps.invalidate({1})

    monkeypatch.setattr(worker.rekeys, "read", revoked_meanwhile)
    await worker.sample(s.decided(s.plan(first), True, 20))
    assert len(worker.pairs()) == 1
    assert 1 not in worker.steps.intents
    monkeypatch.setattr(worker.rekeys, "read", read)
    await worker.rekeyed(b"", b"tick")  # the next restore is kept, its intent due on a tick
    assert set(worker.steps.intents[1]) == {intent_key(first)}
    assert len(worker.steps.quiet) == 1


async def test_intents_expire_on_a_tick_and_when_a_plan_finds_them_expired(
    worker: Worker,
) -> None:
    s = Scenario()
    ttl = worker.runtime.settings.pairs.ttl
    clock = worker.clock
    clock.now = NOW
    first, other = s.plan(), s.plan()
    await worker.sample(s.decided(first, False, 0))
    await worker.sample(s.decided(other, True, 0))
    held = worker.steps.intents[1]
    assert set(held) == {intent_key(snap) for snap in (first, other)}
    clock.now = NOW + ttl  # due, but its minute is not wholly past the ttl yet
    await worker.rekeyed(b"", b"tick", partition=1)
    assert len(held) == 2
    clock.now = NOW + ttl + EXPIRY_BUCKET
    await worker.rekeyed(b"", b"tick", partition=0)  # another partition: nothing goes
    assert len(held) == 2
    await worker.rekeyed(b"", b"tick", partition=1)
    assert len(held) == 0
    assert worker.metric("learnstream_pair_intents_expired_total", approved="false") == 1
    assert worker.metric("learnstream_pair_intents_expired_total", approved="true") == 1
    # Lazily: a plan coming after the TTL finds nothing to pair with.
    await worker.sample(s.decided(first, False, 10))
    clock.now += ttl
    await worker.sample(s.decided(s.plan(first), True, 20))
    assert worker.pairs() == []
    assert worker.metric("learnstream_pair_intents_expired_total", approved="false") == 2


async def test_a_tick_expires_from_the_index_also_after_a_restore(worker: Worker) -> None:
    """A tick reads the intents due, not every intent: one touched again since its first
    minute stays. After a revocation the index is filled by the restore, so the next tick
    expires what is due among the intents read back."""
    s = Scenario()
    ttl, clock = worker.runtime.settings.pairs.ttl, worker.clock
    clock.now = NOW
    early, late = s.plan(), s.plan()
    await worker.sample(s.decided(early, False, 0))
    await worker.sample(s.decided(late, False, 0))
    clock.now = NOW + 2 * EXPIRY_BUCKET
    await worker.sample(s.decided(s.plan(late), False, 60))  # touches ``late`` again
    clock.now = NOW + ttl + EXPIRY_BUCKET
    await worker.rekeyed(b"", b"tick")
    assert set(worker.steps.intents[1]) == {intent_key(late)}
    worker.steps.invalidate(set(range(worker.runtime.settings.topics.partitions)))
    assert len(worker.steps.quiet) == 0
    clock.now = NOW + 2 * EXPIRY_BUCKET + ttl + EXPIRY_BUCKET
    await worker.rekeyed(b"", b"tick")
    assert worker.rekeys.reads[-1][0] == 1
    assert worker.steps.intents[1] == {}
    assert worker.metric("learnstream_pair_intents_expired_total", approved="false") == 2


def test_pairs_switched_off_register_no_agent(tmp_path: Any) -> None:
    settings = Settings(store="memory://", data_dir=str(tmp_path), pairs={"enabled": False})
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    wire(app, settings)
    assert "learnstream.decisions" in app.agents
    assert "learnstream.replans" not in app.agents
    assert "pair_intents" not in app.tables


async def test_a_failing_hook_comes_after_the_sample_is_sent_and_counted(tmp_path: Any) -> None:
    """The hooks run last: a hook that raises cannot unsend or uncount a sent sample."""
    settings = Settings(store="memory://", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings)
    s = Scenario(pii_ratio=1.0)
    sample = s.decided(s.plan(), True, 0)
    sent: list[bytes] = []

    async def produce(topic: Any, key: bytes, value: bytes, *args: Any) -> None:
        sent.append(value)

    async def broken(out: Any, source: tuple[str, int]) -> None:
        raise RuntimeError("hook failed")

    emitter = runtime.emitter
    emitter.produce, emitter.on_sent = produce, [broken]
    out = prepare(sample, runtime.anonymizer, runtime.codec, NOW)
    with pytest.raises(RuntimeError, match="hook failed"):
        await emitter._send_one(sample, out, ("plans", 0))
    family, quality = out.family, out.quality
    metrics = runtime.metrics
    assert sent[0] == out.value
    assert metrics.child(metrics.samples, family, quality)._value.get() == 1
    assert sum(out.pii.values()) > 0
    for entity, count in out.pii.items():
        assert metrics.child(metrics.pii, entity)._value.get() == count
    assert metrics.child(metrics.latency, family)._sum.get() > 0


async def test_what_a_hook_sends_is_acked_with_the_sample(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A completion deletes its parked entries once the acks it waits for are in: the
    re-keyed plan the pairs miner sends from its hook must be among them, or a crash after
    the delete (at-least-once) would lose the pair its plan makes."""
    settings = Settings(store="memory://", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings)
    s = Scenario(pii_ratio=0.0)
    sample = s.decided(s.plan(), True, 0)
    acks: dict[bytes, object] = {}

    async def produce(_self: Sender, topic: Any, key: bytes, value: bytes, *args: Any) -> object:
        acks[value] = ack = object()
        return ack

    monkeypatch.setattr(Sender, "__call__", produce)  # the emitter's and the miner's sends
    out = prepare(sample, runtime.anonymizer, runtime.codec, NOW)
    returned = await runtime.emitter._send_one(sample, out, ("plans", 0))
    rekeyed = [value for value in acks if value not in (out.value, out.event_value)]
    assert len(rekeyed) == 1  # the decided plan, on its way to pair_intents
    assert orjson.loads(rekeyed[0])["intent_id"]
    assert returned == [acks[out.value], acks[out.event_value], acks[rekeyed[0]]]
