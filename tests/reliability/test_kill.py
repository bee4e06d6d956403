"""kill -9 the worker mid-stream, restart it, and check every valid event has its samples.

Modelled on Kafka Streams' EOS system test: a generator publishes a known workload, faults
are injected, a verifier reads ``learning_samples`` back and prints ALL-RECORDS-DELIVERED or
exactly what is missing / duplicated. Sizes: ``LEARNSTREAM_RELIABILITY_EVENTS``, 6,000 by
default (CI); ``make test-soak`` runs 20,000 (over ~7,600 plans). The five kills and their
restarts, not the events, set how long it takes.
"""

from __future__ import annotations

import asyncio
import os
import random
import time

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.sim.workload import build_workload
from tests.reliability.harness import add_corrected_runs, assert_delivered, publish_paced

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(900)]
EVENTS = int(os.environ.get("LEARNSTREAM_RELIABILITY_EVENTS", "6000"))
KILLS = 5


def _decisions_counting_corrections(samples: list[dict]) -> list[str]:
    """Return the intent_resolution ids of decisions that count a correction: in this
    workload every correction comes after its plan's decision, so as of the decision there
    is none. (A plan evaluation, ``feedback.source`` system, comes after the correction.)"""
    return [
        s["sample_id"]
        for s in samples
        if s["sample_family"] == "intent_resolution"
        and s["feedback"]["source"] == "user"
        and s["state"]["corrections_so_far"] != 0
    ]


async def _kill_run(broker, start_worker, namespace, guarantee: str) -> None:
    topics = TopicSettings(prefix=namespace)
    workload = build_workload(EVENTS, seed=17, sessions=0.1)  # MAP sessions too
    corrections = add_corrected_runs(workload, every=40)
    worker = start_worker(
        LEARNSTREAM_JOIN__GRACE="1h",
        LEARNSTREAM_SAMPLE_FORMAT="avro",
        LEARNSTREAM_PROCESSING_GUARANTEE=guarantee,
    )
    rate = 400.0  # events/s: the stream lasts ~EVENTS/rate seconds, kills land inside it
    publishing = asyncio.create_task(
        publish_paced(
            broker.bootstrap, topics, workload.records, rate, broker.embedded, corrections
        )
    )
    rng, recoveries, kills = random.Random(5), [], []
    for _ in range(KILLS):
        await asyncio.sleep(rng.uniform(2.0, 0.8 * EVENTS / rate / KILLS))
        worker.kill()
        kills.append(int(time.time() * 1000))
        started = time.monotonic()
        await asyncio.to_thread(worker.start)
        recoveries.append(time.monotonic() - started)
    await publishing
    got = await assert_delivered(
        broker.bootstrap,
        topics,
        workload.expected,
        guarantee,
        max_wait=600,
        headline=lambda waited: (
            f"{guarantee} on {broker.kind}: {EVENTS} events, {KILLS} kills, restart to ready "
            f"{max(recoveries):.1f}s max, drained {waited:.1f}s after the last record"
        ),
        faults=kills,
        logs=lambda: [worker.log()],
        group=f"ls-{namespace.rstrip('.')}",
        inputs={record.topic for record in workload.records},
        metrics_url=f"http://127.0.0.1:{worker.web_port}/metrics",
    )
    # Labels follow event time (verify checks each label), whatever the kills replayed.
    assert _decisions_counting_corrections(got.samples) == [], f"{len(corrections)} corrected plans"


async def test_kill_9_at_least_once(broker, start_worker, namespace):
    await _kill_run(broker, start_worker, namespace, "at_least_once")


@pytest.mark.kafka
@pytest.mark.eos
async def test_kill_9_exactly_once(broker, start_worker, namespace):
    """Transactions: Apache Kafka only (the embedded broker has no InitProducerId).

    A read_committed reader must see every sample exactly once. It took three workarounds
    of Faust's commit path (agents/seams/faust_compat.py, RELIABILITY.md): drain the send
    buffer before a commit, commit only between records, and commit what was processed rather than
    Faust's acks. `make test-eos` runs this test alone; `make test-kafka` includes it.
    """
    assert not broker.embedded, "exactly_once needs transactions: run with `make test-kafka`"
    await _kill_run(broker, start_worker, namespace, "exactly_once")
