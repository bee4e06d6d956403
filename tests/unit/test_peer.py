"""The DIY benchmark peer (benchmarks/peer.py): its join, grace and sends, without a broker.

Its samples must be exactly what the builders give for the same event and plan state, so
that "learnstream / peer" in the benchmark compares the same work.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from aiokafka.structs import ConsumerRecord

from benchmarks.peer import Join, Parked, Peer
from learnstream.streams.config.settings import Settings, TopicSettings
from learnstream.streams.dlq.record import DlqRecord, parse_headers
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.mplp.decode import decode_decision, decode_delta, decode_plan, decode_stage
from learnstream.streams.mplp.models import DecisionEvent, DeltaIntentEvent, StageEvent
from learnstream.streams.samples import builders
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.sim.simulate import Simulator
from learnstream.streams.sim.workload import build_workload, verify
from learnstream.streams.state.plan import (
    PlanState,
    StageMark,
    merge_snapshot,
    record_delta,
    record_stage,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
T0 = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
GRACE = timedelta(minutes=5)


def _parked(event: DecisionEvent | DeltaIntentEvent | StageEvent, offset: int) -> Parked:
    where = DlqRecord("", "", "t", 0, offset)
    return Parked(event, where, b"k", orjson.dumps({"n": offset}), NOW)


def _story() -> tuple[PlanState, DecisionEvent, DeltaIntentEvent, StageEvent]:
    sim = Simulator(seed=3, pii_ratio=0.0)
    snap = sim.plan(T0)
    state = merge_snapshot(None, decode_plan(orjson.dumps(snap)), T0)
    assert state is not None
    decision = decode_decision(
        orjson.dumps(sim.decision(snap, True, T0 + timedelta(seconds=1))), "plan_approved"
    )
    delta = decode_delta(orjson.dumps(sim.delta(snap, T0 + timedelta(seconds=2))))
    stage = decode_stage(orjson.dumps(sim.stage(snap, "completed", T0 + timedelta(seconds=3))))
    return state, decision, delta, stage


def _key(state: PlanState) -> str:
    return canonical_id(state.snapshot.plan.plan_id)


def _dicts(samples: list[LearningSample]) -> list[dict[str, Any]]:
    return [s.to_dict() for s in samples]


def test_events_after_their_plan_give_the_builders_samples() -> None:
    state, decision, delta, stage = _story()
    join = Join(GRACE, states={_key(state): state})
    events: list[DecisionEvent | DeltaIntentEvent | StageEvent] = [decision, delta, stage]
    got = [join.on_event(_parked(e, n), NOW) for n, e in enumerate(events)]
    corrected = record_delta(state, delta.payload.delta_id, delta.timestamp)
    assert _dicts(got[0]) == _dicts(
        [
            builders.build_confirm_decision(decision, state, NOW),
            builders.build_intent_resolution(decision, state, NOW),
        ]
    )
    assert _dicts(got[1]) == _dicts([builders.build_error_correction(delta, state, NOW)])
    assert _dicts(got[2]) == _dicts([builders.build_pipeline_outcome(stage, corrected, NOW)])
    assert got[2][0].feedback.quality_label == "acceptable"  # executed after a delta
    assert join.parked == {}


def test_parked_events_complete_in_event_time_order_when_the_plan_comes() -> None:
    state, decision, delta, stage = _story()
    key = _key(state)
    join = Join(GRACE)
    # Arrival order: stage, delta, decision; event-time order: decision, delta, stage.
    early = join.on_event(_parked(stage, 0), NOW) + join.on_event(_parked(delta, 1), NOW)
    confirm = join.on_event(_parked(decision, 2), NOW)
    assert early == []
    # The decision names its project: its confirm_decision goes out before the plan.
    assert _dicts(confirm) == _dicts([builders.build_confirm_decision(decision, None, NOW)])
    samples, failed = join.on_plan(state, key, NOW)
    corrected = record_delta(state, delta.payload.delta_id, delta.timestamp)
    assert failed == []
    assert _dicts(samples) == _dicts(
        [
            builders.build_intent_resolution(decision, state, NOW),  # saw no correction yet
            builders.build_error_correction(delta, state, NOW),
            builders.build_pipeline_outcome(stage, corrected, NOW),
        ]
    )
    assert join.parked == {}
    assert join.states[key] == record_stage(corrected, StageMark.of(stage))  # its path


def test_a_decision_read_after_a_later_correction_counts_only_earlier_ones() -> None:
    state, decision, delta, stage = _story()  # decision at +1 s, delta at +2 s, stage at +3 s
    join = Join(GRACE, states={_key(state): state})
    join.on_event(_parked(delta, 0), NOW)
    confirm, resolution = join.on_event(_parked(decision, 1), NOW)
    (outcome,) = join.on_event(_parked(stage, 2), NOW)
    assert resolution.to_dict()["state"]["corrections_so_far"] == 0
    assert _dicts([resolution]) == _dicts([builders.build_intent_resolution(decision, state, NOW)])
    assert outcome.feedback.quality_label == "acceptable"  # the delta came before it


def test_a_parked_event_goes_to_the_dlq_after_the_grace_and_not_before() -> None:
    state, _, delta, _ = _story()
    join = Join(GRACE)
    assert join.on_event(_parked(delta, 7), NOW) == []
    assert join.expire(NOW + GRACE - timedelta(microseconds=1)) == []
    (due,) = join.expire(NOW + GRACE)
    assert (due.where.reason, due.where.offset, due.raw) == ("plan_state_missing", 7, b'{"n":7}')
    assert "LEARNSTREAM_JOIN__GRACE" in due.where.error
    assert join.parked == {}
    samples, _ = join.on_plan(state, _key(state), NOW)
    assert samples == []  # dead-lettered, not completed as well


def test_an_older_snapshot_changes_nothing() -> None:
    state, _, delta, _ = _story()
    key = _key(state)
    join = Join(GRACE)
    join.on_event(_parked(delta, 1), NOW)
    assert join.on_plan(None, key, NOW) == ([], [])
    assert len(join.parked[key]) == 1


class FakeProducer:
    """Records what would be sent; every send is acknowledged at once."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes | None, bytes | None, list[tuple[str, bytes]]]] = []

    async def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: list[tuple[str, bytes]] | None = None,
    ) -> asyncio.Future[None]:
        self.sent.append((topic, key, value, headers or []))
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    def on(self, topic: str) -> list[tuple[str, bytes | None, bytes | None, list[Any]]]:
        return [s for s in self.sent if s[0] == topic]


def _record(topic: str, offset: int, key: bytes | None, value: bytes | None) -> ConsumerRecord:
    stamp = int(T0.timestamp() * 1000)
    return ConsumerRecord(topic, 0, offset, stamp, 0, key, value, None, 0, 0, [])


@pytest.fixture(scope="module")
def settings() -> Settings:
    return Settings(topics=TopicSettings(prefix="peer-test."))


def _run(settings: Settings, records: list[ConsumerRecord]) -> FakeProducer:
    async def go() -> FakeProducer:
        producer = FakeProducer()
        peer = Peer(settings, producer)
        for record in records:
            await asyncio.gather(*await peer.handle(record, NOW))
        return producer

    return asyncio.run(go())


def test_a_workload_yields_exactly_the_expected_samples_and_their_events(
    settings: Settings,
) -> None:
    workload = build_workload(120, seed=5)
    records = [
        _record(settings.topics.name(r.topic), n, r.key, r.value)
        for n, r in enumerate(workload.records)
    ]
    producer = _run(settings, records)
    samples = [decode_any(v) for _, _, v, _ in producer.on(settings.topics.name("samples")) if v]
    verdict = verify(workload.expected, samples)
    assert verdict.report() == "ALL-RECORDS-DELIVERED"
    events = [orjson.loads(v or b"") for _, _, v, _ in producer.on(settings.topics.name("events"))]
    assert [e["payload"]["sample_id"] for e in events] == [s["sample_id"] for s in samples]
    assert producer.on(settings.topics.name("dlq")) == []


def test_a_bad_record_is_dead_lettered_with_its_bytes_and_no_value_in_headers(
    settings: Settings,
) -> None:
    bad = b'{"event_family": "delta_intent", "oops": "jane@corp.com"'
    producer = _run(settings, [_record(settings.topics.name("delta_intents"), 4, b"k", bad)])
    ((_, key, value, headers),) = producer.sent
    where = parse_headers(headers)
    assert (key, value, where.reason, where.offset) == (b"k", bad, "invalid_json", 4)
    assert all(b"jane" not in v for _, v in headers)


def test_without_emit_captured_only_samples_go_out() -> None:
    settings = Settings(topics=TopicSettings(prefix="peer-test.", emit_captured=False))
    workload = build_workload(30, seed=6)
    records = [
        _record(settings.topics.name(r.topic), n, r.key, r.value)
        for n, r in enumerate(workload.records)
    ]
    producer = _run(settings, records)
    assert {topic for topic, *_ in producer.sent} == {settings.topics.name("samples")}
    assert len(producer.sent) == len(workload.expected)
