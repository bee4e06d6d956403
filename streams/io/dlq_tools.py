"""Read and replay the dead-letter topic (``learnstream dlq show|replay``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaProducer

from learnstream.streams.dlq.record import DlqRecord, parse_headers
from learnstream.streams.io.connection import Broker, connection_of
from learnstream.streams.io.reader import read_topic

__all__ = ["DeadLetter", "load_dead_letters", "replay"]

_PREVIEW = 160


@dataclass(frozen=True)
class DeadLetter:
    """One DLQ record: why, from where, and the original bytes."""

    record: DlqRecord
    key: bytes | None
    value: bytes | None
    dlq_offset: int

    def preview(self) -> str:
        """Return the value as printable text, shortened."""
        text = (self.value or b"").decode("utf-8", "backslashreplace")
        return text if len(text) <= _PREVIEW else text[:_PREVIEW] + "…"

    def describe(self) -> str:
        """Return a one-record, human-readable description."""
        return (
            f"[{self.record.reason}] {self.record.location}\n"
            f"  error: {self.record.error}\n  value: {self.preview()}"
        )

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict."""
        return {
            "reason": self.record.reason,
            "error": self.record.error,
            "source_topic": self.record.topic,
            "source_partition": self.record.partition,
            "source_offset": self.record.offset,
            "dlq_offset": self.dlq_offset,
            "key": (self.key or b"").decode("utf-8", "replace"),
            "value": self.preview(),
        }


async def load_dead_letters(broker: Broker, topic: str) -> list[DeadLetter]:
    """Return every dead letter currently in ``topic``."""
    records = await read_topic(broker, topic)
    return [DeadLetter(parse_headers(r.headers), r.key, r.value, r.offset) for r in records]


async def replay(broker: Broker, letters: list[DeadLetter]) -> int:
    """Send each dead letter's original key and value back to its source topic."""
    options = connection_of(broker).client_options()
    producer = AIOKafkaProducer(**options, acks="all", max_batch_size=1)
    await producer.start()
    try:
        for letter in letters:
            await producer.send_and_wait(letter.record.topic, key=letter.key, value=letter.value)
    finally:
        await producer.stop()
    return len(letters)
