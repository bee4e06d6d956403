"""Run each suite ``repeats`` times, round-robin over its variants, and keep the medians.

Round-robin (baseline, config A, config B, ..., then again) spreads whatever else the
machine is doing evenly over the variants being compared.
"""

from __future__ import annotations

from pathlib import Path
from statistics import median
from typing import Any

from benchmarks.configs import CONFIGS, MEMORY, Config, MemoryVariant, Sizes
from benchmarks.context import Bench
from benchmarks.latency import Loads, latency_run, peer_latency_run
from benchmarks.load import bench_workload, split_plans
from benchmarks.machine import load_average, wait_quiet
from benchmarks.memory import ROCKSDB_INSTALL, memory_run, store_available
from benchmarks.ner import NER_INSTALL, ner_environment
from benchmarks.profiling import hot_spots
from benchmarks.scaleout import scaleout_run
from benchmarks.throughput import baseline_run, floor_run, learnstream_run, peer_run

__all__ = [
    "changelog_summary",
    "run_latency",
    "run_memory",
    "run_profile",
    "run_scaleout",
    "run_throughput",
]

SEED = 1000
BASELINE_FACTOR = 4
FLOOR_FACTOR = 2
#: The DIY peer's pipeline in one Faust agent: what a worker of Faust agents can reach at most.
FPEER = "benchmarks.faust_peer"


def summarize(runs: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    """Return the runs, how many completed, and the median of ``keys`` over complete runs."""
    good = [r for r in runs if r.get("complete")]
    return {
        "runs": runs,
        "complete": f"{len(good)}/{len(runs)}",
        "median": {k: median(r[k] for r in good) for k in keys} if good else {},
    }


def _env(bench: Bench, config: Config) -> tuple[dict[str, str] | None, str]:
    """Return (worker env, status) of a configuration; env None when it cannot run here."""
    if not config.ner:
        return dict(config.env), "ok"
    status, env = ner_environment(bench.workdir)
    return ({**config.env, **env} if env is not None else None), status


_RATE_KEYS = ("events_per_s", "outputs_per_s", "window_s", "cpu_s", "events")


def changelog_summary(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Return the median over complete runs of the changelog records per input event, per
    table and in all, the values a worker held in memory at its stop counted as the records
    they become (and of the end offsets, which count batches on the embedded broker); None
    when no complete run counted them (a table a run did not write counts 0).

    ``keys``: the distinct keys the changelogs hold per input event, the floor of a worker
    that writes each key once in the whole run (None for runs recorded before they were
    counted); a value held at the stop is of a key its table's records may hold already,
    so it is not added."""
    good = [r for r in runs if r.get("complete") and "changelog" in r and r.get("events")]
    if not good:
        return None
    tables = sorted({table for r in good for table in r["changelog"]})

    def per_event(run: dict[str, Any], field: str, table: str | None = None) -> float:
        counts = run["changelog"]
        chosen = counts.values() if table is None else [counts.get(table, {})]
        return float(sum(c.get(field, 0) for c in chosen) / run["events"])

    def written(run: dict[str, Any], table: str | None = None) -> float:
        """Records, and the values held at the stop that become records once written."""
        return per_event(run, "records", table) + per_event(run, "held", table)

    return {
        "tables": {t: median(written(r, t) for r in good) for t in tables},
        "total": median(written(r) for r in good),
        "held": median(per_event(r, "held") for r in good),
        "tombstones": median(per_event(r, "tombstones") for r in good),
        "offsets": median(per_event(r, "offsets") for r in good),
        "keys": (
            median(per_event(r, "keys") for r in good)
            if all("keys" in c for r in good for c in r["changelog"].values())
            else None
        ),
    }


async def round_start(bench: Bench, sizes: Sizes, step: str) -> dict[str, Any]:
    """Wait for a quiet machine if ``--quiet-load`` asks for one; return the 1-minute load
    average as the round begins, whether it was quiet and the limit waited for."""
    if sizes.quiet_load is None:
        return {"load": load_average(), "quiet": None}
    bench.step = f"{step}: waiting for a quiet machine"
    load, quiet = await wait_quiet(sizes.quiet_load, sizes.quiet_wait)
    return {"load": load, "quiet": quiet, "limit": sizes.quiet_load}


async def run_throughput(bench: Bench, sizes: Sizes) -> dict[str, Any]:
    """Measure the baseline and every configuration on pre-loaded topics."""
    runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "faust-floor": []}
    envs = {key: _env(bench, CONFIGS[key]) for key in sizes.configs}
    rounds: list[dict[str, Any]] = []
    for r in range(sizes.repeats):
        rounds.append(await round_start(bench, sizes, f"throughput round {r + 1}/{sizes.repeats}"))
        bench.step = f"throughput round {r + 1}/{sizes.repeats} baseline"
        baseline_events = BASELINE_FACTOR * sizes.events  # it is fast: a longer timed window
        runs["baseline"].append(await baseline_run(bench, baseline_events, SEED + r))
        bench.step = f"throughput round {r + 1}/{sizes.repeats} faust-floor"
        runs["faust-floor"].append(await floor_run(bench, FLOOR_FACTOR * sizes.events, SEED + r))
        for key, (env, _status) in envs.items():
            if env is None:
                continue
            config, bench.step = CONFIGS[key], f"throughput round {r + 1}/{sizes.repeats} {key}"
            events = sizes.ner_events if config.ner else sizes.events
            runs.setdefault(key, []).append(
                await learnstream_run(
                    bench, key, env, events, SEED + r, unique=config.unique_texts, paced=sizes.paced
                )
            )
            if config.peer and sizes.paced is None:  # right after its worker: same load
                bench.step = f"throughput round {r + 1}/{sizes.repeats} peer {key}"
                runs.setdefault(f"peer:{key}", []).append(
                    await peer_run(bench, f"peer-{key}", env, events, SEED + r)
                )
                bench.step = f"throughput round {r + 1}/{sizes.repeats} faust peer {key}"
                runs.setdefault(f"fpeer:{key}", []).append(
                    await peer_run(bench, f"fpeer-{key}", env, events, SEED + r, module=FPEER)
                )
    section = _throughput_section(runs, envs)
    # how the rounds ran, kept with the baseline's row (the section's keys are its rows)
    section["baseline"]["rounds"] = rounds
    if sizes.paced is not None:
        section["baseline"]["paced"] = sizes.paced
    return section


def _throughput_section(
    runs: dict[str, list[dict[str, Any]]], envs: dict[str, tuple[dict[str, str] | None, str]]
) -> dict[str, Any]:
    baseline = summarize(runs["baseline"], _RATE_KEYS)
    base_rate = baseline["median"].get("events_per_s")
    section: dict[str, Any] = {"baseline": {"label": "baseline", **baseline}}
    floor = summarize(runs["faust-floor"], _RATE_KEYS)
    floor_rate = floor["median"].get("events_per_s")
    section["faust-floor"] = {
        "label": "faust-floor",
        **floor,
        "ratio": _ratio(floor_rate, base_rate),
    }
    peers: dict[str, float | None] = {}
    for key in (k for k in envs if f"peer:{k}" in runs):  # the floors, then the peers
        peer = summarize(runs[f"peer:{key}"], _RATE_KEYS)
        peers[key] = peer_rate = peer["median"].get("events_per_s")
        section[f"peer:{key}"] = {
            "label": f"DIY peer: benchmarks/peer.py on aiokafka, {CONFIGS[key].label}",
            **peer,
            "changelog": changelog_summary(runs[f"peer:{key}"]),
            "ratio": _ratio(peer_rate, base_rate),
            "floor_ratio": _ratio(peer_rate, floor_rate),
        }
        if f"fpeer:{key}" in runs:
            fpeer = summarize(runs[f"fpeer:{key}"], _RATE_KEYS)
            fpeer_rate = fpeer["median"].get("events_per_s")
            section[f"fpeer:{key}"] = {
                "label": "Faust peer: the DIY peer's pipeline in one Faust agent "
                f"(benchmarks/faust_peer.py), {CONFIGS[key].label}",
                **fpeer,
                "changelog": changelog_summary(runs[f"fpeer:{key}"]),
                "ratio": _ratio(fpeer_rate, base_rate),
                "floor_ratio": _ratio(fpeer_rate, floor_rate),
                "peer_ratio": _ratio(fpeer_rate, peer_rate),
            }
    for key, (env, status) in envs.items():
        row: dict[str, Any] = {"label": CONFIGS[key].label, "status": status}
        if env is None:
            row["install"] = NER_INSTALL
        else:
            row |= summarize(runs[key], (*_RATE_KEYS, "cpu_settled_s"))
            rate = row["median"].get("events_per_s")
            row["ratio"] = _ratio(rate, base_rate)
            row["floor_ratio"] = _ratio(rate, floor_rate)
            row["peer_ratio"] = _ratio(rate, peers.get(key))
            row["changelog"] = changelog_summary(runs[key])
            if f"fpeer:{key}" in runs:  # round by round: the same workload, seed and load
                row["fpeer_rounds"] = paired_ratios(runs[key], runs[f"fpeer:{key}"])
        section[key] = row
    return section


def paired_ratios(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[float]:
    """Return, round by round, our events/s over theirs (rounds either did not complete in
    are left out): the spread of these says how far one run's ratio can be trusted."""
    return [
        a["events_per_s"] / b["events_per_s"]
        for a, b in zip(ours, theirs, strict=False)
        if a.get("complete") and b.get("complete") and b.get("events_per_s")
    ]


def _ratio(rate: float | None, other: float | None) -> float | None:
    return rate / other if rate and other else None


async def run_scaleout(bench: Bench, sizes: Sizes) -> dict[str, Any]:
    """Compare 1..max_workers warm workers of one group (PII on, default config)."""
    counts = range(1, sizes.max_workers + 1)
    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
    for r in range(sizes.repeats):
        for n in counts:
            bench.step = f"scale-out round {r + 1}/{sizes.repeats} {n} worker(s)"
            runs[n].append(await scaleout_run(bench, n, {}, sizes.events, SEED + r))
    section = {str(n): summarize(runs[n], _RATE_KEYS) for n in counts}
    one = section["1"]["median"].get("events_per_s")
    for n in counts:
        rate = section[str(n)]["median"].get("events_per_s")
        section[str(n)]["speedup"] = rate / one if rate and one else None
    return section


def capacity(throughput: dict[str, Any] | None) -> float | None:
    """Return one worker's measured input events/s with PII on (the default configuration),
    if the throughput suite measured it."""
    row = (throughput or {}).get("pii-on") or {}
    rate = (row.get("median") or {}).get("events_per_s")
    return float(rate) if rate else None


def event_share() -> float:
    """Return the share of the bench workload's records that are not plan snapshots: the
    latency phases pace those (their plans go out first, all at once)."""
    plans, events = split_plans(bench_workload(10_000, SEED).records)
    return len(events) / (len(plans) + len(events))


def latency_rates(
    fixed: tuple[float, ...], capacity: float | None, share: float = 1.0
) -> list[tuple[float, bool]]:
    """Return the offered loads in increasing order, each with whether it is half of
    ``capacity`` (issue 15's second latency target); that one is left out when unknown.

    ``capacity`` counts every input record, plans included; the phases pace only the
    ``share`` that are not plans, so half of it is ``capacity * share / 2`` of those.
    """
    rates = [(rate, False) for rate in fixed]
    if capacity:
        rates.append((float(round(capacity * share / 2)), True))
    return sorted(rates)


async def run_latency(bench: Bench, sizes: Sizes, capacity: float | None = None) -> dict[str, Any]:
    """Measure latency percentiles at each offered load (PII on, default config), and at
    half of one worker's ``capacity`` when it is known; then the Faust peer's, the bound."""
    plan = latency_rates(sizes.rates, capacity, event_share())
    rates = [rate for rate, _half in plan]
    runs, peer_runs = [], []
    starts: dict[str, list[dict[str, Any]]] = {"worker": [], "peer": []}
    for r in range(sizes.repeats):
        # Each side waits for a quiet machine: a round's tail is what sets its p99, and
        # the load a round before leaves behind would otherwise fall on one side only.
        step = f"latency round {r + 1}/{sizes.repeats}"
        starts["worker"].append(await round_start(bench, sizes, step))
        bench.step = step
        loads = Loads(rates, sizes.latency_seconds, SEED + 10 * r, sizes.warm_up)
        runs.append(await latency_run(bench, {}, loads))
        starts["peer"].append(await round_start(bench, sizes, f"{step}, Faust peer"))
        bench.step = f"{step}, Faust peer"
        peer_runs.append(await peer_latency_run(bench, {}, loads))
    keys = ("achieved_per_s", "p50", "p95", "p99", "max", "cpu_ms_per_event", "cores")
    by_rate = [summarize([run[i] for run in runs], keys) for i in range(len(rates))]
    for i, ((rate, half), row) in enumerate(zip(plan, by_rate, strict=True)):
        row["offered_per_s"] = rate
        row["half_capacity"] = half
        row["faust_peer"] = summarize([run[i] for run in peer_runs], keys)
    return {
        "config": CONFIGS["pii-on"].label,
        "rates": by_rate,
        "capacity": capacity,
        "rounds": starts,
    }


async def run_memory(bench: Bench, sizes: Sizes) -> dict[str, Any]:
    """Measure worker RSS per 100,000 plans with each table store (variant)."""
    variants = [MEMORY[key] for key in sizes.memory]
    runs: dict[str, list[dict[str, Any]]] = {v.key: [] for v in variants}
    for r in range(sizes.repeats):
        for v in variants:
            if store_available(v.store) and r < (v.repeats or sizes.repeats):
                bench.step = f"memory round {r + 1}/{sizes.repeats} {v.key}"
                plans = int(sizes.plans * v.share)
                run = await memory_run(bench, v, plans, SEED + r, sizes.preload)
                runs[v.key].append(run)
    return {v.key: _memory_row(v, runs[v.key]) for v in variants}


def _memory_row(variant: MemoryVariant, runs: list[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {"label": variant.label}
    if runs and runs[0].get("preload", "live") != "live":
        row["preload"] = runs[0]["preload"]
    if not store_available(variant.store):
        return row | {"status": "not installed", "install": ROCKSDB_INSTALL}
    keys = (
        "rss_ready_mb",
        "rss_loaded_mb",
        "rss_peak_mb",
        "mb_per_100k_plans",
        "marginal_mb_per_100k",
        "rss_1m_plans_mb",
        "plans",
        "plans_per_s",
    )
    return row | summarize(runs, keys)


async def run_profile(bench: Bench, sizes: Sizes, stats_path: Path) -> dict[str, Any]:
    """Profile one worker (PII on, default config) over a pre-loaded workload."""
    bench.step = "profile"
    result = await learnstream_run(bench, "profile", {}, sizes.events, SEED, profile_to=stats_path)
    section = _profile_section(result, stats_path)
    # The Faust peer on the same workload: where the worker's time goes beyond it.
    bench.step = "profile faust peer"
    peer_stats = stats_path.with_name("faust-peer.prof")
    env = dict(CONFIGS["pii-on"].env)
    peer = await peer_run(
        bench, "profile-fpeer", env, sizes.events, SEED, module=FPEER, profile_to=peer_stats
    )
    section["faust_peer"] = _profile_section(peer, peer_stats)
    return section


def _profile_section(result: dict[str, Any], stats_path: Path) -> dict[str, Any]:
    if not stats_path.exists():
        return {"run": result, "error": "the worker wrote no profile"}
    return {"run": result, **hot_spots(stats_path)}
