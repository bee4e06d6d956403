"""Event-to-sample latency at fixed offered loads, with one warm worker.

For each load the phase's plans are published first and processed (so no event waits
in the join's grace buffer), and the worker is left to go quiet (under 5 % of a core for
0.5 s: the burst's table writes are sent, not queued in front of the first events); then
the other events are published at the fixed rate, each stamped with its publish time.
Latency = the sample's broker timestamp - that stamp.

A warm-up phase (``warm_up``, not reported; ``Sizes.warm_up``: 10 s at 300 events/s in a
full run) runs first on the same worker and topics. The first records a worker and a broker
ever see of new topics pay one-time costs (the broker's first writes to new partitions, the
client's first requests), which the first measured load would otherwise carry. A freshly
started Apache Kafka broker also compiles its hot paths (JIT) for minutes, on the cores the
worker shares, and a short or light warm-up leaves that compilation in the first measured
phases' tail. A production broker is warm: the warm-up runs at a measured load long enough
for the compilation to settle (benchmarks/RESULTS.md, findings behind the design).
"""

from __future__ import annotations

import asyncio
from typing import Any

from benchmarks.context import Bench
from benchmarks.load import bench_workload, publish_fast, publish_paced, split_plans
from benchmarks.machine import load_average
from benchmarks.readback import latency_ms, read_out, wait_for_records
from benchmarks.workers import Fleet, settled_cpu, wait_metric
from learnstream.streams.config.settings import TopicSettings

__all__ = ["latency_run"]


async def _phase(
    bench: Bench,
    fleet: Fleet,
    topics: TopicSettings,
    rate: float,
    seconds: float,
    seed: int,
    totals: dict[str, int],
) -> dict[str, Any]:
    workload = bench_workload(int(rate * seconds), seed)
    plans, events = split_plans(workload.records)
    totals["plans"] += len(plans)
    totals["samples"] += len(workload.expected)
    await publish_fast(bench.broker.bootstrap, topics, plans, bench.broker.embedded)
    plans_in = await asyncio.to_thread(
        wait_metric, fleet, "learnstream_events_total", totals["plans"], 120, source="plans"
    )
    for pid in fleet.pids():  # and their plan_state writes sent: the burst is set-up, not load
        await asyncio.to_thread(settled_cpu, pid, 0.5, 30.0)
    bench.progress(f"{rate:g} ev/s: {len(plans):,} plans in, publishing {len(events):,} events")
    achieved = await publish_paced(
        bench.broker.bootstrap, topics, events, rate, bench.broker.embedded
    )
    done = await wait_for_records(
        bench.broker.bootstrap, topics.name("samples"), totals["samples"], 120, bench.progress
    )
    out = await read_out(bench.broker.bootstrap, topics.name("samples"), decode=True)
    result = latency_ms(out, set(workload.expected))
    return {
        "offered_per_s": rate,
        "achieved_per_s": round(achieved, 1),
        "load_avg": round(load_average(), 2),
        "complete": plans_in and done and result.get("samples") == len(workload.expected),
        **{k: round(v, 1) for k, v in result.items()},
    }


async def latency_run(
    bench: Bench,
    env: dict[str, str],
    rates: list[float],
    seconds: float,
    seed: int,
    warm_up: tuple[float, float],
) -> list[dict[str, Any]]:
    """Measure latency percentiles at each offered load in ``rates`` (events per second)."""
    place = bench.place("latency")
    topics = await bench.create_topics(place)
    fleet = Fleet(place, bench.broker, env, 1)
    totals = {"plans": 0, "samples": 0}
    try:
        await asyncio.to_thread(fleet.start)
        await asyncio.sleep(2.0)  # let the first assignment settle
        bench.progress(f"warm-up at {warm_up[0]:g} events/s for {warm_up[1]:g} s (not reported)")
        await _phase(bench, fleet, topics, *warm_up, seed - 1, totals)
        return [
            await _phase(bench, fleet, topics, rate, seconds, seed + i, totals)
            for i, rate in enumerate(rates)
        ]
    finally:
        fleet.stop()
        await bench.drop_topics(place)
