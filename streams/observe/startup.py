"""How long a worker took from process start to ready, phase by phase.

A restart is what a user waits for after every deploy or crash, and what a test suite
pays per worker: the one log line this builds says where those seconds went (imports,
topic creation, wiring and the recognizers' warm-up, the consumer group's join and table
recovery) without a profiler. The clock is read by the caller and passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["StartupPhases", "process_age"]


@dataclass
class StartupPhases:
    """Phase durations, each marked at its end on one monotonic clock."""

    started: float
    phases: list[tuple[str, float]] = field(default_factory=list)
    _last: float = field(init=False)

    def __post_init__(self) -> None:
        self._last = self.started

    def mark(self, name: str, now: float) -> None:
        """End the phase ``name`` at ``now`` (it began where the last one ended)."""
        self.phases.append((name, max(0.0, now - self._last)))
        self._last = now

    def total(self) -> float:
        """Return the seconds from the start to the last mark."""
        return self._last - self.started

    def summary(self) -> str:
        """Return ``ready in 8.6 s (imports 2.1 s, topics 0.2 s, ...)``."""
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.phases)
        return f"ready in {self.total():.1f} s ({parts})"


def process_age(stat: str, uptime: str, ticks_per_second: int) -> float | None:
    """Return this process's age in seconds from ``/proc/self/stat`` and ``/proc/uptime``.

    Linux only (the caller passes the files' text); None when they do not parse, so a
    platform without them just leaves the imports out of the summary.
    """
    try:
        fields = stat.rsplit(")", 1)[1].split()
        started = int(fields[19]) / ticks_per_second  # starttime, field 22 of stat
        return max(0.0, float(uptime.split()[0]) - started)
    except (IndexError, ValueError):
        return None
