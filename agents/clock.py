"""The pipeline's clock: one callable the wiring hands to every part that reads the time.

Injected rather than imported, so a test sets the time by building the worker with its own
clock, and nothing patches a module's global.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

__all__ = ["Clock", "wall_clock"]

#: Return the current time (aware, UTC).
Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    """Return the current time on the wall clock, in UTC."""
    return datetime.now(UTC)
