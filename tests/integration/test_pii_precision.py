"""Technical plans pass through the worker with what they say intact.

The step texts are sentences of real technical text this project did not write (the dev
split of the independent precision corpus: Debian package descriptions, PyPI summaries,
docstrings; benchmarks/data/independent/, which records where each comes from), with the
sentences marked as holding personal data left out. Each reaches a sample exactly as the
library's anonymizer leaves it, and at least ``FLOOR`` of them unchanged: a library name
masked as a person is a sample lost to a trainer (precision counts as much as recall).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.independent.corpus import load
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_until
from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.sim.simulate import Simulator

pytestmark = pytest.mark.integration

PLANS, STEPS = 6, 20
#: The share of clean sentences that must come out unchanged: below the dev split's whole
#: figure (89.4 % on 27 Nov, `python -m benchmarks.independent`), raised as it improves.
FLOOR = 0.85


def _sentences() -> list[str]:
    """Return the first PLANS x STEPS clean dev sentences (the split is ordered by hash)."""
    dev = load("dev")
    clean = [row.text for row in dev.rows if row.id not in dev.personal]
    return list(dict.fromkeys(clean))[: PLANS * STEPS]


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


async def test_technical_plans_reach_the_samples_as_the_anonymizer_leaves_them(
    broker, start_worker, namespace
):
    topics = TopicSettings(prefix=namespace)
    sentences = _sentences()
    start_worker()
    sim, t0 = Simulator(seed=7, pii_ratio=0.0), datetime.now(UTC)
    snaps = []
    for k in range(PLANS):
        snap = sim.plan(t0)
        snap["plan"]["steps"] = [
            {"step_id": sim.uuid(), "description": text, "status": "pending"}
            for text in sentences[k * STEPS : (k + 1) * STEPS]
        ]
        snaps.append(snap)
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        for snap in snaps:
            pub.publish_plan(snap)
        await asyncio.sleep(1.0)  # plans first, as a runtime publishes them
        for snap in snaps:
            pub.publish_decision(sim.decision(snap, True, t0))
    assert pub.stats.dropped == pub.stats.failed == 0

    records = await read_until(broker.bootstrap, topics.name("samples"), 2 * PLANS, max_wait=90)
    carried = {s for r in records for s in _strings(decode_any(r.value))}
    anonymizer = Anonymizer(PrivacyConfig())
    expected = {text: anonymizer.anonymize_text(text)[0] for text in sentences}
    missing = [text for text, out in expected.items() if out not in carried]
    assert missing == []  # the worker's pass is the library's, sentence for sentence
    changed = {text: out for text, out in expected.items() if out != text}
    kept = 1 - len(changed) / len(sentences)
    assert kept >= FLOOR, f"{kept:.1%} unchanged; changed: {changed}"
