"""Event-to-sample latency at fixed offered loads, with one warm worker.

For each load the phase's plans are published first and processed (so no event waits
in the join's grace buffer), and the worker is left to go quiet (under 5 % of a core for
0.5 s: the burst's table writes are sent, not queued in front of the first events); then
the other events are published at the fixed rate, each stamped with its publish time.
Latency = the sample's broker timestamp - that stamp. Each phase also reports the CPU its
paced events cost the worker (or the peer), per event and in cores over the phase (from the
first paced event to the last sample read back), so a tail can be read against the load:
at 141 paced events/s the worker and the peer were about as busy, yet the worker's tail was
twice the peer's (benchmarks/RESULTS.md, 30 Nov 13:23).

A warm-up phase (``warm_up``, not reported; ``Sizes.warm_up``: 10 s at 300 events/s in a
full run) runs first on the same worker and topics. The first records a worker and a broker
ever see of new topics pay one-time costs (the broker's first writes to new partitions, the
client's first requests), which the first measured load would otherwise carry. A freshly
started Apache Kafka broker also compiles its hot paths (JIT) for minutes, on the cores the
worker shares, and a short or light warm-up leaves that compilation in the first measured
phases' tail. A production broker is warm: the warm-up runs at a measured load long enough
for the compilation to settle (benchmarks/RESULTS.md, findings behind the design).

The Faust peer (benchmarks/faust_peer.py: the same samples in one Faust agent, no tables,
consent view, watermark or pairs) is measured the same way on its own topics, with the same
loads and seeds: its latency is the bound of a design of Faust agents on this machine, as its
throughput is in the throughput suite. It has no metrics, so a phase starts once its CPU has
gone quiet after the plans.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.context import Bench
from benchmarks.load import bench_workload, publish_fast, publish_paced, split_plans
from benchmarks.machine import load_average
from benchmarks.readback import latency_ms, read_out, wait_for_records
from benchmarks.throughput import start_peer
from benchmarks.workers import Fleet, cpu_seconds, settled_cpu, wait_metric
from learnstream.streams.config.settings import TopicSettings

__all__ = ["Loads", "latency_run", "peer_latency_run"]

#: Wait until the plans published so far are in (the total); True if they are.
PlansIn = Callable[[int], Awaitable[bool]]


@dataclass(frozen=True)
class Loads:
    """One round's phases: the offered loads (events per second), each phase's seconds,
    the workload's seed, and the unreported warm-up (events per second, seconds)."""

    rates: list[float]
    seconds: float
    seed: int
    warm_up: tuple[float, float]


async def _phase(
    bench: Bench,
    plans_in: PlansIn,
    pids: list[int],
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
    plans_done = await plans_in(totals["plans"])
    for pid in pids:  # and their plan_state writes sent: the burst is set-up, not load
        await asyncio.to_thread(settled_cpu, pid, 0.5, 30.0)
    bench.progress(f"{rate:g} ev/s: {len(plans):,} plans in, publishing {len(events):,} events")
    cpu, started = sum(cpu_seconds(pid) for pid in pids), time.monotonic()
    achieved = await publish_paced(
        bench.broker.bootstrap, topics, events, rate, bench.broker.embedded
    )
    done = await wait_for_records(
        bench.broker.bootstrap, topics.name("samples"), totals["samples"], 120, bench.progress
    )
    cpu, took = sum(cpu_seconds(pid) for pid in pids) - cpu, time.monotonic() - started
    out = await read_out(bench.broker.bootstrap, topics.name("samples"), decode=True)
    result = latency_ms(out, set(workload.expected))
    return {
        "offered_per_s": rate,
        "achieved_per_s": round(achieved, 1),
        "load_avg": round(load_average(), 2),
        "complete": plans_done and done and result.get("samples") == len(workload.expected),
        **{k: round(v, 1) for k, v in result.items()},
        # the load behind the tail: the CPU the paced events cost, and how busy that keeps it
        "cpu_ms_per_event": round(1000 * cpu / max(len(events), 1), 2),
        "cores": round(cpu / took, 2),
    }


async def latency_run(bench: Bench, env: dict[str, str], loads: Loads) -> list[dict[str, Any]]:
    """Measure latency percentiles at each of ``loads.rates`` (events per second)."""
    place = bench.place("latency")
    topics = await bench.create_topics(place)
    fleet = Fleet(place, bench.broker, env, 1)

    async def plans_in(total: int) -> bool:
        return await asyncio.to_thread(
            wait_metric, fleet, "learnstream_events_total", total, 120, source="plans"
        )

    try:
        await asyncio.to_thread(fleet.start)
        await asyncio.sleep(2.0)  # let the first assignment settle
        return await _phases(bench, plans_in, fleet.pids(), topics, loads)
    finally:
        fleet.stop()
        await bench.drop_topics(place)


async def peer_latency_run(bench: Bench, env: dict[str, str], loads: Loads) -> list[dict[str, Any]]:
    """Measure the Faust peer's latency percentiles the same way, at the same loads."""
    place = bench.place("latency-peer")
    topics = await bench.create_topics(place)

    async def plans_in(_total: int) -> bool:
        return True  # no metric: the phase waits for its CPU to go quiet

    try:
        proc = await start_peer(bench, place, env)  # stopped by itself if it fails to start
        try:
            await asyncio.sleep(2.0)  # as for the worker
            return await _phases(bench, plans_in, [proc.pid], topics, loads)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)
    finally:
        await bench.drop_topics(place)


async def _phases(
    bench: Bench,
    plans_in: PlansIn,
    pids: list[int],
    topics: TopicSettings,
    loads: Loads,
) -> list[dict[str, Any]]:
    """Run the unreported warm-up, then one phase per load."""
    totals = {"plans": 0, "samples": 0}
    warm_rate, warm_s = loads.warm_up
    bench.progress(f"warm-up at {warm_rate:g} events/s for {warm_s:g} s (not reported)")
    await _phase(bench, plans_in, pids, topics, warm_rate, warm_s, loads.seed - 1, totals)
    return [
        await _phase(bench, plans_in, pids, topics, rate, loads.seconds, loads.seed + i, totals)
        for i, rate in enumerate(loads.rates)
    ]
