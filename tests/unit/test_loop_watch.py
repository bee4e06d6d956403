"""The event-loop lag watch (agents/seams/loop_watch.py)."""

from __future__ import annotations

import asyncio
import time

from learnstream.agents.seams.loop_watch import watch
from learnstream.streams.observe.metrics import Metrics


def sample(metrics: Metrics, name: str) -> float:
    value = metrics.registry.get_sample_value(name)
    assert value is not None
    return value


async def test_a_loop_held_by_a_blocking_call_shows_as_lag() -> None:
    metrics = Metrics()

    async def blocker() -> None:
        await asyncio.sleep(0.005)
        time.sleep(0.3)  # noqa: ASYNC251  (on purpose: what a scan in one piece does)

    held = asyncio.create_task(blocker())
    await watch(metrics, interval=0.02, rounds=4)
    await held
    assert sample(metrics, "learnstream_event_loop_lag_seconds_count") == 4
    worst = sample(metrics, "learnstream_event_loop_lag_max_seconds")
    assert 0.25 <= worst < 5
    # one wake-up was at least 250 ms late, the others were not
    bucket = "learnstream_event_loop_lag_seconds_bucket"
    assert metrics.registry.get_sample_value(bucket, {"le": "0.25"}) == 3


async def test_a_free_loop_shows_no_lag_worth_a_bucket_above_a_quarter_second() -> None:
    metrics = Metrics()
    await watch(metrics, interval=0.01, rounds=3)
    below = metrics.registry.get_sample_value(
        "learnstream_event_loop_lag_seconds_bucket", {"le": "0.25"}
    )
    assert below == 3
