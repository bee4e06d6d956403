"""The Faust peer: the DIY peer's pipeline inside one Faust agent, the bound of a Faust design.

It runs :class:`benchmarks.peer.Peer` (the same decoding, join in plain dicts, builders,
privacy and codec) per record of one Faust agent over the five input topics, and sends
through Faust's producer the way the worker does (``app.producer.send``, acks=all, the
worker's app settings from ``learnstream.streams.io.app.create_app`` and its lean monitor
from ``learnstream.agents.seams.sensor``). Like the Faust floor it does not wait for each
record's acks: Faust acks the record when the agent moves on and commits on its timer. It
has no tables, changelogs, consent view, corrections watermark, metrics or pairs.

So it is the most a worker built of Faust agents, one step per record, can reach for the
same samples on this machine: whatever the worker does beyond it pays for a guarantee (state
that survives a restart, consent, event-time labels, metrics). The benchmark reports it next
to the floor and the DIY peer; a target it misses is out of reach of such a design. Run by the
benchmark as ``python -m benchmarks.faust_peer`` with a worker's LEARNSTREAM_* environment;
it prints ``ready`` once its partitions are assigned, and SIGTERM stops it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import faust
from faust.types import StreamT
from prometheus_client import CollectorRegistry

from benchmarks.peer import INPUT_FIELDS, Peer
from learnstream.agents.seams.sensor import install as install_lean_monitor
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app

__all__ = ["FaustSends", "Record", "build_app", "main", "step"]


@dataclass(frozen=True)
class Record:
    """A Faust message in the shape the peer reads (aiokafka's: timestamp in milliseconds)."""

    topic: str
    partition: int
    offset: int
    timestamp: float
    key: bytes | None
    value: bytes | None

    @classmethod
    def of(cls, message: Any) -> Record:
        """Return the peer's view of a Faust ``Message`` (its timestamp is in seconds)."""
        return cls(
            message.topic,
            message.partition,
            message.offset,
            message.timestamp * 1000,
            message.key,
            message.value,
        )


@dataclass(frozen=True)
class FaustSends:
    """The peer's ``send(topic, value, key=, headers=)`` on the app's own producer."""

    app: faust.App

    async def send(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: list[tuple[str, bytes]] | None = None,
    ) -> Awaitable[Any]:
        """Hand one record to Faust's producer; return its ack, not awaited here."""
        return await self.app.producer.send(topic, key, value, None, None, headers)


async def step(peer: Peer, message: Any) -> None:
    """Process one record; its acks are left to Faust's commit, as the floor's are."""
    await peer.handle(Record.of(message), datetime.now(UTC))


def build_app(settings: Settings) -> faust.App:
    """Return the one-agent app over the five inputs, with the worker's producer settings."""
    app = create_app(settings, settings.kafka_url or "", embedded=False)
    app.conf.web_enabled = False  # nothing to serve: no port to collide with a worker's
    install_lean_monitor(app, CollectorRegistry())  # the worker's: no per-record sensor work
    peer = Peer(settings, FaustSends(app))
    inputs = app.topic(*(settings.topics.name(f) for f in INPUT_FIELDS))
    started = False

    @app.agent(inputs, name="faust_peer.pipeline")
    async def pipeline(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await step(peer, event.message)

    @app.timer(settings.join.sweep_interval)  # type: ignore[untyped-decorator]
    async def sweep() -> None:
        await peer.sweep(datetime.now(UTC))

    def on_assigned(*_args: Any, **_kwargs: Any) -> None:
        nonlocal started
        if not started:  # CPU counts from here, as a worker's counts from Faust's ready
            started = True
            print("ready", flush=True)

    app.on_partitions_assigned.connect(on_assigned)
    return app


def main() -> None:
    """Run the Faust peer with the settings of the environment (LEARNSTREAM_*)."""
    settings = Settings()
    app = build_app(settings)
    # stdout carries only ``ready``, which the benchmark reads: Faust's own output (its
    # spinner's terminal codes) goes to stderr, and it must not take prints into its log.
    worker = faust.Worker(
        app, loglevel=logging.WARNING, quiet=True, stdout=sys.stderr, redirect_stdouts=False
    )
    worker.execute_from_commandline()


if __name__ == "__main__":
    main()
