"""Worker memory (VmRSS) per 100,000 plans held in ``plan_state``, per table store.

The 1M-plan figure is extrapolated: RSS after the load plus the marginal growth (slope
over the second half of the load) times the plans still missing. Linear is pessimistic
for RocksDB once its memtables flush to disk, and optimistic if they have not yet filled.

Two ways to load (``--preload``):

* ``live`` (the default): plans go through the ``plans`` input topic, chunk by chunk, and
  the worker processes each (about 965 plans/s: 10M would take about three hours);
* ``changelog``: the records a worker would have written to its ``plan_state`` changelog
  for those plans are written to that topic directly (benchmarks/preload.py: same keys,
  partitions and value bytes; values varied from 400 real PlanStates, about 1,170 bytes
  on average like the live load's), then one worker starts, restores its table from the
  changelog and rebuilds the sweeper's expiry index from it, a slice per tick, until
  ``learnstream_expiry_index_built`` turns 1; the longest event-loop lag meanwhile is
  recorded (``loop_lag_max_s``). RSS ready is that of the same worker started before
  the changelog was written (empty tables); the curve is RSS against the plans restored
  (Faust's "total remaining" log line, every 5 s). The worker processes no plan: the
  parse, join and PlanStore cache of the live path are left out, the RocksDB writes of
  the restore and the full-table scan of the index rebuild are in.
"""

from __future__ import annotations

import asyncio
import importlib.util
import random
import re
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import linear_regression
from typing import Any

import orjson

from benchmarks.configs import MemoryVariant
from benchmarks.context import Bench
from benchmarks.load import publish_fast, unique_texts
from benchmarks.machine import load_average
from benchmarks.preload import (
    TEMPLATES,
    changelog_topic,
    create_changelog,
    now_utc,
    produce_changelog,
    templates_of,
    varied_records,
)
from benchmarks.workers import Fleet, RunPlace, rss_mb, wait_metric
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.sim.simulate import Simulator
from learnstream.streams.sim.workload import Record

__all__ = [
    "PRELOADS", "ROCKSDB_INSTALL", "memory_run", "plan_records", "preload_run", "store_available",
]  # fmt: skip

ROCKSDB_INSTALL = "pip install 'learnstream[rocksdb]'"
SETTLE_S = 3.0
#: Plans published at a time (at most): the next chunk waits until the worker has processed
#: this one, so consumer buffers stay small and RSS reflects the table, not a backlog.
CHUNK = 2_000
#: How the plans get into the table: processed from the plans topic, or restored from a
#: changelog written beforehand (module docstring).
PRELOADS = ("live", "changelog")


def store_available(store: str) -> bool:
    """Tell whether the table store can be used here (RocksDB needs ``rocksdict``)."""
    return not store.startswith("rocksdb") or importlib.util.find_spec("rocksdict") is not None


def plan_records(count: int, seed: int) -> list[Record]:
    """Return ``count`` distinct plan snapshots (unique texts), as the runtime publishes them.

    Every other plan is completed, so the sweeper's expiry index holds half of them.
    """
    sim, rng = Simulator(seed, pii_ratio=0.3), random.Random(seed)
    start = datetime.now(UTC)
    records = []
    for i in range(count):
        status = "completed" if i % 2 else "proposed"
        snap = unique_texts(sim.plan(start + timedelta(milliseconds=i), status=status), rng)
        records.append(Record("plans", snap["plan"]["plan_id"].encode(), orjson.dumps(snap)))
    return records


async def _load(
    bench: Bench, fleet: Fleet, topics: TopicSettings, records: list[Record]
) -> list[tuple[int, float]]:
    """Publish plans chunk by chunk, each once the last is processed; return (plans, RSS)."""
    pid, curve = fleet.pids()[0], [(0, rss_mb(fleet.pids()[0]))]
    size = min(CHUNK, max(100, len(records) // 20))  # >= 10 points for the second half
    for start in range(0, len(records), size):
        chunk = records[start : start + size]
        await publish_fast(bench.broker.bootstrap, topics, chunk, bench.broker.embedded)
        loaded = start + len(chunk)
        if not await asyncio.to_thread(
            wait_metric, fleet, "learnstream_events_total", loaded, 120, source="plans"
        ):
            break
        curve.append((loaded, rss_mb(pid)))
        if len(curve) % 10 == 0:
            bench.progress(f"{loaded:,}/{len(records):,} plans in, RSS {curve[-1][1]:,.0f} MiB")
    return curve


def _slope_per_100k(curve: list[tuple[int, float]]) -> float:
    """Return the least-squares RSS growth per 100k plans over the second half of the load."""
    half = curve[len(curve) // 2 :]
    if len(half) < 2:
        return 0.0
    return linear_regression([p for p, _ in half], [r for _, r in half]).slope * 100_000


def _env(variant: MemoryVariant) -> dict[str, str]:
    return {"LEARNSTREAM_STORE": variant.store}


async def memory_run(
    bench: Bench, variant: MemoryVariant, plans: int, seed: int, preload: str = "live"
) -> dict[str, Any]:
    """Load ``plans`` plans into one warm worker's plan_state; return its RSS growth."""
    if preload == "changelog":
        return await preload_run(bench, variant, plans, seed)
    place = bench.place(f"memory-{variant.key}")
    topics = await bench.create_topics(place)
    fleet = Fleet(place, bench.broker, _env(variant), 1)
    records = plan_records(plans, seed)
    try:
        await asyncio.to_thread(fleet.start)
        await asyncio.sleep(SETTLE_S)
        started = time.monotonic()
        curve = await _load(bench, fleet, topics, records)
        load_s = time.monotonic() - started
        await asyncio.sleep(SETTLE_S)
        after, peak = rss_mb(fleet.pids()[0]), rss_mb(fleet.pids()[0], "VmHWM")
    finally:
        fleet.stop()
        await bench.drop_topics(place)
    before, marginal, reached = curve[0][1], _slope_per_100k(curve), curve[-1][0]
    return {
        "variant": variant.key,
        "plans": plans,
        "plans_per_s": round(reached / load_s, 1),
        "load_avg": round(load_average(), 2),
        "complete": reached == plans,
        "preload": "live",
        "rss_ready_mb": round(before, 1),
        "rss_loaded_mb": round(after, 1),
        "rss_peak_mb": round(peak, 1),
        "mb_per_100k_plans": round((after - before) * 100_000 / max(reached, 1), 1),
        "marginal_mb_per_100k": round(marginal, 1),
        "rss_1m_plans_mb": round(after + marginal * (1_000_000 - reached) / 100_000, 1),
        "curve": [(p, round(r, 1)) for p, r in curve],
    }


_REMAINING = re.compile(r"total remaining=(\d+)")


def restore_remaining(log: str) -> int | None:
    """Return the changelog records Faust last said were left to restore (None: not said)."""
    found = _REMAINING.findall(log)
    return int(found[-1]) if found else None


def _tail(path: Path, size: int = 65_536) -> str:
    with path.open("rb") as log:
        log.seek(max(log.seek(0, 2) - size, 0))
        return log.read().decode(errors="replace")


async def _ready_rss(bench: Bench, place: RunPlace, env: dict[str, str]) -> float:
    """Return the RSS of a worker of ``place`` started on empty tables, then stop it."""
    fleet = Fleet(replace(place, workdir=_subdir(place, "empty")), bench.broker, env, 1)
    try:
        await asyncio.to_thread(fleet.start)
        await asyncio.sleep(SETTLE_S)
        return rss_mb(fleet.pids()[0])
    finally:
        fleet.stop()


def _subdir(place: RunPlace, name: str) -> Path:
    path = place.workdir / name
    path.mkdir(parents=True, exist_ok=True)
    return path


async def _restore(bench: Bench, fleet: Fleet, plans: int) -> list[tuple[int, float]]:
    """Start the worker, sampling RSS against plans restored until Faust says it is ready."""
    worker, curve = fleet.workers[0], []
    timeout = 600 + plans / 2_000  # Faust reports ready once recovery is complete
    start = asyncio.ensure_future(asyncio.to_thread(worker.start, timeout))
    while not start.done():
        await asyncio.wait({start}, timeout=5)
        remaining = restore_remaining(_tail(worker.log_path)) if worker.proc else None
        if remaining is None or start.done():
            continue
        try:
            curve.append((plans - remaining, rss_mb(worker.proc.pid)))  # type: ignore[union-attr]
        except (OSError, LookupError):
            continue
        if len(curve) % 12 == 0:
            bench.progress(f"restored {curve[-1][0]:,}/{plans:,}, RSS {curve[-1][1]:,.0f} MiB")
    await start
    return curve


def _disk_mb(paths: list[Path]) -> float:
    total = sum(f.stat().st_size for p in paths for f in p.rglob("*") if f.is_file())
    return round(total / 2**20, 1)


def _changelog_disk_mb(topic: str) -> float | None:
    """Return the size of the changelog's partitions on a broker started here (None: not
    found, an external cluster)."""
    dirs = list(Path(tempfile.gettempdir()).glob(f"learnstream-kafka-*/data/{topic}-*"))
    return _disk_mb(dirs) if dirs else None


async def preload_run(
    bench: Bench, variant: MemoryVariant, plans: int, seed: int
) -> dict[str, Any]:
    """Write ``plans`` plans to the plan_state changelog, restore one worker from it and
    return its RSS growth, like ``memory_run``."""
    place = bench.place(f"memory-{variant.key}-preload")
    topics = await bench.create_topics(place)
    changelog = changelog_topic(place.app_id)
    await create_changelog(bench.broker.bootstrap, changelog, topics)
    phases: dict[str, float] = {}
    restore_place = replace(place, workdir=_subdir(place, "restore"))
    fleet = Fleet(restore_place, bench.broker, _env(variant), 1)
    curve: list[tuple[int, float]] = []
    try:
        before = await _ready_rss(bench, place, _env(variant))
        started, moment = time.monotonic(), now_utc()
        templates = templates_of(plan_records(TEMPLATES, seed), moment, topics.partitions)
        phases["templates_s"] = round(time.monotonic() - started, 1)
        records = varied_records(templates, plans, seed, moment, topics.partitions)
        produced = await produce_changelog(
            bench.broker.bootstrap, changelog, records, plans, topics.partitions, bench.progress
        )
        bench.progress(f"changelog written: {produced.as_dict()}")
        started = time.monotonic()
        curve = [(0, before), *await _restore(bench, fleet, plans)]
        phases["restore_s"] = round(time.monotonic() - started, 1)
        restored = rss_mb(fleet.pids()[0])
        bench.progress(f"restored in {phases['restore_s']:,.0f} s, RSS {restored:,.0f} MiB")
        started = time.monotonic()
        # The index is rebuilt a slice per tick (agents/joins/sweeper.py): about 4 of 10 s.
        rebuilt = await asyncio.to_thread(wait_metric, fleet, INDEX_BUILT, 1, 600 + plans / 2_000)
        phases["index_wait_s"] = round(time.monotonic() - started, 1)
        # the ticks' processing time so far: the rebuild's slices, and a few ms of sweeps
        phases["index_rebuild_s"] = round(fleet.metric(TICKS_TIME, source="ticks"), 1)
        # the longest the worker's event loop was held since it started (restore included)
        phases["loop_lag_max_s"] = round(fleet.metric(LOOP_LAG_MAX), 2)
        await asyncio.sleep(SETTLE_S)
        after, peak = rss_mb(fleet.pids()[0]), rss_mb(fleet.pids()[0], "VmHWM")
        curve.append((plans, after))
        # A rebalance drops the expiry index: the next tick scans the whole table again. A
        # scan that blocks the loop past the session timeout costs the worker its partitions.
        await asyncio.sleep(WATCH_S)
        rebalances = fleet.metric("learnstream_rebalances_total")
        phases["ticks_done"] = fleet.metric(TICKS_DONE, source="ticks")
        disk = {
            "changelog_mb": _changelog_disk_mb(changelog),
            "rocksdb_mb": _disk_mb([restore_place.workdir]),
        }
    finally:
        fleet.stop()
        await bench.drop_topics(place)
    marginal = _slope_per_100k(curve[1:-1]) if len(curve) > 4 else 0.0
    bench.progress(f"RSS (plans restored, MiB): {curve}; phases {phases}; disk {disk}")
    return {
        "variant": variant.key,
        "plans": plans,
        "preload": "changelog",
        "plans_per_s": round(plans / max(phases["restore_s"], 1e-9), 1),
        "load_avg": round(load_average(), 2),
        "complete": rebuilt,
        "rss_ready_mb": round(before, 1),
        "rss_restored_mb": round(restored, 1),
        "rss_loaded_mb": round(after, 1),
        "rss_peak_mb": round(peak, 1),
        "mb_per_100k_plans": round((after - before) * 100_000 / plans, 1),
        "marginal_mb_per_100k": round(marginal, 1),
        "rss_1m_plans_mb": (
            round(after + marginal * (1_000_000 - plans) / 100_000, 1)
            if plans <= 1_000_000
            else None
        ),
        "rebalances": rebalances,
        "changelog": produced.as_dict(),
        "phases": phases,
        "disk": disk,
        "curve": [(p, round(r, 1)) for p, r in curve],
    }


#: Seconds the restored worker is watched for rebalances once its RSS is read.
WATCH_S = 20.0
#: 1 once the sweeper's expiry index is rebuilt from plan_state (agents/joins/sweeper.py).
INDEX_BUILT = "learnstream_expiry_index_built"
#: The longest event-loop lag of the worker (agents/seams/loop_watch.py).
LOOP_LAG_MAX = "learnstream_event_loop_lag_max_seconds"
#: Ticks the sweeper has finished.
TICKS_DONE = "learnstream_event_processing_seconds_count"
TICKS_TIME = "learnstream_event_processing_seconds_sum"
