"""Dead-letter records: the original bytes plus headers saying what went wrong and where."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["DlqRecord", "dlq_headers", "parse_headers"]

_MAX_ERROR = 2_000


@dataclass(frozen=True)
class DlqRecord:
    """Where a dead letter came from and why."""

    reason: str
    error: str
    topic: str
    partition: int
    offset: int

    @property
    def location(self) -> str:
        """Return ``topic=.. partition=.. offset=..`` for logs."""
        return f"topic={self.topic} partition={self.partition} offset={self.offset}"


def dlq_headers(record: DlqRecord) -> list[tuple[str, bytes]]:
    """Return the Kafka headers of a dead letter."""
    return [
        ("reason", record.reason.encode()),
        ("error", record.error[:_MAX_ERROR].encode("utf-8", "replace")),
        ("source_topic", record.topic.encode()),
        ("source_partition", str(record.partition).encode()),
        ("source_offset", str(record.offset).encode()),
    ]


def parse_headers(headers: Iterable[tuple[str, bytes | None]]) -> DlqRecord:
    """Return the DlqRecord described by a dead letter's headers."""
    h = {k: (v or b"").decode("utf-8", "replace") for k, v in headers}
    return DlqRecord(
        reason=h.get("reason", "unknown"),
        error=h.get("error", ""),
        topic=h.get("source_topic", ""),
        partition=int(h.get("source_partition") or -1),
        offset=int(h.get("source_offset") or -1),
    )
