"""The one exception type for bad input, carrying a DLQ reason code."""

from __future__ import annotations

from typing import Literal

__all__ = ["REASONS", "InvalidEvent", "Reason"]

Reason = Literal[
    "undecodable",
    "invalid_json",
    "too_large",
    "schema_violation",
    "unknown_event_type",
    "wrong_topic",
    "plan_state_missing",
    "builder_error",
]
REASONS: tuple[str, ...] = Reason.__args__  # type: ignore[attr-defined]


class InvalidEvent(ValueError):
    """Raise when an input record cannot become a sample; ``reason`` names the DLQ reason."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason: Reason = reason
        self.detail = message
