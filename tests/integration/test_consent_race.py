"""Consent published just before the events wins, every time, on a running worker and at start.

Each round gives fresh projects: P opts out, and right after the broker acknowledged that,
P's decision, correction and execution go out on the other topics; control project Q (consent
on, or no record at all) sends the same. Not one sample of P may ever come out; every sample
of Q must. Plans come both before the consent record (the decision joins at once) and after
it (the parked events are completed by the plans agent).
"""

from __future__ import annotations

import asyncio
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.admin import create_topics
from learnstream.streams.io.reader import read_topic
from learnstream.streams.io.worker_process import WorkerProcess
from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.sim.simulate import Simulator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
ROUNDS = 20
SAMPLES_PER_PROJECT = 4  # confirm_decision, intent_resolution, error_correction, pipeline_outcome


@dataclass
class Round:
    """One project's records: a plan sent before its consent, the rest after it."""

    project: str
    early: list[tuple[str, bytes, dict[str, Any]]] = field(default_factory=list)
    late: list[tuple[str, bytes, dict[str, Any]]] = field(default_factory=list)
    sample_ids: dict[str, str] = field(default_factory=dict)  # id -> family


def story(sim: Simulator, project: str, when: datetime) -> Round:
    """Return a decision on a known plan, a correction and a run each before their plan."""
    joined, corrected, ran = (sim.plan(when, project) for _ in range(3))
    decision = sim.decision(joined, True, when)
    delta = sim.delta(corrected, when)
    started, completed = sim.stage(ran, "started", when), sim.stage(ran, "completed", when)
    rnd = Round(project)
    rnd.early.append(("plans", key(joined), joined))
    for topic, snap, event in (
        ("plan_approved", joined, decision),
        ("delta_intents", corrected, delta),
        ("plans", corrected, corrected),
        ("pipeline_stage", ran, started),
        ("pipeline_stage", ran, completed),
        ("plans", ran, ran),
    ):
        rnd.late.append((topic, key(snap), event))
    for family, event in (
        ("confirm_decision", decision),
        ("intent_resolution", decision),
        ("error_correction", delta),
        ("pipeline_outcome", completed),
    ):
        rnd.sample_ids[sample_id(family, event["event_id"])] = family
    return rnd


def key(snap: dict[str, Any]) -> bytes:
    return snap["plan"]["plan_id"].encode()


class Runtime:
    """An agent runtime that waits for each acknowledgement (acks=all) where it matters."""

    def __init__(self, bootstrap: str, topics: TopicSettings, embedded: bool) -> None:
        self.topics = topics
        # The embedded broker counts batches in its end offsets: one record per batch there.
        batch = {"max_batch_size": 1} if embedded else {}
        self.producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", **batch)

    async def send(self, records: list[tuple[str, bytes, dict[str, Any]]]) -> None:
        """Send ``records`` back to back, then wait for all their acknowledgements."""
        sent = [
            await self.producer.send(self.topics.name(t), orjson.dumps(v), key=k)
            for t, k, v in records
        ]
        await asyncio.gather(*sent)

    async def consent(self, project: str, enabled: bool) -> None:
        """Publish a project's consent and return once the broker acknowledged it."""
        value = orjson.dumps({"project_id": project, "enabled": enabled})
        await self.producer.send_and_wait(self.topics.name("consent"), value, key=project.encode())

    async def round(self, opted_out: Round, control: Round, control_consent: bool | None) -> None:
        """Plans first; then the opt-out, and the events the moment it is acknowledged."""
        await self.send(opted_out.early + control.early)
        if control_consent is not None:
            await self.consent(control.project, control_consent)
        await self.consent(opted_out.project, False)
        await self.send(opted_out.late + control.late)


async def samples_of(
    bootstrap: str, topics: TopicSettings, expected: set[str], max_wait: float = 120.0
) -> list[dict[str, Any]]:
    """Re-read the samples topic until every ``expected`` id is there (or ``max_wait``).

    A worker stopped while it completed a join may send those samples again after its
    restart (at-least-once): a copy must then be identical, ``created_at`` aside.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_wait
    while True:
        samples = [decode_any(r.value) for r in await read_topic(bootstrap, topics.name("samples"))]
        if expected <= {s["sample_id"] for s in samples} or loop.time() > deadline:
            break
        await asyncio.sleep(0.5)
    first: dict[str, dict[str, Any]] = {}
    for sample in samples:
        copy = {k: v for k, v in sample.items() if k != "created_at"}
        assert first.setdefault(sample["sample_id"], copy) == copy, "a replayed copy differs"
    return samples


def leaked(samples: list[dict[str, Any]], rounds: list[Round]) -> list[str]:
    """Return the samples of opted-out projects: by id, or by the project they name."""
    ids = set().union(*(r.sample_ids for r in rounds))
    projects = {canonical_id(r.project) for r in rounds}
    return sorted(
        f"{s['sample_family']} {s['sample_id']}"
        for s in samples
        if s["sample_id"] in ids or canonical_id(s["meta"].get("project_id") or "-") in projects
    )


def explain(worker: WorkerProcess, families: dict[str, str], samples: list[dict[str, Any]]) -> str:
    """Say which expected samples are missing (by family), what the worker's gauges and
    counters said then (parked entries, fence waits, samples sent, dead letters), what it
    warned of and which records it read again (stall watch, holes)."""
    got = {s["sample_id"] for s in samples}
    missing = sorted(f"{families[i]} {i}" for i in families if i not in got)
    url = f"http://127.0.0.1:{worker.web_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our worker
        lines = response.read().decode().splitlines()
    noted = ("WARNING", "ERROR", "handed over", "hold no records", "came before")
    warned = [line for line in worker.log().splitlines() if any(n in line for n in noted)]
    shown = [
        line
        for line in lines
        if line.startswith("learnstream_") and "_bucket" not in line and "_created" not in line
    ]
    return "\n".join(["missing: " + ", ".join(missing), *shown, *warned[-40:]])


async def test_consent_published_just_before_the_events_wins_every_round(
    broker, start_worker, namespace
):
    topics = TopicSettings(prefix=namespace)
    sim, now = Simulator(seed=41, pii_ratio=0.0), datetime.now(UTC)
    start_worker(LEARNSTREAM_SAMPLE_FORMAT="json")
    runtime = Runtime(broker.bootstrap, topics, broker.embedded)
    await runtime.producer.start()
    opted_out, control = [], []
    try:
        for n in range(ROUNDS):
            p, q = story(sim, sim.uuid(), now), story(sim, sim.uuid(), now)
            await runtime.round(p, q, control_consent=True if n % 2 else None)
            opted_out.append(p)
            control.append(q)
            await asyncio.sleep(0.2)  # an idle worker between rounds: the sharpest race
    finally:
        await runtime.producer.stop()
    expected = set().union(*(q.sample_ids for q in control))
    samples = await samples_of(broker.bootstrap, topics, expected)
    await asyncio.sleep(2.0)  # anything still on its way would show now
    samples = await samples_of(broker.bootstrap, topics, expected)
    assert leaked(samples, opted_out) == []
    assert {s["sample_id"] for s in samples} == expected
    assert len(expected) == ROUNDS * SAMPLES_PER_PROJECT
    assert await read_topic(broker.bootstrap, topics.name("dlq")) == []


async def test_a_starting_worker_holds_samples_until_it_read_the_consent_topic(
    broker, start_worker, namespace
):
    """Everything is on the topics before the worker starts, consent first, three times."""
    topics = TopicSettings(prefix=namespace)
    await create_topics(broker.bootstrap, topics)
    sim, now = Simulator(seed=43, pii_ratio=0.0), datetime.now(UTC)
    runtime = Runtime(broker.bootstrap, topics, broker.embedded)
    await runtime.producer.start()
    opted_out, expected, worker, families = [], set(), None, {}
    try:
        for n in range(3):
            p, q = story(sim, sim.uuid(), now), story(sim, sim.uuid(), now)
            await runtime.round(p, q, control_consent=True if n % 2 else None)
            opted_out.append(p)
            expected |= set(q.sample_ids)
            families |= q.sample_ids
            worker = worker.start() if worker else start_worker(LEARNSTREAM_SAMPLE_FORMAT="json")
            samples = await samples_of(broker.bootstrap, topics, expected)
            assert leaked(samples, opted_out) == []
            got = {s["sample_id"] for s in samples}
            assert got == expected, explain(worker, families, samples)
            assert worker.stop() == 0
    finally:
        await runtime.producer.stop()
    samples = await samples_of(broker.bootstrap, topics, expected)
    assert leaked(samples, opted_out) == []
    assert len(expected) == 3 * SAMPLES_PER_PROJECT
