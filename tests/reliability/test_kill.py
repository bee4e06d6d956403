"""kill -9 the worker mid-stream, restart it, and check every valid event has its samples.

Modelled on Kafka Streams' EOS system test: a generator publishes a known workload, faults
are injected, a verifier reads ``learning_samples`` back and prints ALL-RECORDS-DELIVERED or
exactly what is missing / duplicated. Sizes: ``LEARNSTREAM_RELIABILITY_EVENTS`` (default
20,000 events, over ~7,600 plans).
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time

import pytest

from streams.config.settings import TopicSettings
from streams.sim.workload import build_workload
from tests.reliability.harness import add_corrected_runs, publish_paced, wait_delivered

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(1800)]
EVENTS = int(os.environ.get("LEARNSTREAM_RELIABILITY_EVENTS", "20000"))
KILLS = 5


def _identical_but_created_at(raw: dict[str, list[bytes]]) -> list[str]:
    """Return the ids whose duplicates differ in anything but ``created_at``."""
    from streams.encoding.codecs import decode_any

    differing = []
    for sample_id, copies in raw.items():
        bodies = [{**decode_any(c), "created_at": None} for c in copies]
        if any(b != bodies[0] for b in bodies[1:]):
            differing.append(sample_id)
    return differing


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


#: Worker log lines that tell where transactions and offsets went (for a failed run's report).
_TELLING = re.compile(
    r"=== start|transactional producers|Commit invoked|Exception in|[Ff]enced|Discarded commit"
    r"|Revoking previously|Executing _on_partitions_assigned|Ignoring missing|WARNING|ERROR"
    # what Progress and the stall watch read again (streams/offsets/progress.py,
    # streams/observe/stall.py)
    r"|came before|not in the log|re-read started|not handed over|hold no records"
)


def _log_digest(log: str, limit: int = 200) -> str:
    """Return the telling lines of a worker log, the last ``limit`` of them."""
    lines = [line[:240] for line in log.splitlines() if _TELLING.search(line)]
    return "\n".join(lines[-limit:])


def _where_samples_sit(got, sample_ids, kills: list[int]) -> str:
    """Say where the copies of some samples sit (duplicated or wrong), next to the kill
    times, with the plan each belongs to."""
    families = {s["sample_id"]: s["sample_family"] for s in got.samples}
    plans = {s["sample_id"]: s.get("meta", {}).get("plan_id") for s in got.samples}
    lines = [f"kills at (ms): {kills}"]
    for sample_id in sorted(sample_ids)[:10]:
        copies = ", ".join(f"p{p}@{o} t={t}" for p, o, t in got.places[sample_id])
        lines.append(f"  {sample_id} {families[sample_id]} plan {plans[sample_id]}: {copies}")
    return "\n".join(lines)


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
    isolation = "read_committed" if guarantee == "exactly_once" else "read_uncommitted"
    verdict, got, waited = await wait_delivered(
        broker.bootstrap, topics, workload.expected, max_wait=600, isolation_level=isolation
    )
    print(
        f"\n{guarantee} on {broker.kind}: {EVENTS} events, {KILLS} kills, restart "
        f"to ready {max(recoveries):.1f}s max, drained {waited:.1f}s after the last "
        f"record: {verdict.report()}"
    )
    if verdict.duplicated or verdict.wrong:
        print(_where_samples_sit(got, {*verdict.duplicated, *verdict.wrong}, kills))
        print(_log_digest(worker.log()))
    # A run and its replay produce identical samples (created_at aside): every copy of a
    # sample id is the same, and labels follow event time (verify checks each label).
    assert verdict.delivered, verdict.report()
    assert _identical_but_created_at(got.raw) == []
    assert _decisions_counting_corrections(got.samples) == [], f"{len(corrections)} corrected plans"
    assert got.dlq_reasons == []
    if guarantee == "exactly_once":
        assert verdict.duplicated == {}, verdict.report()


async def test_kill_9_at_least_once(broker, start_worker, namespace):
    await _kill_run(broker, start_worker, namespace, "at_least_once")


@pytest.mark.kafka
@pytest.mark.eos
async def test_kill_9_exactly_once(broker, start_worker, namespace):
    """Transactions: Apache Kafka only (the embedded broker has no InitProducerId).

    A read_committed reader must see every sample exactly once. It took three workarounds
    of Faust's commit path (agents/faust_compat.py, RELIABILITY.md): drain the send buffer before
    a commit, commit only between records, and commit what was processed rather than
    Faust's acks. `make test-eos` runs this test alone; `make test-kafka` includes it.
    """
    assert not broker.embedded, "exactly_once needs transactions: run with `make test-kafka`"
    await _kill_run(broker, start_worker, namespace, "exactly_once")
