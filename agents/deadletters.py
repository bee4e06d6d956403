"""Dead letters: a record we cannot turn into samples leaves as its own bytes, with why."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import faust
from faust.types import EventT

from learnstream.streams.dlq.record import DlqRecord, dlq_headers
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.observe.metrics import Metrics

__all__ = ["DeadLetters", "Produce"]

log = logging.getLogger("learnstream")

#: Send one record: (topic, key, value, source (topic, partition), headers) -> its ack.
Produce = Callable[
    [faust.TopicT, bytes | None, bytes | None, tuple[str, int], list[tuple[str, bytes]] | None],
    Awaitable[Awaitable[Any]],
]


class DeadLetters:
    """Send original bytes to the DLQ with headers saying why and from where, and count them.

    The error text names fields and reasons only, never an input value (PRIVACY.md).
    """

    def __init__(self, topic: faust.TopicT, metrics: Metrics, produce: Produce) -> None:
        self.topic = topic
        self.metrics = metrics
        self.produce = produce

    async def send(
        self, record: DlqRecord, key: bytes | None, value: bytes | None
    ) -> Awaitable[Any]:
        """Send one dead letter; its source partition names the transaction it joins. Return
        the broker's ack."""
        log.warning(
            "dead letter %s reason=%s error=%s", record.location, record.reason, record.error[:300]
        )
        source = (record.topic, record.partition)
        ack = await self.produce(self.topic, key, value, source, dlq_headers(record))
        self.metrics.child(self.metrics.dlq, record.reason).inc()
        return ack

    async def parked(self, entry: ParkedEvent, reason: str, error: str) -> Awaitable[Any]:
        """Dead-letter a parked join entry as the record it was read from; return the ack."""
        record = DlqRecord(reason, error, entry.topic, entry.partition, entry.offset)
        key = entry.key.encode() if entry.key else None
        return await self.send(record, key, entry.raw.encode())

    @staticmethod
    def where(event: EventT[bytes], reason: str, error: str) -> DlqRecord:
        """Return the dead letter of the record ``event`` for ``reason``."""
        msg = event.message
        return DlqRecord(
            reason=reason, error=error, topic=msg.topic, partition=msg.partition, offset=msg.offset
        )
