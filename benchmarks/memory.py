"""Worker memory (VmRSS) per 100,000 plans held in ``plan_state``, per table store.

The 1M-plan figure is extrapolated: RSS after the load plus the marginal growth (slope
over the second half of the load) times the plans still missing. Linear is pessimistic
for RocksDB once its memtables flush to disk, and optimistic if they have not yet filled.
"""

from __future__ import annotations

import asyncio
import importlib.util
import random
import time
from datetime import UTC, datetime, timedelta
from statistics import linear_regression
from typing import Any

import orjson

from benchmarks.configs import MemoryVariant
from benchmarks.context import Bench
from benchmarks.load import publish_fast, unique_texts
from benchmarks.machine import load_average
from benchmarks.workers import Fleet, rss_mb, wait_metric
from streams.config.settings import TopicSettings
from streams.sim.simulate import Simulator
from streams.sim.workload import Record

__all__ = ["ROCKSDB_INSTALL", "memory_run", "plan_records", "store_available"]

ROCKSDB_INSTALL = "pip install 'learnstream[rocksdb]'"
SETTLE_S = 3.0
#: Plans published at a time (at most): the next chunk waits until the worker has processed
#: this one, so consumer buffers stay small and RSS reflects the table, not a backlog.
CHUNK = 2_000


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


async def memory_run(bench: Bench, variant: MemoryVariant, plans: int, seed: int) -> dict[str, Any]:
    """Load ``plans`` plans into one warm worker's plan_state; return its RSS growth."""
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
        "rss_ready_mb": round(before, 1),
        "rss_loaded_mb": round(after, 1),
        "rss_peak_mb": round(peak, 1),
        "mb_per_100k_plans": round((after - before) * 100_000 / max(reached, 1), 1),
        "marginal_mb_per_100k": round(marginal, 1),
        "rss_1m_plans_mb": round(after + marginal * (1_000_000 - reached) / 100_000, 1),
        "curve": [(p, round(r, 1)) for p, r in curve],
    }
