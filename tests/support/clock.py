"""A clock a test can stop and move, handed to ``learnstream.agents.wiring.wire(clock=...)``."""

from __future__ import annotations

from datetime import datetime

from learnstream.agents.clock import wall_clock

__all__ = ["SettableClock"]


class SettableClock:
    """The wall clock until a test sets ``now``; then that moment, until it moves it."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now if self.now is not None else wall_clock()
