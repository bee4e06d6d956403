"""Benchmark learnstream against a same-run baseline: throughput, latency, scale-out, memory.

Every figure comes from real worker processes (``learnstream worker``) on a real broker,
compared with a raw aiokafka consume -> json.loads -> produce process, a one-agent Faust
pass-through, the DIY peer (benchmarks/peer.py: the same samples on bare aiokafka) and the
Faust peer (benchmarks/faust_peer.py: the DIY peer in one Faust agent, the most a worker of
Faust agents can reach), all measured in the same run on the same topics. The privacy suite
(benchmarks/privacy_recall.py: recall and precision of the worker's anonymizer on a generated
corpus) runs in this process before the broker starts. Results go to
benchmarks/results/<date>-<broker>.json and a table is appended to benchmarks/RESULTS.md.
No figure is asserted: targets are reported.

    python -m benchmarks.run                 # full (make bench): ~50 min on 2 cores
    python -m benchmarks.run --quick         # smoke (make bench-quick): ~2 min, nothing recorded
    python -m benchmarks.run --only latency --repeats 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import tempfile
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import privacy_recall, suites
from benchmarks.brokers import BenchBroker, choose_kind, open_broker
from benchmarks.configs import CONFIGS, FULL, MEMORY, QUICK, SUITES, Sizes
from benchmarks.context import Bench
from benchmarks.machine import commit, describe, load_average
from benchmarks.memory import PRELOADS
from benchmarks.recall.table import render as render_privacy
from benchmarks.report import render

__all__ = ["main"]

HERE = Path(__file__).resolve().parent
#: In-process suite, no broker: benchmarks/privacy_recall.py (a smaller corpus with --quick).
PRIVACY = "privacy"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add(
        "--broker",
        choices=("auto", "kafka", "embedded"),
        help="kafka = start Apache Kafka (Java 17 + Maven jars), embedded = Tansu; "
        "auto = kafka when Java is there (the default; embedded with --quick). "
        "KAFKA_BOOTSTRAP_SERVERS uses that cluster instead",
    )
    add(
        "--quick",
        action="store_true",
        help="smoke run (~2 min): 1 run of a few suites, tiny sizes, RESULTS.md untouched",
    )
    add(
        "--only",
        nargs="+",
        choices=(*SUITES, PRIVACY),
        metavar="SUITE",
        help=f"run only these suites, of: {' '.join((*SUITES, PRIVACY))}",
    )
    add(
        "--configs",
        nargs="+",
        choices=tuple(CONFIGS),
        metavar="CONFIG",
        help=f"throughput configurations, of: {' '.join(CONFIGS)}",
    )
    add("--repeats", type=int, help="runs per figure (the median is reported; full: 3)")
    add(
        "--quiet-load",
        type=float,
        metavar="LOAD",
        help="before each throughput round and each side of a latency round, wait for the "
        "1-minute load average to fall to LOAD (up to --quiet-wait seconds); the load at "
        "each round's start is reported",
    )
    add("--quiet-wait", type=float, metavar="S", help="longest wait for --quiet-load (180)")
    add(
        "--paced",
        type=float,
        metavar="EVENTS_PER_S",
        help="throughput: publish each worker's workload at this rate once it is ready (live "
        "traffic, e.g. half its capacity) instead of pre-loading it; no peers are run, and "
        "the figure of interest is the changelog records per event",
    )
    add("--events", type=int, help="input events per throughput run (full: 20000)")
    add("--plans", type=int, help="plans loaded for the memory figure (full: 100000)")
    add(
        "--capacity",
        type=float,
        metavar="EVENTS_PER_S",
        help="one worker's input events/s with PII on: latency is also measured at half of it "
        "(default: the throughput suite's pii-on figure of the same run; none without it)",
    )
    add(
        "--stores",
        nargs="+",
        choices=tuple(MEMORY),
        metavar="STORE",
        help=f"table stores of the memory suite, of: {' '.join(MEMORY)}",
    )
    add(
        "--preload",
        choices=PRELOADS,
        help="how the memory suite loads its plans: live = through the plans topic, each "
        "processed by the worker (the default; ~965 plans/s), changelog = write the records "
        "the worker would have written to its plan_state changelog (same keys, partitions "
        "and value bytes; values varied from 400 real PlanStates, ~1,170 bytes on average "
        "like the live load's, half of the plans completed), then restore one worker from it "
        "and wait for its expiry index rebuild (benchmarks/preload.py)",
    )
    add("--profile-out", type=Path, help="also keep the worker's cProfile stats at this path")
    add(
        "--no-record",
        action="store_true",
        help="print the table only: write no JSON, do not append to RESULTS.md",
    )
    add("--out", type=Path, default=HERE / "results", help="directory of the JSON results")
    add("--results-md", type=Path, default=HERE / "RESULTS.md", help="Markdown file to append")
    add(
        "--render",
        type=Path,
        metavar="JSON",
        help="print the Markdown of a results file, run nothing",
    )
    return parser


def _sizes(args: argparse.Namespace) -> Sizes:
    sizes = QUICK if args.quick else FULL
    overrides = {
        "suites": tuple(args.only) if args.only else (*sizes.suites, PRIVACY),
        "configs": tuple(args.configs) if args.configs else None,
        "repeats": args.repeats,
        "events": args.events,
        "plans": args.plans,
        "memory": tuple(args.stores) if args.stores else None,
        "capacity": args.capacity,
        "preload": args.preload,
        "quiet_load": args.quiet_load,
        "quiet_wait": args.quiet_wait,
        "paced": args.paced,
    }
    return replace(sizes, **{k: v for k, v in overrides.items() if v is not None})


async def _run_suites(bench: Bench, sizes: Sizes, profile_out: Path | None) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if "throughput" in sizes.suites:
        results["throughput"] = await suites.run_throughput(bench, sizes)
    if "scaleout" in sizes.suites:
        results["scaleout"] = await suites.run_scaleout(bench, sizes)
    if "latency" in sizes.suites:
        measured = suites.capacity(results.get("throughput")) if sizes.half_capacity else None
        capacity = sizes.capacity or measured
        results["latency"] = await suites.run_latency(bench, sizes, capacity)
    if "memory" in sizes.suites:
        results["memory"] = await suites.run_memory(bench, sizes)
    if "profile" in sizes.suites:
        stats = bench.workdir / "worker.prof"
        results["profile"] = await suites.run_profile(bench, sizes, stats)
        if profile_out is not None and stats.exists():
            shutil.copyfile(stats, profile_out)
    return results


def _render(res: dict[str, Any]) -> str:
    """Return the Markdown of the broker suites, then of the privacy suite if it ran."""
    text = render(res)
    return text + "\n" + render_privacy(res[PRIVACY]) if PRIVACY in res else text


def _broker_info(broker: BenchBroker) -> dict[str, str]:
    return {"kind": broker.kind, "version": broker.version, "bootstrap": broker.bootstrap}


def _json_path(out: Path, broker: BenchBroker) -> Path:
    """Return ``<date>-<broker>.json`` in ``out``, numbered if that name is taken."""
    stem = f"{datetime.now(UTC):%Y-%m-%d}-{broker.label}"
    path, n = out / f"{stem}.json", 2
    while path.exists():
        path, n = out / f"{stem}-{n}.json", n + 1
    return path


def _record(res: dict[str, Any], args: argparse.Namespace, broker: BenchBroker) -> str:
    """Write the JSON and append the Markdown; return the Markdown."""
    if args.no_record:
        return _render(res)
    args.out.mkdir(parents=True, exist_ok=True)
    path = _json_path(args.out, broker)
    res["json"] = (
        str(path.relative_to(HERE.parent)) if path.is_relative_to(HERE.parent) else str(path)
    )
    path.write_text(json.dumps(res, indent=2) + "\n")
    text = _render(res)
    with args.results_md.open("a") as md:
        md.write("\n" + text)
    return text


def _interruptible() -> None:
    """Turn SIGTERM and SIGINT into KeyboardInterrupt, so workers and broker are stopped.

    A shell starts background jobs with SIGINT ignored; restore Python's handler anyway.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmarks the command line asks for and report them."""
    args = _parser().parse_args(argv)
    if args.render is not None:
        print(_render(json.loads(args.render.read_text())))
        return
    _interruptible()
    args.no_record = args.no_record or args.quick
    sizes, meta = _sizes(args), describe()
    privacy = {PRIVACY: privacy_recall.suite(args.quick)} if PRIVACY in sizes.suites else {}
    with tempfile.TemporaryDirectory(prefix="learnstream-bench-") as scratch:
        kind = choose_kind(args.broker or ("embedded" if args.quick else "auto"))
        with open_broker(kind, Path(scratch)) as broker:
            bench = Bench(broker, Path(scratch))
            bench.step = "start"
            bench.progress(f"{broker.version} at {broker.bootstrap}; suites {sizes.suites}")
            results = asyncio.run(_run_suites(bench, sizes, args.profile_out))
        meta["load_avg_end"] = round(load_average(), 2)
        meta["commit_end"] = commit()
        res = {
            "meta": meta,
            "broker": _broker_info(broker),
            "mode": "quick" if args.quick else "full",
            "sizes": asdict(sizes),
            **results,
            **privacy,
        }
        print(_record(res, args, broker))


if __name__ == "__main__":
    main()
