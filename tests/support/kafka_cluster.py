"""Run a three-node Apache Kafka 4.x KRaft cluster on 127.0.0.1 for tests.

Every node is a broker and a controller (``process.roles=broker,controller``), and the three
controllers form the quorum: the cluster keeps a metadata leader when any one node is down,
killed or frozen, which is the fault the tests inject. A dedicated controller would be a
fourth JVM on a 2-core machine, and a fault of it would not be one a broker sees.

The cluster keeps Kafka's own defaults where a user's cluster has them: the offsets and
transaction-state topics are replicated three times with ``min.isr`` 2, while
``default.replication.factor`` and ``min.insync.replicas`` stay 1, so what protects
learnstream's topics is what ``learnstream topics create`` sets, not the broker.

Usage::

    with KafkaCluster() as cluster:
        cluster.bootstrap                    # "127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>"
        cluster.node(2).kill()               # hard crash of node 2, data kept
        cluster.node(2).start()              # back on the same ports and data
        cluster.node(3).pause()              # SIGSTOP; resume() sends SIGCONT
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from aiokafka.errors import CorruptRecordException
from aiokafka.record.memory_records import MemoryRecords

from tests.support.kafka_server import (
    DEFAULT_VERSION,
    ApacheKafka,
    KafkaStartError,
    Quorum,
    free_port,
    random_cluster_id,
)

__all__ = ["CLUSTER_SETTINGS", "Batch", "KafkaCluster"]

#: Broker settings of every node (on top of tests/support/kafka_server.py's): Kafka's defaults
#: for its internal topics on a cluster of three.
CLUSTER_SETTINGS: dict[str, str] = {
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
}


@dataclass(frozen=True)
class Batch:
    """One record batch of a partition's log as a broker stored it: which producer wrote it,
    in which transaction state, and which offsets it holds."""

    first: int
    last: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    control: str | None  # "commit" or "abort" for a transaction marker, else None
    timestamp_ms: int

    def __str__(self) -> str:
        kind = self.control or ("txn" if self.transactional else "plain")
        return (
            f"{self.first}..{self.last} {kind} pid={self.producer_id} "
            f"epoch={self.producer_epoch} seq={self.base_sequence} t={self.timestamp_ms}"
        )


class KafkaCluster:
    """Three KRaft nodes (broker and controller each) on loopback, started and stopped as one."""

    def __init__(
        self, size: int = 3, version: str = DEFAULT_VERSION, overrides: dict[str, str] | None = None
    ) -> None:
        """Describe the cluster; nothing runs until :meth:`start`."""
        ports: dict[int, int] = {}
        for node in range(1, size + 1):
            port = free_port()
            while port in ports.values():
                port = free_port()
            ports[node] = port
        quorum = Quorum(random_cluster_id(), ports)
        settings = {**CLUSTER_SETTINGS, **(overrides or {})}
        self.nodes = [
            ApacheKafka(version, node_id=node, quorum=quorum, overrides=settings)
            for node in sorted(ports)
        ]

    @property
    def bootstrap(self) -> str:
        """Return every node's ``127.0.0.1:<port>``, comma-separated."""
        return ",".join(node.bootstrap for node in self.nodes)

    @property
    def url(self) -> str:
        """Return the kafka:// URL of every node."""
        return ";".join(f"kafka://{node.bootstrap}" for node in self.nodes)

    def node(self, node_id: int) -> ApacheKafka:
        """Return the node whose ``node.id`` is ``node_id``."""
        return next(node for node in self.nodes if node.node_id == node_id)

    def batches(self, topic: str, partition: int) -> list[Batch]:
        """Return ``topic[partition]``'s record batches as the first running node holding a
        replica stored them, read from its segment files (what ``kafka-dump-log`` shows):
        the producer id, epoch and sequence that tell a resent batch from a second send."""
        for node in self.nodes:
            folder = node.log_dir / "data" / f"{topic}-{partition}"
            if node.is_running and folder.is_dir():
                return [b for segment in sorted(folder.glob("*.log")) for b in _read(segment)]
        return []

    def start(self, timeout: float = 180) -> str:
        """Launch every node, then wait until each is ready and all are registered."""
        deadline = time.monotonic() + timeout
        try:
            for node in self.nodes:
                node.start(wait=False)
            for node in self.nodes:
                node.wait_ready(max(deadline - time.monotonic(), 1.0))
            self.wait_registered(max(deadline - time.monotonic(), 1.0))
        except BaseException:
            self.stop()
            raise
        return self.bootstrap

    def wait_registered(self, timeout: float = 60) -> None:
        """Block until the metadata lists every running node as a broker, or raise."""
        running = {node.node_id for node in self.nodes if node.is_running}
        deadline = time.monotonic() + timeout
        seen: set[int] = set()
        while time.monotonic() < deadline:
            seen = asyncio.run(_registered(self.bootstrap))
            if running <= seen:
                return
            time.sleep(0.25)
        raise KafkaStartError(f"brokers {sorted(running - seen)} never registered")

    def stop(self) -> None:
        """Stop every node at once (a paused one is resumed first, so SIGTERM reaches it):
        one at a time, the last would wait out its grace for a quorum already gone."""
        for node in self.nodes:
            if node.is_running:
                node.resume()
        with concurrent.futures.ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(lambda node: node.stop(), self.nodes))

    def __enter__(self) -> KafkaCluster:
        """Start the cluster for a ``with`` block."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the cluster when the ``with`` block ends."""
        self.stop()


async def _registered(bootstrap: str) -> set[int]:
    """Return the node ids the cluster's metadata lists as brokers (empty if none answers)."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5_000)
    try:
        await admin.start()
        cluster = await admin.describe_cluster()
    except Exception:  # a node not yet answering: asked again until the deadline
        return set()
    finally:
        await admin.close()
    return {int(broker["node_id"]) for broker in cluster.get("brokers", [])}


def _read(segment: Path) -> list[Batch]:
    """Return the batches of one log segment file (the wire's record batch format)."""
    records, out = MemoryRecords(segment.read_bytes()), []
    while True:
        try:
            batch = records.next_batch()
        except CorruptRecordException:  # the batch the broker is appending right now
            break
        if batch is None:
            break
        control = None
        if batch.is_control_batch:
            (marker,) = list(batch)
            control = "commit" if marker.key and marker.key[-1] == 1 else "abort"
        out.append(
            Batch(
                batch.base_offset,
                batch.base_offset + batch.last_offset_delta,
                batch.producer_id,
                batch.producer_epoch,
                batch.base_sequence,
                batch.is_transactional,
                control,
                batch.first_timestamp,
            )
        )
    return out
