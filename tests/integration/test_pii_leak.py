"""A person's name, street address, internal email, bare tokens and date of birth, planted in
a plan, its rejection and a correction, leave the worker on no topic, log line or metric."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.sim.simulate import Simulator

pytestmark = pytest.mark.integration

# Made-up values that no name, street or town list holds: a hit cannot come from a lookup.
NAME = "Quillon Brevatt"
ADDRESS = "14 Harrowgate Lane, Bexbridge BX4 7QT"
EMAIL = "quillon.brevatt@payments.corp.internal"
GITHUB_TOKEN = "ghp_" + "Wq3ZtY8kLm2Np5Rs7Vx9Bc4Df6Gh1Jk0MnPq"
OPENAI_KEY = "sk-proj-" + "Hq7Tn2Vb9Xc4Lm8Kp3Rw6Zy1Fd5Gs0JaUe"
DOB = "1973-07-08"

#: Each planted value by kind, with the distinctive pieces a partial mask could leave behind.
PIECES = {
    "person name": [NAME, "Quillon", "Brevatt"],
    "street address": [ADDRESS, "14 Harrowgate", "Harrowgate", "Bexbridge", "BX4 7QT"],
    "internal email": [EMAIL, "payments.corp.internal", "corp.internal"],
    "bare token": [
        token[i : i + 6]
        for token, prefix in ((GITHUB_TOKEN, 4), (OPENAI_KEY, 8))
        for i in range(prefix, len(token) - 5)
    ],
    "date of birth": [DOB, "1973-07"],
}

OBJECTIVE = f"Refund the duplicate charge for {NAME}, born {DOB}, and mail the receipt to {EMAIL}."
STEPS = [
    f"Look up the account of {NAME} in the billing ledger",
    f"Ship the replacement card to {ADDRESS}",
    f"Rotate the leaked credential {GITHUB_TOKEN} before the refund runs",
    f"Tell {EMAIL} that the refund is done",
]
REASON = f"{NAME} asked us to hold the refund until {ADDRESS} is verified; reach {EMAIL}."
SUMMARY = f"Send the card to {ADDRESS} instead, as {NAME} (born {DOB}) asked."
FEEDBACK = f"Call billing with {OPENAI_KEY} and copy {EMAIL} on the receipt."
NEW_TITLE = f"Refund {NAME} at {ADDRESS}"
#: Words around the planted values that must reach the samples: proof the text is there.
KEPT = [
    "Refund the duplicate charge for",
    "Ship the replacement card to",
    "Rotate the leaked credential",
    "asked us to hold the refund until",
    "instead, as",
    "Call billing with",
]

#: Topics that hold the runtime's records as sent, by design (PRIVACY.md "Not covered"):
#: the inputs, and the join's state changelogs. Their ACLs are the inputs' ACLs.
RAW_BY_DESIGN = ("plans", "plan_approved", "plan_rejected", "delta_intents", "pipeline_stage")
RAW_CHANGELOGS = ("-plan_state-changelog", "-pending-changelog")


def _plant(sim: Simulator, t0: datetime) -> dict[str, Any]:
    snap = sim.plan(t0)
    snap["plan"] |= {"title": f"Refund for {NAME}", "objective": OBJECTIVE}
    for step, text in zip(snap["plan"]["steps"], STEPS, strict=False):
        step["description"] = text
    snap["plan"]["steps"] += [
        {"step_id": sim.uuid(), "description": text, "status": "pending"}
        for text in STEPS[len(snap["plan"]["steps"]) :]
    ]
    snap["intent"]["text"] = OBJECTIVE
    return snap


async def _publish(bootstrap: str, topics: TopicSettings, embedded: bool) -> dict[str, Any]:
    """Publish a rejected plan and a corrected, completed one; return both snapshots."""
    sim, t0 = Simulator(seed=29, pii_ratio=0.0), datetime.now(UTC)
    rejected, corrected = _plant(sim, t0), _plant(sim, t0)
    decision = sim.decision(rejected, False, t0)
    decision["payload"]["reason"] = REASON
    delta = sim.delta(corrected, t0 + timedelta(seconds=1), True, {"title": NEW_TITLE})
    delta["payload"] |= {"change_summary": SUMMARY, "feedback_text": FEEDBACK}
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        pub.publish_plan(rejected)
        pub.publish_plan(corrected)
        await asyncio.sleep(1.0)  # plans first, as a runtime publishes them
        pub.publish_decision(decision)
        pub.publish_delta(delta)
        pub.publish_stage(sim.stage(corrected, "completed", t0 + timedelta(seconds=2)))
    assert pub.stats.dropped == pub.stats.failed == 0
    return {"rejected": rejected, "corrected": corrected}


async def _topics(bootstrap: str, namespace: str) -> list[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return sorted(t for t in await admin.list_topics() if namespace.rstrip(".") in t)
    finally:
        await admin.close()


def _raw_by_design(topic: str, topics: TopicSettings) -> bool:
    inputs = {topics.name(field) for field in RAW_BY_DESIGN}
    return topic in inputs or topic.endswith(RAW_CHANGELOGS)


def _leaks(where: str, data: bytes | str) -> list[tuple[str, str, str]]:
    """Return (where, kind, piece) for every planted piece in data, any case."""
    text = (data.decode(errors="replace") if isinstance(data, bytes) else data).lower()
    return [
        (where, kind, piece)
        for kind, pieces in PIECES.items()
        for piece in pieces
        if piece.lower() in text
    ]


async def _topic_leaks(bootstrap: str, topics: TopicSettings, names: list[str]) -> list:
    """Read every topic whole: keys, values and headers, except raw-by-design values."""
    found = []
    for name in names:
        for record in await read_topic(bootstrap, name):
            parts = [record.key or b"", *(k.encode() + b"=" + v for k, v in record.headers)]
            if not (_raw_by_design(name, topics) or name == topics.name("dlq")):
                parts.append(record.value or b"")
            found += [leak for part in parts for leak in _leaks(name, part)]
    return found


def _metrics(port: int) -> str:
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our worker
        return response.read().decode()


def _sample_leaks(samples: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Return (family and JSON path, kind, piece) for every planted piece in a sample string."""
    found = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif isinstance(value, str):
            found.extend(_leaks(path, value))

    for sample in samples:
        walk(sample, f"samples:{sample['sample_family']}")
    return found


# Operators turn debug on to find a fault: the log must hold no private value then either.
@pytest.mark.parametrize("log_level", ["info", "debug"])
async def test_planted_pii_leaves_on_no_topic_log_or_metric(
    broker, start_worker, namespace, log_level
):
    topics = TopicSettings(prefix=namespace)
    worker = start_worker(LEARNSTREAM_JOIN__GRACE="6", LEARNSTREAM_LOG_LEVEL=log_level)
    snaps = await _publish(broker.bootstrap, topics, broker.embedded)
    plans = {snap["plan"]["plan_id"] for snap in snaps.values()}

    records = await read_until(broker.bootstrap, topics.name("samples"), 5, max_wait=90)
    samples = [decode_any(r.value) for r in records]
    assert sorted(s["sample_family"] for s in samples) == [
        "confirm_decision",
        "delta_impact",
        "error_correction",
        "intent_resolution",
        "pipeline_outcome",
    ]
    assert {s["meta"]["plan_id"] for s in samples} == plans
    pairs = await read_until(broker.bootstrap, topics.name("preference_pairs"), 1)
    assert len(pairs) == 1
    events = await read_until(broker.bootstrap, topics.name("events"), len(samples))
    assert len(events) == len(samples)
    wire = json.dumps(samples)
    for words in KEPT:
        assert words in wire, words
    for placeholder in ("<PERSON>", "<STREET_ADDRESS>", "<EMAIL_ADDRESS>", "<DATE_OF_BIRTH>"):
        assert placeholder in wire, placeholder

    names = await _topics(broker.bootstrap, namespace)
    assert {topics.name(t) for t in ("samples", "events", "preference_pairs")} <= set(names)
    # The pieces are found where the values are on purpose: the search itself works.
    raw = b"".join(r.value for r in await read_topic(broker.bootstrap, topics.name("plans")))
    assert {kind for _, kind, _ in _leaks("plans", raw)} == set(PIECES)
    dead = await read_topic(broker.bootstrap, topics.name("dlq"))
    assert [r for r in dead if any(p.encode() in r.value for p in plans)] == []

    leaks = _sample_leaks(samples) + await _topic_leaks(broker.bootstrap, topics, names)
    metrics = _metrics(worker.web_port)
    assert "learnstream_pii_entities_total" in metrics
    leaks += _leaks("/metrics", metrics)
    worker.stop()
    log = worker.log()
    assert "learnstream processing guarantee" in log  # the worker's own log, not empty
    leaks += _leaks("worker log", log)
    where = {(path, kind) for path, kind, _ in leaks}
    assert sorted(where) == [], "\n".join(sorted({f"{p}: {k} {v!r}" for p, k, v in leaks}))
