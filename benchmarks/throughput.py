"""End-to-end throughput: the pass-through floors, the DIY peer and learnstream, pre-loaded.

All read the same workload from the same topics (4 partitions each). The figure is the
number of input events over the seconds from the first to the last output record's broker
timestamp, so process start-up is not counted. After a run of a worker or a peer, the records
its tables wrote are read back from their changelog topics (``<app id>-<table>-changelog``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.context import Bench
from benchmarks.load import bench_workload, publish_fast, publish_paced
from benchmarks.machine import load_average
from benchmarks.readback import (
    OutRecord,
    changelog_counts,
    count_topic,
    read_out,
    wait_for_records,
    window,
)
from benchmarks.workers import Fleet, RunPlace, cpu_seconds, profiled, settled_cpu
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.topics import INPUTS
from learnstream.streams.sim.workload import Workload, verify

__all__ = ["baseline_run", "floor_run", "learnstream_run", "peer_run", "start_peer"]

ROOT = Path(__file__).resolve().parents[1]


def _drain_timeout(events: int) -> float:
    """Allow even a slow configuration (NER) ~20 events/s before giving up."""
    return max(180.0, events / 20)


async def _preload(
    bench: Bench, place: RunPlace, events: int, seed: int, unique: bool = True
) -> tuple[TopicSettings, Workload]:
    topics = await bench.create_topics(place)
    workload = bench_workload(events, seed, unique=unique)
    took = await publish_fast(
        bench.broker.bootstrap, topics, workload.records, bench.broker.embedded, bench.progress
    )
    bench.progress(f"pre-loaded {len(workload.records):,} events in {took:.1f}s")
    return topics, workload


def _rates(events: int, out: list[OutRecord], extra: dict[str, Any]) -> dict[str, Any]:
    seconds = window(out)
    return {
        "events": events,
        "outputs": len(out),
        "window_s": round(seconds, 3),
        "events_per_s": events / seconds if seconds else 0.0,
        "outputs_per_s": len(out) / seconds if seconds else 0.0,
        "load_avg": round(load_average(), 2),
        **extra,
    }


async def baseline_run(bench: Bench, events: int, seed: int) -> dict[str, Any]:
    """Run the raw aiokafka pass-through over a pre-loaded workload of ``events`` records."""
    return await _pass_through_run(bench, "baseline", "benchmarks.baseline", events, seed)


async def floor_run(bench: Bench, events: int, seed: int) -> dict[str, Any]:
    """Run the one-agent Faust pass-through (benchmarks/faust_floor.py) the same way."""
    return await _pass_through_run(bench, "faust-floor", "benchmarks.faust_floor", events, seed)


async def _pass_through_run(
    bench: Bench, name: str, module: str, events: int, seed: int
) -> dict[str, Any]:
    place = bench.place(name)
    topics, workload = await _preload(bench, place, events, seed)
    output = topics.name("samples")
    cmd = [
        sys.executable, "-m", module, "--bootstrap", bench.broker.bootstrap,
        "--inputs", *(topics.name(t) for t in INPUTS), "--output", output,
        "--group", place.app_id, *(["--embedded"] if bench.broker.embedded else []),
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(*cmd, cwd=ROOT, stdin=subprocess.DEVNULL)
    try:
        done = await wait_for_records(
            bench.broker.bootstrap, output, len(workload.records), 300, bench.progress
        )
        cpu = cpu_seconds(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    out = await read_out(bench.broker.bootstrap, output, decode=False)
    await bench.drop_topics(place)
    return _rates(len(workload.records), out, {"complete": done, "cpu_s": round(cpu, 2)})


async def start_peer(
    bench: Bench, place: RunPlace, env: dict[str, str], module: str = "benchmarks.faust_peer"
) -> asyncio.subprocess.Process:
    """Start a peer (``module``) with a worker's ``env`` on ``place``'s topics; return it once
    it prints ``ready`` (its log: ``peer.log`` in the place's directory). SIGTERM stops it."""
    env = {**env, "LEARNSTREAM_DATA_DIR": str(place.workdir / "data")}  # Faust's, if any
    with (place.workdir / "peer.log").open("ab") as log:
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", module),
            cwd=ROOT,
            env={**os.environ, **place.env(bench.broker, env)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
        )
    assert proc.stdout is not None  # noqa: S101 - stdout=PIPE above
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 180)
        if line.strip() != b"ready":
            raise RuntimeError(f"the peer did not start: see {place.workdir / 'peer.log'}")
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        raise
    return proc


async def peer_run(
    bench: Bench,
    name: str,
    env: dict[str, str],
    events: int,
    seed: int,
    *,
    unique: bool = True,
    module: str = "benchmarks.peer",
    profile_to: Path | None = None,
) -> dict[str, Any]:
    """Run a peer (``module``: benchmarks/peer.py, or faust_peer.py, the same pipeline in one
    Faust agent) with a worker's ``env``; verify it like a worker.

    CPU is counted from its ``ready`` line, as a worker's is from Faust's ready: importing
    and building the anonymizer is start-up, not per-event work.
    """
    place = bench.place(name)
    topics, workload = await _preload(bench, place, events, seed, unique)
    if profile_to is not None:
        env = profiled(env, profile_to)
    proc = await start_peer(bench, place, env, module)
    try:
        started, ready_cpu = time.monotonic(), cpu_seconds(proc.pid)
        if profile_to is not None:
            os.kill(proc.pid, signal.SIGPROF)
        done = await wait_for_records(
            bench.broker.bootstrap,
            topics.name("samples"),
            len(workload.expected),
            _drain_timeout(events),
            bench.progress,
        )
        wall, cpu = time.monotonic() - started, cpu_seconds(proc.pid) - ready_cpu
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    return await _verified(bench, place, topics, workload, done, wall, cpu)


async def _verified(
    bench: Bench,
    place: RunPlace,
    topics: TopicSettings,
    workload: Workload,
    done: bool,
    wall: float,
    cpu: float,
    settled: float | None = None,
    counters: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Read the samples and the tables' changelogs back (the process has stopped: nothing
    more comes), check the samples against the workload, drop the run's topics."""
    out = await read_out(bench.broker.bootstrap, topics.name("samples"), decode=True)
    dead = await count_topic(bench.broker.bootstrap, topics.name("dlq"))
    changelog = await changelog_counts(bench.broker.bootstrap, place.app_id)
    await bench.drop_topics(place)
    verdict = verify(workload.expected, [r.sample for r in out if r.sample is not None])
    return _rates(
        len(workload.records),
        out,
        {
            "complete": done and verdict.delivered,
            "verdict": verdict.report(),
            "dead_letters": dead,
            "changelog": changelog,  # per table: records, tombstones, keys, offsets
            "changelog_records": sum(c["records"] for c in changelog.values()),
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            **({} if settled is None else {"cpu_settled_s": round(settled, 2)}),
            **({} if counters is None else {"worker_counters": counters}),
        },
    )


#: Worker counters read at the end of a run: work a round did beyond its input events (more
#: events handled than loaded, a rebalance, records read again) shows in its CPU per event.
WORKER_COUNTERS = ("events", "rebalances", "redelivered", "join_misses")


def worker_counters(fleet: Fleet) -> dict[str, float]:
    """Return the counters of ``WORKER_COUNTERS`` summed over the fleet's workers."""
    return {name: fleet.metric(f"learnstream_{name}_total") for name in WORKER_COUNTERS}


async def learnstream_run(
    bench: Bench,
    name: str,
    env: dict[str, str],
    events: int,
    seed: int,
    *,
    unique: bool = True,
    profile_to: Path | None = None,
    paced: float | None = None,
) -> dict[str, Any]:
    """Run one worker over a pre-loaded workload; verify every expected sample came out.

    ``paced``: publish the workload at that many events per second once the worker is ready
    instead (live traffic: a caught-up worker, what its tables write then)."""
    place = bench.place(name)
    if paced is None:
        topics, workload = await _preload(bench, place, events, seed, unique)
    else:
        topics = await bench.create_topics(place)
        workload = bench_workload(events, seed, unique=unique)
    if profile_to is not None:
        env = profiled(env, profile_to)
    fleet = Fleet(place, bench.broker, env, 1)
    started = time.monotonic()
    try:
        await asyncio.to_thread(fleet.start)
        ready_cpu = cpu_seconds(fleet.pids()[0])
        if profile_to is not None:
            os.kill(fleet.pids()[0], signal.SIGPROF)
        if paced is not None:
            bench.progress(f"publishing {len(workload.records):,} events at {paced:g}/s")
            publishing = asyncio.ensure_future(
                publish_paced(
                    bench.broker.bootstrap, topics, workload.records, paced, bench.broker.embedded
                )
            )
        done = await wait_for_records(
            bench.broker.bootstrap,
            topics.name("samples"),
            len(workload.expected),
            _drain_timeout(events),
            bench.progress,
        )
        if paced is not None:
            await publishing
        wall, cpu = time.monotonic() - started, cpu_seconds(fleet.pids()[0]) - ready_cpu
        # Work left after the last sample (pairs, window flushes) is the events' work too.
        settled = await asyncio.to_thread(settled_cpu, fleet.pids()[0]) - ready_cpu
        counters = await asyncio.to_thread(worker_counters, fleet)
    finally:
        # SIGTERM: a stopping worker writes what it holds in memory in its last commit
        # (agents/seams/faust_compat.py, handing_over), so the changelogs read back count it.
        fleet.stop()
    return await _verified(
        bench, place, topics, workload, done, wall, cpu, settled, counters=counters
    )
