"""Scale-out: 1 vs N workers of one consumer group over the same 4-partition topics.

The workers are started first and the group is left to settle (so a mid-run rebalance
does not count against N workers); then the workload is published as fast as possible and
timed from the first to the last sample. Same method for 1 and N workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient

from benchmarks.context import Bench
from benchmarks.load import bench_workload, publish_fast
from benchmarks.machine import load_average
from benchmarks.readback import read_out, wait_for_records, window
from benchmarks.workers import Fleet, cpu_seconds
from learnstream.streams.sim.workload import verify

__all__ = ["scaleout_run"]

SETTLE_S = 3.0


async def _members(bootstrap: str, group: str) -> tuple[str, int]:
    """Return (state, member count) of a consumer group."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        response = (await admin.describe_consumer_groups([group]))[0]
        _error, _name, state, _ptype, _protocol, members, *_ = response.groups[0]
        return state, len(members)
    finally:
        await admin.close()


async def wait_group(bench: Bench, group: str, size: int, max_wait: float = 60.0) -> bool:
    """Wait until ``group`` is Stable with ``size`` members (False if it never is)."""
    deadline = time.monotonic() + max_wait
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):  # not every broker answers DescribeGroups
            state, members = await _members(bench.broker.bootstrap, group)
            if state == "Stable" and members == size:
                await asyncio.sleep(SETTLE_S)  # table recovery after the assignment
                return True
        await asyncio.sleep(0.5)
    return False


async def scaleout_run(
    bench: Bench, workers: int, env: dict[str, str], events: int, seed: int
) -> dict[str, Any]:
    """Time ``workers`` warm workers over a workload published as fast as possible."""
    place = bench.place(f"scale{workers}")
    topics = await bench.create_topics(place)
    workload = bench_workload(events, seed)
    fleet = Fleet(place, bench.broker, env, workers)
    try:
        await asyncio.to_thread(fleet.start)
        stable = await wait_group(bench, place.app_id, workers)
        cpu_before = sum(cpu_seconds(p) for p in fleet.pids())
        published = await publish_fast(
            bench.broker.bootstrap, topics, workload.records, bench.broker.embedded
        )
        done = await wait_for_records(
            bench.broker.bootstrap,
            topics.name("samples"),
            len(workload.expected),
            max(180, events / 20),
            bench.progress,
        )
        cpu = sum(cpu_seconds(p) for p in fleet.pids()) - cpu_before
    finally:
        fleet.stop()
    out = await read_out(bench.broker.bootstrap, topics.name("samples"), decode=True)
    await bench.drop_topics(place)
    verdict = verify(workload.expected, [r.sample for r in out if r.sample is not None])
    seconds = window(out)
    return {
        "workers": workers,
        "events": len(workload.records),
        "group_stable": stable,
        "publish_s": round(published, 2),
        "window_s": round(seconds, 3),
        "events_per_s": len(workload.records) / seconds if seconds else 0.0,
        "outputs_per_s": len(out) / seconds if seconds else 0.0,
        "complete": done and verdict.delivered,
        "verdict": verdict.report(),
        "cpu_s": round(cpu, 2),
        "load_avg": round(load_average(), 2),
    }
