"""What every benchmark run shares: the broker, a scratch directory, progress output."""

from __future__ import annotations

import contextlib
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient

from benchmarks.brokers import BenchBroker
from benchmarks.workers import RunPlace
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.admin import ensure_topics

__all__ = ["Bench"]


@dataclass
class Bench:
    """The broker and scratch space of one benchmark invocation."""

    broker: BenchBroker
    workdir: Path
    started: float = field(default_factory=time.monotonic)
    step: str = ""

    def progress(self, message: str) -> None:
        """Print a progress line (elapsed time, current step) to stderr."""
        elapsed = time.monotonic() - self.started
        print(f"[{elapsed:6.0f}s] {self.step}: {message}", file=sys.stderr, flush=True)

    def place(self, name: str) -> RunPlace:
        """Return a fresh topic prefix, app id and directory for one run."""
        tag = f"{name}-{uuid.uuid4().hex[:6]}"
        workdir = self.workdir / tag
        workdir.mkdir(parents=True)
        return RunPlace(prefix=f"bench.{tag}.", app_id=f"bench-{tag}", workdir=workdir)

    async def create_topics(self, place: RunPlace) -> TopicSettings:
        """Create every topic of the run (4 partitions each) and return their names, with the
        replication decided for the broker (what the worker gives its changelogs)."""
        topics, _ = await ensure_topics(self.broker.bootstrap, TopicSettings(prefix=place.prefix))
        return topics

    async def drop_topics(self, place: RunPlace) -> None:
        """Delete the run's topics and changelogs so the broker does not fill up."""
        admin = AIOKafkaAdminClient(bootstrap_servers=self.broker.bootstrap)
        with contextlib.suppress(Exception):  # best effort: the embedded broker may refuse
            await admin.start()
            names = [
                t for t in await admin.list_topics() if t.startswith((place.prefix, place.app_id))
            ]
            if names:
                await admin.delete_topics(names)
        with contextlib.suppress(Exception):
            await admin.close()
