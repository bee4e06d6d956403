"""Broker faults on a three-broker cluster, under the kill -9 test's workload.

Every fault runs on the replication ``learnstream topics create`` gives by default (three
replicas, ``min.insync.replicas`` 2, ``acks=all``): the worker keeps running through it
(started once), every expected sample comes out, a duplicate is an identical copy, nothing is
dead-lettered; under ``exactly_once`` a read_committed reader sees every sample once; and
every input partition's consumer lag comes back to 0 (no partition stuck). The
fastest (a leader's kill -9) runs in ``make test-kafka``; every one in ``make test-cluster``.
Sizes: ``LEARNSTREAM_CLUSTER_EVENTS`` (default 6,000) at
``LEARNSTREAM_CLUSTER_RATE`` (default 300/s), the fault at a quarter of the stream.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.client import AIOKafkaClient, CoordinationType
from prometheus_client.parser import text_string_to_metric_families

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.admin import described_topics
from learnstream.streams.io.topics import INPUTS
from learnstream.streams.io.worker_process import WorkerProcess
from learnstream.streams.sim.workload import build_workload
from tests.reliability.harness import add_corrected_runs, assert_delivered, publish_paced
from tests.support.kafka_cluster import KafkaCluster
from tests.support.kafka_server import ApacheKafka

pytestmark = [pytest.mark.kafka, pytest.mark.cluster, pytest.mark.timeout(1200)]
EVENTS = int(os.environ.get("LEARNSTREAM_CLUSTER_EVENTS", "6000"))
RATE = float(os.environ.get("LEARNSTREAM_CLUSTER_RATE", "300"))


@pytest.fixture
def topics() -> TopicSettings:
    """Return this test's topic names (a unique prefix)."""
    return TopicSettings(prefix=f"f{uuid.uuid4().hex[:8]}.")


@pytest.fixture
def start_worker(
    cluster: KafkaCluster, topics: TopicSettings, tmp_path: Path
) -> Iterator[Callable[..., WorkerProcess]]:
    """Start workers on the cluster on demand; every one is stopped at teardown."""
    started: list[WorkerProcess] = []
    env = {
        "LEARNSTREAM_BROKER_URL": cluster.url,
        "LEARNSTREAM_APP_ID": f"ls-{topics.prefix.rstrip('.')}",
        "LEARNSTREAM_TOPICS__PREFIX": topics.prefix,
        "LEARNSTREAM_DATA_DIR": str(tmp_path / "data"),
        "LEARNSTREAM_JOIN__SWEEP_INTERVAL": "1",
        "LEARNSTREAM_JOIN__GRACE": "1h",
        "LEARNSTREAM_SAMPLE_FORMAT": "avro",
        "LEARNSTREAM_LOG_LEVEL": "info",
    }

    def start(**overrides: str) -> WorkerProcess:
        log = tmp_path / f"worker{len(started)}.log"
        worker = WorkerProcess({**env, **overrides}, log)
        started.append(worker)
        return worker.start(timeout=180)

    yield start
    for worker in started:
        worker.stop()


async def _leaders(bootstrap: str, topic: str) -> set[int]:
    """Return the node ids leading some partition of ``topic``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (described,) = await described_topics(admin, [topic])
    finally:
        await admin.close()
    return {int(partition["leader"]) for partition in described["partitions"]}


async def _busiest(cluster: KafkaCluster, topics: TopicSettings) -> int:
    """Return a node leading partitions of the samples topic and of an input, if one does."""
    samples = await _leaders(cluster.bootstrap, topics.name("samples"))
    plans = await _leaders(cluster.bootstrap, topics.name("plans"))
    return min(samples & plans or samples)


async def _transaction_coordinator(cluster: KafkaCluster, app_id: str) -> int:
    """Return the node coordinating the transactions of the worker's first partition
    (Faust's transactional ids are ``<app id>-<topic group>-<partition>``)."""
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await client.bootstrap()
    try:
        return int(await client.coordinator_lookup(CoordinationType.TRANSACTION, f"{app_id}-0-0"))
    finally:
        await client.close()


@dataclass
class Run:
    """What a fault did, for the test's one printed line."""

    fault: str = ""
    events: int = 0
    took: float = 0.0
    at_ms: int = 0  # when the fault began (wall clock, ms)


Fault = Callable[[Run], Awaitable[None]]


async def _run_fault(
    cluster: KafkaCluster,
    topics: TopicSettings,
    workers: list[WorkerProcess],
    fault: Fault,
    guarantee: str = "at_least_once",
) -> None:
    """Publish the workload, inject ``fault`` a quarter of the way in, verify the samples."""
    workload = build_workload(EVENTS, seed=41, sessions=0.1)
    corrections = add_corrected_runs(workload, every=40)
    publishing = asyncio.create_task(
        publish_paced(cluster.bootstrap, topics, workload.records, RATE, False, corrections)
    )
    await asyncio.sleep(0.25 * EVENTS / RATE)
    run = Run(events=len(workload.records), at_ms=int(time.time() * 1000))
    started = time.monotonic()
    await fault(run)
    run.took = time.monotonic() - started
    await publishing
    await assert_delivered(
        cluster.bootstrap,
        topics,
        workload.expected,
        guarantee,
        max_wait=300,
        headline=lambda waited: (
            f"{run.fault} ({guarantee}): {run.events} events, fault over in {run.took:.1f}s, "
            f"drained {waited:.1f}s after the last record"
        ),
        faults=[run.at_ms],
        logs=lambda: [worker.log() for worker in workers],
        explain=lambda got, verdict: (
            _batches_of(cluster, topics.name("samples"), got.places, verdict.duplicated)
            if guarantee == "exactly_once"
            else ""
        ),
    )
    for worker in workers:
        assert worker.proc is not None, "a worker was left stopped"
        assert worker.proc.poll() is None, f"a worker died:\n{worker.log()[-4000:]}"
    assert await _lag_cleared(workers, topics) == {}, "input partitions left behind"


async def _lag_cleared(
    workers: list[WorkerProcess], topics: TopicSettings, within: float = 90.0
) -> dict[str, float]:
    """Wait until the workers, together, report consumer lag 0 on every partition of every
    input topic (none stuck after the fault); return what is still wrong after ``within``:
    a lagging ``topic[partition]`` with its lag, or one no worker reports with -1 (a
    partition nobody holds has no lag series, which is a stuck partition too)."""
    wanted = {f"{topics.name(n)}[{p}]" for n in INPUTS for p in range(topics.partitions)}
    deadline = time.monotonic() + within
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        while True:
            series: dict[str, float] = {}
            for worker in workers:
                url = f"http://127.0.0.1:{worker.web_port}/metrics"
                async with session.get(url) as response:
                    text = await response.text()
                for family in text_string_to_metric_families(text):
                    if family.name == "learnstream_consumer_lag":
                        series |= {
                            f"{m.labels['topic']}[{m.labels['partition']}]": m.value
                            for m in family.samples
                        }
            wrong = {name: series.get(name, -1.0) for name in wanted if series.get(name) != 0}
            if not wrong or time.monotonic() > deadline:
                return wrong
            await asyncio.sleep(2.0)


def _batches_of(
    cluster: KafkaCluster,
    topic: str,
    places: dict[str, list[tuple[int, int, int]]],
    duplicated: dict[str, int],
) -> str:
    """Say which producer wrote each copy of some duplicated samples, in which batch, and
    which transaction markers lie between the copies: one producer's batch twice (a resend
    the broker took again) reads differently from two sends, or from two producers."""
    lines, logs = ["batches holding duplicated copies:"], {}
    for sample_id in sorted(duplicated)[:5]:
        copies = sorted(places[sample_id])
        partition = copies[0][0]
        batches = logs.setdefault(partition, cluster.batches(topic, partition))
        low, high = copies[0][1], copies[-1][1]
        lines.append(f"  {sample_id} p{partition}@{[offset for _, offset, _ in copies]}:")
        # the copies' batches and what follows the last: its transaction's marker
        lines += [f"    {b}" for b in batches if b.last >= low and b.first <= high + 2][:12]
    return "\n".join(lines)


def _kill_and_restart(node: ApacheKafka, what: str) -> Fault:
    """Return a fault that kills ``node`` (SIGKILL), waits past the brokers' session timeout
    (leaders and coordinators move), then starts it again on its ports and data."""

    async def kill_and_restart(run: Run) -> None:
        run.fault = f"kill -9 of node {node.node_id}, {what}"
        node.kill()
        try:
            await asyncio.sleep(10.0)  # broker.session.timeout.ms is 4 s
        finally:  # the session's later tests need the node back
            await asyncio.to_thread(node.start)

    return kill_and_restart


async def test_kill_9_of_the_broker_leading_samples_and_an_input_then_its_restart(
    cluster, topics, start_worker
):
    worker = start_worker()
    node = cluster.node(await _busiest(cluster, topics))
    fault = _kill_and_restart(node, "leading samples and plans partitions")
    await _run_fault(cluster, topics, [worker], fault)
    assert worker.starts == 1


@pytest.mark.slow_cluster
async def test_kill_9_of_the_transaction_coordinator_under_exactly_once(
    cluster, topics, start_worker
):
    worker = start_worker(LEARNSTREAM_PROCESSING_GUARANTEE="exactly_once")
    node = cluster.node(await _transaction_coordinator(cluster, f"ls-{topics.prefix[:-1]}"))
    fault = _kill_and_restart(node, "the transaction coordinator")
    await _run_fault(cluster, topics, [worker], fault, "exactly_once")


@pytest.mark.slow_cluster
async def test_a_broker_frozen_past_its_session_timeout_then_thawed(cluster, topics, start_worker):
    worker = start_worker()
    node = cluster.node(await _busiest(cluster, topics))

    async def freeze(run: Run) -> None:
        run.fault = f"SIGSTOP of node {node.node_id} for 15 s, then SIGCONT"
        node.pause()
        try:
            await asyncio.sleep(15.0)  # broker.session.timeout.ms is 4 s
        finally:
            node.resume()

    await _run_fault(cluster, topics, [worker], freeze)
    assert worker.starts == 1


@pytest.mark.slow_cluster
async def test_a_rolling_restart_of_every_broker_under_two_workers(cluster, topics, start_worker):
    workers = [start_worker(), start_worker()]

    async def rolling_restart(run: Run) -> None:
        run.fault = "rolling restart of nodes 1, 2, 3 (graceful, one at a time)"
        for node in cluster.nodes:
            await asyncio.to_thread(node.restart)
            await asyncio.to_thread(cluster.wait_registered)

    await _run_fault(cluster, topics, workers, rolling_restart)
    assert [worker.starts for worker in workers] == [1, 1]


@pytest.mark.slow_cluster
async def test_a_worker_killed_during_a_broker_failover(cluster, topics, start_worker):
    worker = start_worker()
    node = cluster.node(await _busiest(cluster, topics))

    async def kill_both(run: Run) -> None:
        run.fault = f"kill -9 of node {node.node_id}, then of the worker, restarted meanwhile"
        node.kill()
        await asyncio.sleep(1.0)  # the failover has begun: leaders are moving
        worker.kill()
        await asyncio.to_thread(worker.start, 180)
        await asyncio.to_thread(node.start)

    await _run_fault(cluster, topics, [worker], kill_both)
    assert worker.starts == 2
