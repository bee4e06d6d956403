"""Smoke-test ops/kafka/run-local.sh: one node as it always ran, and a three-node KRaft cluster."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from learnstream.streams.io.admin import described_topics

pytestmark = pytest.mark.kafka

SCRIPT = Path(__file__).resolve().parents[2] / "ops" / "kafka" / "run-local.sh"
# Generous: the box running the suite is shared, and a start is ~20-60 s there.
START_TIMEOUT_S = 240
STATUS_STOPPED, STATUS_DEGRADED = 3, 4


def _run(state_dir: Path, command: str, nodes: int) -> subprocess.CompletedProcess[str]:
    """Run ``run-local.sh <command>`` on ``state_dir`` with ``KAFKA_NODES=nodes``."""
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_PORT", "KAFKA_CONTROLLER_PORT")}
    env |= {
        "LEARNSTREAM_KAFKA_STATE_DIR": str(state_dir),
        "KAFKA_NODES": str(nodes),
        "KAFKA_START_TIMEOUT": str(START_TIMEOUT_S),
    }
    return subprocess.run(
        ["bash", str(SCRIPT), command],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=START_TIMEOUT_S + 60,
    )


def _recorded_pids(state_dir: Path) -> list[int]:
    """Return the broker pids the state dir records (``pid``, ``pid.2``, ...)."""
    return [int(path.read_text()) for path in sorted(state_dir.glob("pid*"))]


def _alive(pid: int) -> bool:
    """Tell whether ``pid`` is a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _kill(pid: int, timeout: float = 10) -> None:
    """SIGKILL ``pid`` and wait until it is gone."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


@contextmanager
def _started(state_dir: Path, nodes: int) -> Iterator[subprocess.CompletedProcess[str]]:
    """Start ``nodes`` nodes, yield the start's output, then stop and check nothing is left."""
    pids: list[int] = []
    try:
        began = time.monotonic()
        started = _run(state_dir, "start", nodes)
        pids = _recorded_pids(state_dir)
        assert started.returncode == 0, started.stderr
        print(f"\nrun-local.sh start, {nodes} node(s): {time.monotonic() - began:.1f} s")
        yield started
    finally:
        pids = pids or _recorded_pids(state_dir)
        stopped = _run(state_dir, "stop", nodes)
        assert stopped.returncode == 0, stopped.stderr
        assert not [pid for pid in pids if _alive(pid)]
        assert not list(state_dir.iterdir())
        assert _run(state_dir, "status", nodes).returncode == STATUS_STOPPED


def _bootstrap(stdout: str) -> list[str]:
    """Return the addresses of the ``KAFKA_BOOTSTRAP_SERVERS=`` line."""
    (line,) = stdout.splitlines()
    assert line.startswith("KAFKA_BOOTSTRAP_SERVERS=")
    return line.removeprefix("KAFKA_BOOTSTRAP_SERVERS=").split(",")


async def _broker_ids(bootstrap: str) -> list[int]:
    """Return the node ids ``describe_cluster()`` lists."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        cluster = await admin.describe_cluster()
    finally:
        await admin.close()
    return sorted(int(broker["node_id"]) for broker in cluster["brokers"])


async def _replicated_topic(bootstrap: str, topic: str) -> set[int]:
    """Create ``topic`` with 3 replicas, write to it with acks=all, return its replica counts."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        response = await admin.create_topics([NewTopic(topic, 2, 3)])
        assert [code for _, code, *_ in response.topic_errors] == [0]
        (described,) = await described_topics(admin, [topic])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"replicated")
    finally:
        await producer.stop()
    return {len(partition["replicas"]) for partition in described["partitions"]}


def test_one_node_as_before(tmp_path: Path) -> None:
    """The default single node prints, reports and stops as it always has."""
    with _started(tmp_path, 1) as started:
        (address,) = _bootstrap(started.stdout)
        assert re.fullmatch(r"127\.0\.0\.1:\d+", address)
        assert re.fullmatch(
            r"run-local: started pid \d+, logs in \S+/kafka\.log; waiting for readiness\n"
            rf"run-local: ready: Apache Kafka \S+ on {re.escape(address)}\n",
            started.stderr,
        )
        status = _run(tmp_path, "status", 1)
        assert status.returncode == 0
        assert re.fullmatch(r"running pid=\d+ logs=\S+/kafka\.log", status.stdout.splitlines()[0])
        assert _bootstrap(status.stdout.split("\n", 1)[1]) == [address]
        assert asyncio.run(_broker_ids(address)) == [1]


def test_three_nodes(tmp_path: Path) -> None:
    """Three nodes form one cluster; status sees a dead node; stop ends the rest."""
    with _started(tmp_path, 3) as started:
        addresses = _bootstrap(started.stdout)
        assert len(set(addresses)) == 3
        assert all(re.fullmatch(r"127\.0\.0\.1:\d+", address) for address in addresses)
        bootstrap = ",".join(addresses)
        assert asyncio.run(_broker_ids(bootstrap)) == [1, 2, 3]
        assert asyncio.run(_replicated_topic(bootstrap, "run-local-rf3")) == {3}

        _kill(int((tmp_path / "pid.3").read_text()))
        status = _run(tmp_path, "status", 3)
        assert status.returncode == STATUS_DEGRADED
        assert "stopped node=3" in status.stdout
        refused = _run(tmp_path, "start", 3)
        assert refused.returncode == 1
        assert "2 of 3 nodes are running" in refused.stderr
