"""One three-broker cluster for the whole session: starting one costs about a minute."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.kafka_cluster import KafkaCluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[KafkaCluster]:
    """Start three brokers once; every fault test restarts what it stopped."""
    with KafkaCluster() as started:
        yield started
