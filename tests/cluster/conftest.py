"""One three-broker cluster for the whole session: starting one costs about a minute."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.kafka_cluster import KafkaCluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[KafkaCluster]:
    """Start three brokers once; every test finds all three running (``all_nodes_up``)."""
    with KafkaCluster() as started:
        yield started


@pytest.fixture(autouse=True)
def all_nodes_up(request: pytest.FixtureRequest) -> None:
    """Start any node an earlier test left stopped (a fault test that failed half-way), so
    one failure does not fail the tests after it on the shared cluster."""
    if "cluster" not in request.fixturenames:
        return
    cluster: KafkaCluster = request.getfixturevalue("cluster")
    stopped = [node for node in cluster.nodes if not node.is_running]
    for node in stopped:
        node.start()
    if stopped:
        cluster.wait_registered()
