"""Preference pairs end to end: runtime events -> worker -> samples -> pairs topic (exact)."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from prometheus_client.parser import text_string_to_metric_families

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.samples.pairs import pair_id
from learnstream.streams.sim.simulate import PII_SAMPLES, Simulator

pytestmark = pytest.mark.integration

Snap = dict[str, Any]


def _decisions(sim: Simulator, t0: datetime) -> tuple[dict[str, list[Snap]], list[Any]]:
    """Return each intent's plans and their decisions, in the order they are published.

    - ``once``: rejected, then a replan approved 10 s later: one pair;
    - ``twice``: two rejections, then an approval *published first*: two pairs;
    - ``never``: rejected, never approved: none; ``backwards``: approved, then a replan
      rejected: none (the approval came first in event time).
    """
    at = lambda seconds: t0 + timedelta(seconds=seconds)  # noqa: E731
    intents: dict[str, list[Snap]] = {}
    for name, plans in (("once", 2), ("twice", 3), ("never", 1), ("backwards", 2)):
        first = sim.plan(t0)
        # replans: the same intent in the same project (two projects' plans never pair)
        project, intent = first["project_id"], first["intent"]
        intents[name] = [first] + [
            sim.plan(t0, project_id=project, intent=intent) for _ in range(plans - 1)
        ]
    once, twice, backwards = intents["once"], intents["twice"], intents["backwards"]
    events = [
        sim.decision(once[0], False, at(0)),
        sim.decision(once[1], True, at(10)),
        sim.decision(twice[2], True, at(20)),
        sim.decision(twice[0], False, at(0)),
        sim.decision(twice[1], False, at(5)),
        sim.decision(intents["never"][0], False, at(0)),
        sim.decision(backwards[0], True, at(0)),
        sim.decision(backwards[1], False, at(30)),
    ]
    return intents, events


async def _publish(bootstrap: str, topics: TopicSettings, embedded: bool) -> dict[str, Any]:
    sim, t0 = Simulator(seed=17, pii_ratio=1.0), datetime.now(UTC)
    intents, decisions = _decisions(sim, t0)
    fixed, described = sim.plan(t0), sim.plan(t0)
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        for snap in [*(s for plans in intents.values() for s in plans), fixed, described]:
            pub.publish_plan(snap)
        await asyncio.sleep(1.0)
        for event in decisions:
            pub.publish_decision(event)
        pub.publish_delta(sim.delta(fixed, t0, changes={"title": "Roll back first"}))
        pub.publish_delta(sim.delta(described, t0))  # {"steps_added": 1}: no pair
    assert pub.stats.dropped == pub.stats.failed == 0
    return {"intents": intents, "fixed": fixed}


def _metrics(port: int) -> dict[tuple[str, str], float]:
    """Return the worker's pairs series: {(name, label value): value}."""
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our worker
        text = response.read().decode()
    return {
        (s.name, next(iter(s.labels.values()), "")): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if "pair" in s.name and s.name.endswith("_total")
    }


async def _wait_expired(port: int, count: int, within: float = 150.0) -> dict:
    """Return the worker's metrics once ``count`` intents expired, or after ``within``
    seconds. An intent expires up to a minute after its TTL (the expiry index keeps minutes,
    agents/joins/pair_miner.py), so the last of them up to about 66 s after its last plan,
    later on a loaded machine."""
    deadline = time.monotonic() + within
    while True:
        shown = _metrics(port)
        expired = sum(v for (n, _), v in shown.items() if n.startswith("learnstream_pair_intents"))
        if expired >= count or time.monotonic() > deadline:
            return shown
        await asyncio.sleep(0.5)


def _plan_ids(plans: list[Snap]) -> list[str]:
    return [snap["plan"]["plan_id"] for snap in plans]


async def test_pairs_from_replans_and_applicable_corrections(broker, start_worker, namespace):
    topics = TopicSettings(prefix=namespace)
    # Intents expire 6 s after their last plan: long after the scenario's plans all came.
    worker = start_worker(
        LEARNSTREAM_SAMPLE_FORMAT="avro",
        LEARNSTREAM_PAIRS__TTL="6s",
        LEARNSTREAM_PAIRS__SWEEP_INTERVAL="1",
    )
    scenario = await _publish(broker.bootstrap, topics, broker.embedded)
    intents = scenario["intents"]

    await read_until(broker.bootstrap, topics.name("preference_pairs"), 4)
    await asyncio.sleep(3.0)  # anything extra (a duplicate, a wrong pair) shows up now
    pairs = [
        json.loads(r.value)
        for r in await read_topic(broker.bootstrap, topics.name("preference_pairs"))
    ]
    samples = [
        decode_any(r.value) for r in await read_topic(broker.bootstrap, topics.name("samples"))
    ]
    by_plan = {
        (s["sample_family"], s["meta"]["plan_id"]): s
        for s in samples
        if s["sample_family"] in ("intent_resolution", "error_correction")
    }

    once, twice = _plan_ids(intents["once"]), _plan_ids(intents["twice"])
    expected = {
        ("replan", intents["once"][0]["intent"]["intent_id"], once[0], once[1]),
        ("replan", intents["twice"][0]["intent"]["intent_id"], twice[0], twice[2]),
        ("replan", intents["twice"][0]["intent"]["intent_id"], twice[1], twice[2]),
        ("correction", scenario["fixed"]["intent"]["intent_id"], None, None),
    }
    got = {
        (p["kind"], p["intent_id"], p["rejected"].get("plan_id"), p["chosen"].get("plan_id"))
        for p in pairs
    }
    assert len(pairs) == 4
    assert got == expected

    for pair in pairs:
        if pair["kind"] == "replan":
            rejected = by_plan["intent_resolution", pair["rejected"]["plan_id"]]
            chosen = by_plan["intent_resolution", pair["chosen"]["plan_id"]]
            assert pair["prompt"] == rejected["input"]
            assert pair["rejected_sample_id"] == rejected["sample_id"]
            assert pair["chosen_sample_id"] == chosen["sample_id"]
            assert pair["event_time"] == chosen["meta"]["event_time"]
        else:
            fixed = by_plan["error_correction", scenario["fixed"]["plan"]["plan_id"]]
            assert pair["rejected"] == fixed["input"]["plan_state"]
            assert pair["chosen"] == {**fixed["input"]["plan_state"], "title": "Roll back first"}
            assert pair["rejected_sample_id"] == pair["chosen_sample_id"] == fixed["sample_id"]
        ids = (pair["rejected_sample_id"], pair["chosen_sample_id"])
        assert pair["pair_id"] == pair_id(pair["kind"], *ids)
        assert pair["family"] == (
            "intent_resolution" if pair["kind"] == "replan" else "error_correction"
        )

    # The pairs come from the anonymized samples: the intents' PII never reaches them.
    wire = json.dumps(pairs)
    for kind, value in PII_SAMPLES.items():
        assert value not in wire, f"raw {kind} leaked into a pair"
    # Each part equals its sample's (asserted above), so a pair holds what the anonymized
    # samples hold, a plan title cut mid-address included ("...@example.o" is masked too).
    prompts = {p["intent_id"]: p["prompt"]["intent_text"] for p in pairs}
    snaps = [*(s for plans in intents.values() for s in plans), scenario["fixed"]]
    originals = {s["intent"]["intent_id"]: s["intent"]["text"] for s in snaps}
    private = [
        (originals[intent_id], text)
        for intent_id, text in prompts.items()
        if any(value in originals[intent_id] for value in PII_SAMPLES.values())
    ]
    assert private  # some pair's intent held PII, else this proves nothing of the masking
    for original, text in private:
        assert text != original
        assert re.search(r"<[A-Z_]+>", text), text  # an entity placeholder where PII was
    assert await read_topic(broker.bootstrap, topics.name("dlq")) == []

    # Four intents, three approved: after the TTL, all dropped, "never" counted unapproved.
    shown = await _wait_expired(worker.web_port, 4)
    assert shown[("learnstream_preference_pairs_total", "replan")] == 3
    assert shown[("learnstream_preference_pairs_total", "correction")] == 1
    assert shown[("learnstream_no_pair_total", "unknown_key")] == 1
    assert shown[("learnstream_pair_intents_expired_total", "false")] == 1
    assert shown[("learnstream_pair_intents_expired_total", "true")] == 3


def _series(port: int, name: str, label: str) -> float:
    """Return the worker's ``name`` series whose first label is ``label`` (0 if absent)."""
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our worker
        text = response.read().decode()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and next(iter(s.labels.values()), "") == label:
                return float(s.value)
    return 0.0


async def _wait_series(port: int, name: str, label: str, at_least: float, within: float) -> None:
    """Wait until the worker's ``name`` series labelled ``label`` reaches ``at_least``."""
    deadline = time.monotonic() + within
    while _series(port, name, label) < at_least:
        assert time.monotonic() < deadline, f"{name}{{{label}}} below {at_least}"
        await asyncio.sleep(0.5)


async def _topic_names(bootstrap: str) -> set[str]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        return set(await consumer.topics())
    finally:
        await consumer.stop()


async def test_a_worker_started_after_another_restores_the_intents_and_pairs_across(
    broker, start_worker, namespace
):
    """The intents have no changelog: the next worker reads the re-key topic back. A
    rejection matched by the first worker (its record committed when it stopped) pairs with
    the approval only the second one reads, once."""
    topics = TopicSettings(prefix=namespace)
    sim, t0 = Simulator(seed=23), datetime.now(UTC)
    first = sim.plan(t0)
    replan = sim.plan(t0, project_id=first["project_id"], intent=first["intent"])
    embedded = broker.embedded
    worker = start_worker()
    async with RuntimePublisher(broker.bootstrap, topics, one_record_per_batch=embedded) as pub:
        pub.publish_plan(first)
        pub.publish_plan(replan)
        await asyncio.sleep(1.0)
        pub.publish_decision(sim.decision(first, False, t0))
    # the re-keyed rejection was matched (and is committed on the way out)
    await _wait_series(worker.web_port, "learnstream_events_total", "pair_intents", 1, 60)
    assert worker.stop() == 0

    successor = start_worker()
    async with RuntimePublisher(broker.bootstrap, topics, one_record_per_batch=embedded) as pub:
        pub.publish_decision(sim.decision(replan, True, t0 + timedelta(seconds=10)))
    (record,) = await read_until(broker.bootstrap, topics.name("preference_pairs"), 1)
    pair = json.loads(record.value)
    assert (pair["kind"], pair["rejected"]["plan_id"], pair["chosen"]["plan_id"]) == (
        "replan",
        first["plan"]["plan_id"],
        replan["plan"]["plan_id"],
    )
    assert _series(successor.web_port, "learnstream_pair_intents_restored_total", "") >= 1
    await asyncio.sleep(2.0)  # a second pair (the rejection matched twice) would show now
    assert len(await read_topic(broker.bootstrap, topics.name("preference_pairs"))) == 1
    assert not any(
        name.endswith("-pair_intents-changelog") for name in await _topic_names(broker.bootstrap)
    )
