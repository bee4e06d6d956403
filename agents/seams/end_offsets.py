"""Where each topic ends: the broker's answers every wait of the worker is measured against.

The consent fence waits until the consent view has read what the consent topic held when a
record came; the corrections watermark until the corrections input has been read that far.
Both ask here, on one connection of their own (a ListOffsets request must not queue behind
a reader's long poll). :class:`Ends` is what the wiring hands them, so a test builds the
worker with answers of its own instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Protocol

from aiokafka import AIOKafkaConsumer, TopicPartition
from mode import Service

from learnstream.agents.seams.faust_compat import refresh_metadata
from learnstream.agents.seams.own_reader import outside_group
from learnstream.agents.seams.tailer import partitions_of
from learnstream.streams.consent.fence import Offsets
from learnstream.streams.io.connection import Broker

__all__ = ["EndOffsets", "Ends"]

log = logging.getLogger("learnstream")


class Ends(Protocol):
    """The end offsets the worker's waits ask for."""

    async def consent(self) -> Offsets:
        """Return the end offset of every partition of the consent topic."""

    async def corrections(self, partitions: list[int]) -> Mapping[int, int]:
        """Return the end offsets of these partitions of the corrections topic."""


class EndOffsets(Service):
    """Ask the broker for end offsets (read_committed) of the consent and corrections topics."""

    def __init__(self, broker: Broker, consent_topic: str, corrections_topic: str) -> None:
        super().__init__()
        self.broker = broker
        self.consent_topic, self.corrections_topic = consent_topic, corrections_topic
        self._asker: AIOKafkaConsumer | None = None
        self._consent: list[TopicPartition] = []
        self._ready = asyncio.Event()

    async def consent(self) -> Offsets:
        """Return the consent topic's end offsets (committed records: read_committed)."""
        ends: dict[TopicPartition, int] = await self.ends_of(self._consent)
        return ends

    async def corrections(self, partitions: list[int]) -> dict[int, int]:
        """Return the end offsets of ``partitions`` of the corrections topic."""
        asked = [TopicPartition(self.corrections_topic, p) for p in partitions]
        ends = await self.ends_of(asked)
        return {tp.partition: end for tp, end in ends.items()}

    async def ends_of(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Return the end offsets of ``partitions``, once connected."""
        await self._ready.wait()
        if self._asker is None:  # stopping: the caller asks again, and is cancelled
            raise RuntimeError("the end-offset asker is stopped")
        ends: dict[TopicPartition, int] = await self._asker.end_offsets(partitions)
        return ends

    async def on_stop(self) -> None:
        """Close the connection."""
        await self._close()

    @Service.task
    async def _connect(self) -> None:
        while not self.should_stop:
            try:
                await self._try_connect()
                return
            except Exception as exc:
                log.warning("end-offset asker: cannot start (%s); retrying", type(exc).__name__)
                await self._close()
                await self.sleep(1.0)

    async def _try_connect(self) -> None:
        self._asker = asker = outside_group(
            self.broker, "learnstream-end-offsets", "read_committed"
        )
        await asker.start()
        self._consent = await partitions_of(asker, self.consent_topic, self.sleep)
        await refresh_metadata(asker)  # the corrections topic too
        await asker.end_offsets(self._asked_at_start(asker))
        self._ready.set()

    def _asked_at_start(self, asker: AIOKafkaConsumer) -> list[TopicPartition]:
        """Return every partition whose end is asked here, to ask once before any record
        waits: an asker new to a topic (or to its leader) first waits out a metadata retry,
        about 0.1 s, which would otherwise land on the first consent fence and corrections
        round (benchmarks/RESULTS.md, findings behind the design)."""
        corrections = sorted(asker.partitions_for_topic(self.corrections_topic) or ())
        return [*self._consent, *(TopicPartition(self.corrections_topic, p) for p in corrections)]

    async def _close(self) -> None:
        asker, self._asker = self._asker, None
        if asker is not None:
            await asker.stop()
