"""Worker start to ready: learnstream's worker next to a one-agent Faust app, same broker.

What a user waits for after every deploy or crash, and what a test pays per worker. Each run
starts a process and waits for Faust's ``[^Worker]: Ready`` line; the worker's own
``ready in`` line splits its time by phase (imports, topics, wiring and the recognizers'
warm-up, the group join and table recovery). The baseline is the Faust floor
(benchmarks/faust_floor.py: one agent, no tables) started the same way on the same topics:
the ratio says what learnstream adds to what any Faust worker pays. The first start creates
the topics and is reported apart; the runs after it are restarts.

    python -m benchmarks.startup                    # Apache Kafka if Java is there
    python -m benchmarks.startup --broker embedded --runs 3
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.brokers import BenchBroker, choose_kind, open_broker
from benchmarks.machine import load_average
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.topics import INPUTS
from learnstream.streams.io.worker_process import WorkerProcess

__all__ = ["main", "measure"]

ROOT = Path(__file__).resolve().parent.parent
_READY = "[^Worker]: Ready"
_PHASES = re.compile(r"worker ready in [\d.]+ s \((.*)\)")


def _worker_env(broker: BenchBroker, prefix: str, data: Path) -> dict[str, str]:
    return {
        "LEARNSTREAM_BROKER_URL": broker.url,
        "LEARNSTREAM_BROKER__ONE_RECORD_PER_BATCH": "true" if broker.embedded else "false",
        "LEARNSTREAM_APP_ID": f"ls-{prefix.rstrip('.')}",
        "LEARNSTREAM_TOPICS__PREFIX": prefix,
        "LEARNSTREAM_DATA_DIR": str(data),
        "LEARNSTREAM_LOG_LEVEL": "info",
    }


def _phases(log: str) -> dict[str, float]:
    """Return the last ``ready in`` line's phases: {"imports": 1.7, ...}."""
    found = _PHASES.findall(log)
    if not found:
        return {}
    pairs = (part.rsplit(" ", 2) for part in found[-1].split(", "))
    return {name: float(seconds) for name, seconds, _unit in pairs}


def _worker_start(worker: WorkerProcess) -> tuple[float, dict[str, float]]:
    started = time.monotonic()
    worker.start(timeout=180)
    took = time.monotonic() - started
    phases = _phases(worker.log())
    worker.stop()
    return took, phases


def _floor_start(broker: BenchBroker, topics: TopicSettings, log: Path) -> float:
    """Start the Faust floor on ``topics``, wait for its Ready line; return the seconds."""
    cmd = [
        sys.executable, "-m", "benchmarks.faust_floor", "--bootstrap", broker.bootstrap,
        "--inputs", *(topics.name(t) for t in INPUTS), "--output", topics.name("samples"),
        "--group", f"floor-{topics.prefix.rstrip('.')}", "--log-level", "info",
        *(["--embedded"] if broker.embedded else []),
    ]  # fmt: skip
    started = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        while _READY not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() - started > 180:
                raise RuntimeError(f"the Faust floor never got ready:\n{log.read_text()[-3000:]}")
            time.sleep(0.05)
        return time.monotonic() - started
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 2),
        "min": round(min(values), 2),
        "max": round(max(values), 2),
    }


def measure(broker: BenchBroker, runs: int, workdir: Path) -> dict[str, Any]:
    """Start the worker once (topics created), then ``runs`` times each: worker, floor."""
    prefix = f"s{uuid.uuid4().hex[:8]}."
    topics = TopicSettings(prefix=prefix)
    worker = WorkerProcess(_worker_env(broker, prefix, workdir / "data"), workdir / "worker.log")
    first, _ = _worker_start(worker)
    worker_runs, floor_runs, phases = [], [], []
    for run in range(runs):
        took, split = _worker_start(worker)
        worker_runs.append(took)
        phases.append(split)
        floor_runs.append(_floor_start(broker, topics, workdir / f"floor{run}.log"))
        print(f"  run {run + 1}/{runs}: worker {took:.2f} s, floor {floor_runs[-1]:.2f} s")
    names = list(phases[-1])
    return {
        "broker": broker.label,
        "broker_version": broker.version,
        "runs": runs,
        "first_start_s": round(first, 2),
        "worker_s": _spread(worker_runs),
        "floor_s": _spread(floor_runs),
        "ratio_median": round(statistics.median(worker_runs) / statistics.median(floor_runs), 2),
        "worker_phases_median_s": {
            name: round(statistics.median(p.get(name, 0.0) for p in phases), 2) for name in names
        },
        "load_avg": round(load_average(), 2),
    }


def _report(result: dict[str, Any]) -> str:
    w, f = result["worker_s"], result["floor_s"]
    phases = ", ".join(f"{k} {v:.2f}" for k, v in result["worker_phases_median_s"].items())
    return "\n".join(
        (
            f"start to ready on {result['broker']} ({result['broker_version']}), "
            f"{result['runs']} restarts, load {result['load_avg']}:",
            f"  worker      median {w['median']:.2f} s (min {w['min']:.2f}, max {w['max']:.2f})",
            f"  Faust floor median {f['median']:.2f} s (min {f['min']:.2f}, max {f['max']:.2f})",
            f"  ratio {result['ratio_median']:.2f}x; first start (topics created) "
            f"{result['first_start_s']:.2f} s",
            f"  worker phases (median s): {phases}",
        )
    )


def main(argv: list[str] | None = None) -> None:
    """Measure start to ready and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--broker", choices=("auto", "kafka", "embedded"), default="auto")
    parser.add_argument("--runs", type=int, default=5, help="restarts of each (default 5)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    with (
        tempfile.TemporaryDirectory(prefix="ls-startup-") as tmp,
        open_broker(choose_kind(args.broker), Path(tmp)) as broker,
    ):
        result = measure(broker, args.runs, Path(tmp))
    print(_report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
