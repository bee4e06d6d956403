"""The Faust peer (benchmarks/faust_peer.py): the DIY peer's pipeline in one Faust agent.

It must do exactly the DIY peer's work per record, read as Faust hands records over, so that
its row in the benchmark bounds what a design of Faust agents can reach for the same samples.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from faust.types import TP, Message

from benchmarks.faust_peer import FaustSends, Record, build_app, step
from benchmarks.peer import INPUT_FIELDS, Peer
from benchmarks.report import _targets
from learnstream.streams.config.settings import Settings, TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.sim.workload import build_workload, verify
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.unit.test_peer import FakeProducer

STAMP = 1_772_362_800.25  # seconds, as Faust's Message carries it


def _message(topic: str, offset: int, key: bytes | None, value: bytes | None) -> Message:
    return Message(topic, 2, offset, STAMP, 0, None, key, value, None, tp=TP(topic, 2))


def test_a_faust_message_reads_as_the_peers_record_with_milliseconds() -> None:
    record = Record.of(_message("in", 7, b"k", b"{}"))
    assert record == Record("in", 2, 7, STAMP * 1000, b"k", b"{}")


def test_a_workload_through_step_yields_exactly_the_expected_samples() -> None:
    settings = Settings(topics=TopicSettings(prefix="fpeer-test."))
    workload = build_workload(90, seed=8)

    async def go() -> FakeProducer:
        producer = FakeProducer()
        peer = Peer(settings, producer)
        for n, r in enumerate(workload.records):
            await step(peer, _message(settings.topics.name(r.topic), n, r.key, r.value))
        return producer

    producer = asyncio.run(go())
    samples = [decode_any(v) for _, _, v, _ in producer.on(settings.topics.name("samples")) if v]
    assert verify(workload.expected, samples).report() == "ALL-RECORDS-DELIVERED"
    assert producer.on(settings.topics.name("dlq")) == []


class _Producer:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def send(self, *args: Any) -> str:
        self.calls.append(args)
        return "ack"


def test_sends_go_to_fausts_producer_in_its_argument_order() -> None:
    class _App:
        producer = _Producer()

    sends = FaustSends(_App())  # type: ignore[arg-type]
    ack = asyncio.run(sends.send("out", b"v", key=b"k", headers=[("h", b"1")]))
    assert ack == "ack"
    assert _App.producer.calls == [("out", b"k", b"v", None, None, [("h", b"1")])]


@pytest.mark.asyncio
async def test_the_app_has_one_agent_over_the_five_inputs_and_no_tables() -> None:
    settings = Settings(
        topics=TopicSettings(prefix="fpeer-test."), broker={"url": "kafka://127.0.0.1:1"}
    )
    app = build_app(settings)
    (agent,) = app.agents.values()
    topics = set(agent.channel.topics)  # type: ignore[attr-defined]
    assert topics == {settings.topics.name(f) for f in INPUT_FIELDS}
    assert list(app.tables) == []
    assert app.conf.web_enabled is False


def test_the_faust_peer_row_reports_the_targets_as_a_bound() -> None:
    row = {"floor_ratio": 0.45, "peer_ratio": 0.8, "median": {"cpu_s": 11.0, "events": 20_000}}
    assert _targets("fpeer:pii-on", row) == (
        "bound: ≥ 0.5× floor: **missed**; ≥ 0.5× peer: met; ≤ 0.6 ms CPU/event: met"
    )
    assert _targets("pii-on", row).startswith("≥ 0.5× floor: **missed**")
    assert _targets("fpeer:pii-on-json", row) == ""
