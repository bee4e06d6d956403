"""On a three-broker Apache Kafka cluster, every topic learnstream creates is replicated.

``learnstream topics create`` and the worker give every topic, the tables' changelogs
included, three replicas and ``min.insync.replicas`` 2 on a cluster whose own defaults are
Kafka's (one replica, one in sync): with ``acks=all`` an acknowledged write then survives the
loss of any one broker. A topic that already exists with one replica (the events topic here)
is reported, not altered.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from learnstream.streams.io.admin import described_topics
from learnstream.streams.io.worker_process import WorkerProcess
from tests.support.kafka_cluster import KafkaCluster
from tests.support.topic_configs import describe_configs

pytestmark = [pytest.mark.kafka, pytest.mark.cluster]


@pytest.fixture
def env(cluster: KafkaCluster, tmp_path: Path) -> dict[str, str]:
    """Return a worker's and the CLI's environment, isolated to this test."""
    namespace = f"c{uuid.uuid4().hex[:8]}."
    return {
        "LEARNSTREAM_BROKER_URL": cluster.url,
        "LEARNSTREAM_APP_ID": f"ls-{namespace.rstrip('.')}",
        "LEARNSTREAM_TOPICS__PREFIX": namespace,
        "LEARNSTREAM_DATA_DIR": str(tmp_path / "data"),
        "LEARNSTREAM_LOG_LEVEL": "info",
    }


async def _describe(bootstrap: str, names: list[str]) -> dict[str, tuple[set[int], str | None]]:
    """Return each topic's replica counts over its partitions and its min.insync.replicas."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        topics = await described_topics(admin, names)
        responses = await describe_configs(admin, names)
    finally:
        await admin.close()
    configs = {
        name: dict((entry[0], entry[1]) for entry in entries)
        for response in responses
        for _, _, _, name, entries, *_ in response.resources
    }
    return {
        topic["topic"]: (
            {len(p["replicas"]) for p in topic["partitions"]},
            configs.get(topic["topic"], {}).get("min.insync.replicas"),
        )
        for topic in topics
    }


async def _create_one_replica_topic(bootstrap: str, name: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, 4, 1)])
    finally:
        await admin.close()


def test_topics_create_replicates_every_topic_and_reports_one_it_did_not(cluster, env):
    events = f"{env['LEARNSTREAM_TOPICS__PREFIX']}mplp.learning_events"
    asyncio.run(_create_one_replica_topic(cluster.bootstrap, events))

    done = subprocess.run(
        [sys.executable, "-m", "learnstream", "topics", "create"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    status = {line.split()[-1]: line.rsplit(" ", 1)[0].strip() for line in done.stdout.splitlines()}
    assert status.pop(events) == "exists (differs: replication 1 < 3, min.insync.replicas)"
    assert set(status.values()) == {"created"}, status
    described = asyncio.run(_describe(cluster.bootstrap, sorted(status)))
    assert described == dict.fromkeys(status, ({3}, "2"))


def test_the_worker_replicates_its_changelogs_and_warns_of_a_one_replica_topic(
    cluster, env, tmp_path
):
    events = f"{env['LEARNSTREAM_TOPICS__PREFIX']}mplp.learning_events"
    asyncio.run(_create_one_replica_topic(cluster.bootstrap, events))
    worker = WorkerProcess(env, tmp_path / "worker.log")
    try:
        worker.start(timeout=180)
    finally:
        worker.stop()

    app_id = env["LEARNSTREAM_APP_ID"]
    changelogs = [f"{app_id}-{table}-changelog" for table in ("plan_state", "pending", "graphs")]
    described = asyncio.run(_describe(cluster.bootstrap, changelogs))
    assert described == dict.fromkeys(changelogs, ({3}, "2"))
    warning = (
        f"topic {events} exists (differs: replication 1 < 3, min.insync.replicas): learnstream "
        "wants replication 3 and min.insync.replicas 2"
    )
    assert warning in worker.log()
