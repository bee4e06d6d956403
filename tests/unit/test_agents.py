"""The Faust agents through ``agent.test_context()``: no broker, real tables, mocked sends.

Faust-streaming 0.15 registers no ``memory://`` transport, so the app points at a Kafka URL
that is never dialled (sockets are blocked below): ``test_context`` starts only the agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import AsyncMock

import faust
import orjson
import pytest

import learnstream.agents.joins.sweeper
import learnstream.streams.join.expiry
import learnstream.streams.join.routes
from learnstream.agents.runtime import Runtime
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.dlq.record import parse_headers
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.io.app import create_app
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.sim.simulate import BAD_RECORDS, Simulator
from tests.support.apps import close_consumer_loop
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.offsets import FakeEnds
from tests.support.outputs import AGENT_OF, Feed, corrections_end, mock_outputs

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class Harness:
    """An app with every agent wired and the three output topics' ``send`` mocked."""

    app: faust.App
    runtime: Runtime
    samples: AsyncMock
    events: AsyncMock
    dlq: AsyncMock
    sim: Simulator
    feed: Feed

    async def put(
        self,
        field: str,
        *values: bytes | None,
        key: bytes | None = None,
        timestamp: float | None = None,
    ) -> None:
        """Deliver ``values`` in order to the agent consuming topic ``field``.

        Consent records also reach the worker's consent view, as its reader would deliver them
        (agents/consent_reader.py; no broker here, and ``mock_outputs`` counts the view caught up).
        """
        topic = self.runtime.settings.topics.name(field)
        if field == "consent":
            for value in values:
                self.runtime.consent.apply(key, value)
        await self.feed.put(AGENT_OF[field], topic, *values, key=key, timestamp=timestamp)

    def sent(self) -> list[dict[str, Any]]:
        """Return the JSON samples sent so far, checking each key is its sample id."""
        out = []
        for call in self.samples.await_args_list:
            sample = orjson.loads(call.kwargs["value"])
            assert call.kwargs["key"] == sample["sample_id"].encode()
            out.append(sample)
        return out

    def families(self) -> list[tuple[str, str]]:
        return [(s["sample_family"], s["feedback"]["quality_label"]) for s in self.sent()]

    def metric(self, name: str, **labels: str) -> float | None:
        return self.runtime.metrics.registry.get_sample_value(name, labels)


@asynccontextmanager
async def harness(tmp_path: Any, **settings_: Any) -> AsyncIterator[Harness]:
    """Build an app with every agent wired (``settings_`` override the test defaults)."""
    settings = Settings(
        store="memory://", sample_format="json", data_dir=str(tmp_path), **settings_
    )
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings, ends=FakeEnds())
    mocks = mock_outputs(app, runtime)
    feed = Feed(app)
    deltas = settings.topics.name("delta_intents")
    # The broker holds exactly the corrections fed so far (tests may say it holds more).
    corrections_end(runtime, lambda: feed.offsets.get((deltas, None), 0))
    outputs = (mocks["samples"], mocks["events"], mocks["dlq"])
    yield Harness(app, runtime, *outputs, sim=Simulator(seed=21, pii_ratio=0.0), feed=feed)
    close_consumer_loop(app)


@pytest.fixture
async def h(tmp_path: Any) -> AsyncIterator[Harness]:
    """Build the app inside the test's event loop (a sync fixture would leak a new loop)."""
    async with harness(tmp_path) as built:
        yield built


def js(obj: Any) -> bytes:
    return orjson.dumps(obj)


def key_of(snap: dict[str, Any]) -> bytes:
    return snap["plan"]["plan_id"].encode()


# --- samples --------------------------------------------------------------------------------


async def test_plan_then_approval_sends_both_samples(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.runtime.plans.get(snap["plan"]["plan_id"]) is not None
    assert h.samples.await_count == 0
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
    confirm, intent = h.sent()
    assert [validate_sample(s) for s in (confirm, intent)] == [[], []]
    assert intent["input"]["intent_id"] == snap["intent"]["intent_id"]
    assert intent["meta"]["project_id"] == snap["project_id"]
    # The default opt-out globs (*.secret, *.env) stripped the context before it left.
    assert intent["input"]["context"] == {
        "repo": "acme/shop",
        "files": ["src/app.py"],
        "owner": "the reporter",
    }
    events = [orjson.loads(c.kwargs["value"]) for c in h.events.await_args_list]
    assert [(e["event_type"], e["payload"]["sample_id"]) for e in events] == [
        ("learning_sample_captured", confirm["sample_id"]),
        ("learning_sample_captured", intent["sample_id"]),
    ]
    assert h.dlq.await_count == 0
    assert h.metric("learnstream_samples_total", family="intent_resolution", quality="good") == 1
    assert h.metric("learnstream_events_total", source="decisions") == 1


async def test_rejection_on_its_topic_is_poor(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put("plan_rejected", js(h.sim.decision(snap, False, WHEN)), key=key_of(snap))
    assert h.families() == [("confirm_decision", "poor"), ("intent_resolution", "poor")]
    assert h.sent()[1]["output"]["resolution_quality_label"] == "bad"


async def test_decision_before_its_plan_is_parked_then_completed(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    assert h.families() == [("confirm_decision", "good")]
    (parked,) = h.runtime.join.parked(plan_id)
    assert (parked.source, parked.topic, parked.offset) == (
        "decisions",
        "mplp.plan_approved",
        0,
    )
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert h.runtime.join.parked(plan_id) == []
    assert not list(h.runtime.tables.pending.keys())  # its table record deleted too
    assert h.runtime.plans.get(plan_id) is not None


async def test_entries_stored_as_one_list_under_the_plan_key_still_complete(h: Harness) -> None:
    """After an upgrade, the pending table may hold a plan's entries as one list (the layout
    that rewrote the list on every park): they complete, and what is left of the list is
    stored again entry by entry, so nothing parked is lost."""
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    topic = h.runtime.settings.topics.name("pipeline_stage")
    fetched = datetime.now(UTC)  # within the grace: it waits for the unread correction

    def entry(offset: int, status: str, parked_at: datetime) -> dict[str, Any]:
        body = js(h.sim.stage(snap, status, WHEN)).decode()
        return {
            "source": "stages", "topic": topic, "partition": 0, "offset": offset,
            "key": plan_id, "raw": body, "event_time": WHEN.isoformat(),
            "parked_at": parked_at.isoformat(), "plan_known": False,
        }  # fmt: skip

    legacy = [entry(7, "completed", WHEN), entry(8, "failed", fetched)]
    h.runtime.tables.pending.data[plan_id] = orjson.dumps(legacy)  # as recovered
    corrections_end(h.runtime, lambda: 1)  # a correction on the broker, not read yet
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.families() == [("pipeline_outcome", "good")]  # offset 7: its grace is over
    assert [e.offset for e in h.runtime.join.parked(plan_id)] == [8]  # offset 8 waits
    stored = dict(h.runtime.tables.pending.data)
    assert plan_id not in stored  # the list is gone...
    assert [orjson.loads(v)["offset"] for v in stored.values()] == [8]  # ...8 stored alone
    assert list(stored) == [f"{plan_id}|{topic}|0|8"]


async def test_decision_naming_no_project_waits_for_the_plan_and_its_consent(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    decision = h.sim.decision(snap, True, WHEN)
    del decision["project_id"]
    await h.put(
        "consent",
        js({"project_id": snap["project_id"], "enabled": False}),
        key=snap["project_id"].encode(),
    )
    await h.put("plan_approved", js(decision), key=key_of(snap))
    assert h.samples.await_count == 0  # whose consent applies is unknown until the plan comes
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.samples.await_count == 0  # the plan's project opted out: both samples dropped
    assert h.metric("learnstream_opted_out_total", reason="project") == 2
    assert h.runtime.join.parked(snap["plan"]["plan_id"]) == []


async def test_parked_delta_and_outcome_replay_in_event_order(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    later = h.sim.stage(snap, "completed", WHEN + timedelta(minutes=2))
    earlier = h.sim.delta(snap, WHEN + timedelta(minutes=1))
    await h.put("pipeline_stage", js(later), key=key_of(snap))
    await h.put("delta_intents", js(earlier), key=key_of(snap))
    assert h.samples.await_count == 0
    await h.put("plans", js(snap), key=key_of(snap))
    # The delta happened first, so the execution counts as "completed after a delta".
    assert h.families() == [("error_correction", "acceptable"), ("pipeline_outcome", "acceptable")]
    state = h.runtime.plans.get(snap["plan"]["plan_id"])
    assert state is not None
    assert state.deltas == 1


async def test_the_corrections_lateness_reaches_the_watermark(tmp_path: Any) -> None:
    async with harness(tmp_path) as default:
        assert default.runtime.join.watermark.lateness == timedelta(0)
    async with harness(tmp_path, join={"corrections_lateness": "50ms"}) as late:
        assert late.runtime.join.watermark.lateness == timedelta(milliseconds=50)


async def test_delta_then_execute_and_impact(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put("delta_intents", js(h.sim.delta(snap, WHEN, impact=True)), key=key_of(snap))
    await h.put(
        "pipeline_stage",
        js(h.sim.stage(snap, "started", WHEN)),
        js(h.sim.stage(snap, "completed", WHEN)),
        key=key_of(snap),
    )
    assert h.families() == [
        ("error_correction", "acceptable"),
        ("delta_impact", "good"),
        ("pipeline_outcome", "acceptable"),
    ]
    assert [validate_sample(s) for s in h.sent()] == [[], [], []]


async def test_older_snapshot_is_ignored_and_tombstone_deletes(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    old = orjson.loads(js(snap))
    old["plan"]["title"], old["plan"]["meta"]["updated_at"] = "old", "2026-03-01T11:00:00Z"
    await h.put("plans", js(snap), js(old), key=key_of(snap))
    state = h.runtime.plans.get(snap["plan"]["plan_id"])
    assert state is not None
    assert state.snapshot.plan.title == snap["plan"]["title"]
    await h.put("plans", None, key=key_of(snap))
    assert h.runtime.plans.get(snap["plan"]["plan_id"]) is None
    assert h.dlq.await_count == 0


async def test_a_tombstone_dead_letters_what_waited_for_its_plan(h: Harness) -> None:
    """The runtime deleted a plan this worker never saw: the decision parked for it is
    dead-lettered now (``plan_deleted``), not after the grace, and nothing stays parked."""
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plan_approved", js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
    assert len(h.runtime.join.parked(plan_id)) == 1
    await h.put("plans", None, key=key_of(snap))
    reasons = [parse_headers(c.kwargs["headers"]).reason for c in h.dlq.await_args_list]
    assert reasons == ["plan_deleted"]
    assert h.runtime.join.parked(plan_id) == []
    assert not list(h.runtime.tables.pending.keys())
    assert h.families() == [("confirm_decision", "good")]  # sent before it parked


async def test_a_tombstone_completes_what_waited_to_settle_and_leaves_no_wait(h: Harness) -> None:
    """An execute waiting for an unread correction when its plan is deleted comes out at
    once, as the plan stood; the watermark is not left waiting for the key."""
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plans", js(snap), key=key_of(snap))
    corrections_end(h.runtime, lambda: 1)  # a correction on the broker, not read yet
    await h.put("pipeline_stage", js(h.sim.stage(snap, "completed", WHEN)), key=key_of(snap))
    assert h.families() == []
    assert h.runtime.join.watermark.waiting_count() == 1
    await h.put("plans", None, key=key_of(snap))
    assert h.families() == [("pipeline_outcome", "good")]
    assert h.runtime.join.watermark.waiting_count() == 0
    assert h.runtime.join.parked(plan_id) == []
    assert not list(h.runtime.tables.pending.keys())
    assert h.runtime.plans.get(plan_id) is None
    assert h.dlq.await_count == 0


async def test_project_opt_out_drops_its_samples(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    consent = {"project_id": snap["project_id"], "enabled": False}
    await h.put("consent", js(consent), key=snap["project_id"].encode())
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put("pipeline_stage", js(h.sim.stage(snap, "failed", WHEN)), key=key_of(snap))
    assert h.samples.await_count == 0
    assert h.metric("learnstream_opted_out_total", reason="project") == 1


class Behind:
    """End offsets of a consent topic the view has not read up to yet."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self) -> dict[int, int]:
        self.asked += 1
        return {0: 1}


@pytest.mark.parametrize("opt_out_meanwhile", [False, True])
async def test_samples_wait_for_the_consent_view_then_get_its_verdict(
    h: Harness, opt_out_meanwhile: bool
) -> None:
    snap = h.sim.plan(WHEN)
    await h.put("plans", js(snap), key=key_of(snap))
    h.runtime.ends.consent_ends = behind = Behind()
    # Our own test context: Feed's ends when the record is handed over, stopping the agent.
    topic = h.runtime.settings.topics.name("plan_approved")
    wrapper = h.app.agents["learnstream.decisions"].test_context()
    wrapper.original_channel = h.app.topic(topic)
    async with wrapper as context:
        await context.put(js(h.sim.decision(snap, True, WHEN)), key=key_of(snap))
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert (h.samples.await_count, h.runtime.fence.waiting, behind.asked) == (0, 1, 1)
        if opt_out_meanwhile:  # the consent record the reader was about to read
            project = snap["project_id"]
            record = js({"project_id": project, "enabled": False})
            h.runtime.consent.apply(project.encode(), record)
        h.runtime.fence.advance({0: 1})
        for _ in range(50):  # the agent finishes the record: sends, or counts the drop
            await asyncio.sleep(0.01)
    assert h.runtime.fence.waiting == 0
    dropped = h.metric("learnstream_opted_out_total", reason="project")
    assert (h.samples.await_count, dropped) == ((0, 2) if opt_out_meanwhile else (2, 0))
    assert h.metric("learnstream_consent_fence_seconds_count") == 1


async def test_a_bad_consent_record_is_dead_lettered_and_changes_nothing(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    project = snap["project_id"].encode()
    await h.put("consent", js({"project_id": snap["project_id"], "enabled": False}), key=project)
    await h.put("consent", js({"project_id": snap["project_id"]}), key=project)
    h.dlq.assert_awaited_once()
    assert parse_headers(h.dlq.await_args.kwargs["headers"]).reason == "schema_violation"
    assert h.runtime.consent.get(snap["project_id"]) is False
    await h.put("consent", None, key=project)  # a tombstone: back to the default, no DLQ
    assert h.runtime.consent.get(snap["project_id"]) is None
    h.dlq.assert_awaited_once()


# --- dead letters ---------------------------------------------------------------------------


async def test_bad_record_is_dead_lettered_and_the_loop_goes_on(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put("plan_approved", b"{not json", js(h.sim.decision(snap, True, WHEN)), key=b"k1")
    h.dlq.assert_awaited_once()
    call = h.dlq.await_args
    assert (call.kwargs["key"], call.kwargs["value"]) == (b"k1", b"{not json")
    headers = call.kwargs["headers"]
    assert [name for name, _ in headers] == [
        "reason",
        "error",
        "source_topic",
        "source_partition",
        "source_offset",
    ]
    record = parse_headers(headers)
    assert (record.reason, record.topic, record.partition, record.offset) == (
        "invalid_json",
        "mplp.plan_approved",
        0,
        0,
    )
    assert record.error
    assert h.families() == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert h.metric("learnstream_dlq_total", reason="invalid_json") == 1


@pytest.mark.parametrize(("field", "value", "reason"), BAD_RECORDS)
async def test_every_bad_record_kind_gets_its_reason(
    h: Harness, field: str, value: bytes, reason: str
) -> None:
    await h.put(field, value, key=b"bad")
    assert parse_headers(h.dlq.await_args.kwargs["headers"]).reason == reason
    assert h.dlq.await_args.kwargs["value"] == value


async def test_decision_on_the_wrong_topic(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    await h.put("plan_approved", js(h.sim.decision(snap, False, WHEN)), key=key_of(snap))
    record = parse_headers(h.dlq.await_args.kwargs["headers"])
    assert (record.reason, record.error) == (
        "wrong_topic",
        "plan_rejected published on the plan_approved topic",
    )
    assert h.samples.await_count == 0


async def test_builder_failure_is_dead_lettered_and_the_loop_goes_on(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = learnstream.streams.join.routes.on_stage
    calls = iter([RuntimeError("boom")])

    def flaky(*args: Any, **kwargs: Any) -> Any:
        for exc in calls:
            raise exc
        return real(*args, **kwargs)

    monkeypatch.setattr(learnstream.streams.join.routes, "on_stage", flaky)
    snap = h.sim.plan(WHEN)
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put(
        "pipeline_stage",
        js(h.sim.stage(snap, "completed", WHEN)),
        js(h.sim.stage(snap, "failed", WHEN)),
        key=key_of(snap),
    )
    record = parse_headers(h.dlq.await_args.kwargs["headers"])
    assert (record.reason, record.offset) == ("builder_error", 0)
    # the type and where it was raised; never the text, which may quote input
    assert record.error.startswith("RuntimeError at test_agents.py:")
    assert " flaky < routes.py:" in record.error
    assert "boom" not in record.error
    assert h.families() == [("pipeline_outcome", "poor")]


async def test_too_deeply_nested_delta_is_dead_lettered_not_lost(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    deep = b'{"k":' * 500 + b"1" + b"}" * 500
    delta = js(h.sim.delta(snap, WHEN)).replace(b'{"steps_added":1}', deep)
    await h.put("plans", js(snap), key=key_of(snap))
    await h.put("delta_intents", delta, js(h.sim.delta(snap, WHEN)), key=key_of(snap))
    h.dlq.assert_awaited_once()
    assert h.dlq.await_args.kwargs["value"] == delta
    assert parse_headers(h.dlq.await_args.kwargs["headers"]).reason in {
        "schema_violation",
        "builder_error",
    }
    assert h.families() == [("error_correction", "acceptable")]


# --- the sweeper: terminal plans expire after plan_ttl ---------------------------------------


async def put_plan(h: Harness, snap: dict[str, Any]) -> None:
    """Deliver ``snap`` on the partition Kafka's default partitioner gives its plan id, as a
    runtime would (``Harness.put`` delivers on partition 0): its state is held there."""
    partition = partition_of(snap["plan"]["plan_id"], h.runtime.settings.topics.partitions)
    topic = h.runtime.settings.topics.name("plans")
    await h.feed.put(AGENT_OF["plans"], topic, js(snap), key=key_of(snap), partition=partition)


async def tick(h: Harness, plan_id: str) -> None:
    """Deliver one sweep tick for the partition that holds ``plan_id``."""
    partition = partition_of(plan_id, h.runtime.settings.topics.partitions)
    async with h.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)


async def test_sweep_expires_only_terminal_plans_past_the_ttl(h: Harness) -> None:
    old_done = h.sim.plan(WHEN, status="completed")  # terminal since March: past 24 h
    old_open = h.sim.plan(WHEN, status="in_progress")
    fresh_done = h.sim.plan(datetime.now(UTC), status="failed")
    for snap in (old_done, old_open, fresh_done):
        await put_plan(h, snap)
    for snap in (old_done, old_open, fresh_done):
        await tick(h, snap["plan"]["plan_id"])
    held = {s["plan"]["plan_id"] for s in (old_open, fresh_done)}
    stored = {s["plan"]["plan_id"] for s in (old_done, old_open, fresh_done)}
    assert {plan_id for plan_id in stored if plan_id in h.runtime.plans} == held
    assert h.runtime.plans.expiry.built
    assert len(h.runtime.plans.expiry) == 1  # only fresh_done is still waiting to expire


async def test_a_plan_is_swept_on_the_partition_its_records_came_from(h: Harness) -> None:
    """A runtime whose partitioner is not Kafka's default (librdkafka hashes with CRC32)
    puts a plan elsewhere than murmur2 would: its state, and its expiry, are there."""
    done = h.sim.plan(WHEN, status="completed")
    plan_id = done["plan"]["plan_id"]
    partitions = h.runtime.settings.topics.partitions
    guessed = partition_of(plan_id, partitions)
    actual = (guessed + 1) % partitions
    topic, ticks = h.runtime.settings.topics.name("plans"), h.runtime.topics.join_ticks
    # (each partition's ticks with offsets that follow on, as the broker gives them)
    await h.feed.put("sweeper", ticks.get_topic_name(), b"tick", partition=actual)  # index built
    await h.feed.put("plans", topic, js(done), key=key_of(done), partition=actual)
    await h.feed.put("sweeper", ticks.get_topic_name(), b"tick", partition=guessed)
    assert plan_id in h.runtime.plans  # not this partition's
    await h.feed.put("sweeper", ticks.get_topic_name(), b"tick", partition=actual)
    assert plan_id not in h.runtime.plans


async def test_a_plan_past_its_ttl_ends_what_waits_under_it(h: Harness) -> None:
    """Expiry goes through the join as a tombstone does: an execute still waiting for
    the corrections input comes out, and nothing stays parked for the deleted plan."""
    done = h.sim.plan(WHEN, status="completed")
    plan_id = done["plan"]["plan_id"]
    partition = partition_of(plan_id, h.runtime.settings.topics.partitions)
    topics = h.runtime.settings.topics
    plans = AGENT_OF["plans"]
    await h.feed.put(plans, topics.name("plans"), js(done), key=key_of(done), partition=partition)
    corrections_end(h.runtime, lambda: 1)
    stage = js(h.sim.stage(done, "completed", WHEN))
    await h.feed.put(
        AGENT_OF["pipeline_stage"],
        topics.name("pipeline_stage"),
        stage,
        key=key_of(done),
        partition=partition,
    )
    assert h.families() == []
    assert h.runtime.join.watermark.waiting_count() == 1
    await tick(h, plan_id)
    assert plan_id not in h.runtime.plans
    assert h.families() == [("pipeline_outcome", "good")]
    assert h.runtime.join.parked(plan_id) == []
    assert h.runtime.join.watermark.waiting_count() == 0


async def test_sweep_skips_a_plan_reopened_after_it_was_indexed(h: Harness) -> None:
    done = h.sim.plan(WHEN, status="completed")
    await put_plan(h, done)
    reopened = orjson.loads(js(done))
    reopened["plan"]["status"] = "in_progress"
    reopened["plan"]["meta"]["updated_at"] = "2026-03-01T13:00:00Z"
    await put_plan(h, reopened)
    await tick(h, done["plan"]["plan_id"])
    state = h.runtime.plans.get(done["plan"]["plan_id"])
    assert state is not None
    assert state.snapshot.plan.status == "in_progress"


async def test_sweep_rebuilds_its_index_from_the_table_after_a_rebalance(h: Harness) -> None:
    done = h.sim.plan(WHEN, status="cancelled")
    await put_plan(h, done)
    await h.app.on_partitions_revoked.send(set())  # what Faust sends when a rebalance starts
    assert not h.runtime.plans.expiry.built
    assert len(h.runtime.plans.expiry) == 0
    await tick(h, done["plan"]["plan_id"])
    assert done["plan"]["plan_id"] not in h.runtime.plans


async def test_the_index_is_rebuilt_a_slice_per_tick_and_expires_as_it_goes(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10M plans take two minutes to scan: a tick scans a slice and hands the loop back."""
    monkeypatch.setattr(learnstream.agents.joins.sweeper, "SCAN_BUDGET_S", 0.0)  # one slice a tick
    monkeypatch.setattr(learnstream.streams.join.expiry, "SCAN_SLICE", 2)
    done = [h.sim.plan(WHEN, status="completed") for _ in range(5)]
    for snap in done:
        await put_plan(h, snap)
    plan_ids = [s["plan"]["plan_id"] for s in done]
    await h.app.on_partitions_revoked.send(set())  # a restart: the index is gone
    partitions = h.runtime.settings.topics.partitions
    index = h.runtime.plans.expiry
    async with h.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=0)
        assert index.scanning  # 2 of 5 read
        assert not index.built
        for _ in range(2):
            await agent.put(b"tick", partition=0)
        assert index.built
        for partition in range(partitions):
            await agent.put(b"tick", partition=partition)
    assert not any(plan_id in h.runtime.plans for plan_id in plan_ids)
    assert len(index) == 0


async def test_a_plan_expiry_that_fails_leaves_every_popped_plan_due_again(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tick pops the due plans of its partition from the index before deleting them: a
    delete that raises must not drop the plans popped with it (they would never expire)."""
    partitions = h.runtime.settings.topics.partitions
    done = [h.sim.plan(WHEN, status="completed") for _ in range(12)]
    for snap in done:
        await put_plan(h, snap)
    first = done[0]["plan"]["plan_id"]
    same = [
        s["plan"]["plan_id"]
        for s in done
        if partition_of(s["plan"]["plan_id"], partitions) == partition_of(first, partitions)
    ]
    forget, calls = h.runtime.plans.forget, []

    def failing_once(plan_id: str) -> None:
        calls.append(plan_id)
        if len(calls) == 1:
            raise RuntimeError("store unavailable")
        forget(plan_id)

    monkeypatch.setattr(h.runtime.plans, "forget", failing_once)
    partition = partition_of(first, partitions)
    async with h.app.agents["learnstream.sweeper"].test_context() as agent:
        await agent.put(b"tick", partition=partition)  # dead-lettered; the plans stay due
        assert all(plan_id in h.runtime.plans for plan_id in same)
        await agent.put(b"tick", partition=partition)  # the next tick
    assert not any(plan_id in h.runtime.plans for plan_id in same)
    assert sorted(calls[1:]) == sorted(same)
