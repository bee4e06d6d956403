"""Event-loop lag: how much later than asked a 100 ms sleep wakes up.

A worker runs every agent, heartbeat and scrape on one event loop; a piece of work that
holds it (a table scan, a long parse) delays all of them, and past the session timeout
costs the worker its partitions. ``learnstream_event_loop_lag_seconds`` shows how often
and how long; ``learnstream_event_loop_lag_max_seconds`` the worst since start.
"""

from __future__ import annotations

import asyncio
import time

from learnstream.agents.runtime import Runtime
from learnstream.streams.observe.metrics import Metrics

__all__ = ["INTERVAL_S", "register", "watch"]

#: How often the watch asks to wake.
INTERVAL_S = 0.1


async def watch(metrics: Metrics, interval: float = INTERVAL_S, rounds: int | None = None) -> None:
    """Measure the lag ``rounds`` times (None: until cancelled)."""
    worst = 0.0
    while rounds is None or rounds > 0:
        asked = time.monotonic()
        await asyncio.sleep(interval)
        lag = max(time.monotonic() - asked - interval, 0.0)
        metrics.loop_lag.observe(lag)
        if lag > worst:
            worst = lag
            metrics.loop_lag_max.set(worst)
        if rounds is not None:
            rounds -= 1


def register(runtime: Runtime) -> None:
    """Run the watch beside the agents (Faust cancels it when the worker stops)."""

    @runtime.app.task  # type: ignore[untyped-decorator]
    async def loop_watch() -> None:
        await watch(runtime.metrics)
