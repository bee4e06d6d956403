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
from types import TracebackType

from tests.support.kafka_server import (
    DEFAULT_VERSION,
    ApacheKafka,
    KafkaStartError,
    Quorum,
    free_port,
    random_cluster_id,
)

__all__ = ["CLUSTER_SETTINGS", "KafkaCluster"]

#: Broker settings of every node (on top of tests/support/kafka_server.py's): Kafka's defaults
#: for its internal topics on a cluster of three.
CLUSTER_SETTINGS: dict[str, str] = {
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
}


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
