"""learnstream worker processes for the benchmarks: environment, start, metrics, memory."""

from __future__ import annotations

import math
import os
import re
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchmarks.brokers import BenchBroker
from learnstream.streams.io.worker_process import WorkerProcess

__all__ = [
    "Fleet", "RunPlace", "cpu_seconds", "metric_sum", "profiled", "rss_mb", "settled_cpu",
    "wait_metric",
]  # fmt: skip

HOOKS = Path(__file__).resolve().parent / "hooks"


@dataclass(frozen=True)
class RunPlace:
    """Where one run lives: topic prefix, consumer group, data and log directory."""

    prefix: str
    app_id: str
    workdir: Path

    def env(self, broker: BenchBroker, extra: dict[str, str]) -> dict[str, str]:
        """Return the environment of a worker of this run."""
        return {
            "LEARNSTREAM_BROKER_URL": broker.url,
            "LEARNSTREAM_BROKER__ONE_RECORD_PER_BATCH": str(broker.embedded).lower(),
            "LEARNSTREAM_APP_ID": self.app_id,
            "LEARNSTREAM_TOPICS__PREFIX": self.prefix,
            "LEARNSTREAM_JOIN__GRACE": "1h",  # a slow configuration must not dead-letter
            "LEARNSTREAM_LOG_LEVEL": "info",
            **extra,
        }


def profiled(env: dict[str, str], stats_path: Path) -> dict[str, str]:
    """Return ``env`` for a worker that cProfiles itself once sent SIGPROF."""
    path = os.pathsep.join(p for p in (str(HOOKS), env.get("PYTHONPATH", "")) if p)
    return {**env, "PYTHONPATH": path, "LEARNSTREAM_BENCH_PROFILE": str(stats_path)}


class Fleet:
    """One or more workers of the same app id (one consumer group), started together."""

    def __init__(self, place: RunPlace, broker: BenchBroker, extra: dict[str, str], n: int):
        self.workers = [
            WorkerProcess(
                {**place.env(broker, extra), "LEARNSTREAM_DATA_DIR": str(place.workdir / f"d{i}")},
                place.workdir / f"worker{i}.log",
            )
            for i in range(n)
        ]

    def start(self) -> Fleet:
        """Start every worker at once and wait until all are ready."""
        with ThreadPoolExecutor(len(self.workers)) as pool:
            list(pool.map(lambda w: w.start(timeout=180), self.workers))
        return self

    def stop(self) -> None:
        """Stop every worker (SIGTERM, then SIGKILL if one hangs)."""
        for worker in self.workers:
            worker.stop()

    def pids(self) -> list[int]:
        """Return the process ids of the running workers."""
        return [w.proc.pid for w in self.workers if w.proc is not None]

    def metric(self, name: str, **labels: str) -> float:
        """Return a metric summed over every worker (0 if a worker does not answer)."""
        return sum(metric_sum(w.web_port, name, labels) for w in self.workers)


def metric_sum(port: int, name: str, labels: dict[str, str]) -> float:
    """Return the sum of the samples of metric ``name`` with ``labels`` on a worker's /metrics."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:  # noqa: S310
            text = response.read().decode()
    except OSError:
        return 0.0
    total = 0.0
    for line in text.splitlines():
        match = re.match(rf"^{re.escape(name)}(?:\{{(.*)\}})? (\S+)$", line)
        if match and all(f'{k}="{v}"' in (match[1] or "") for k, v in labels.items()):
            total += float(match[2])
    return total


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Return a process's resident memory (VmRSS, or VmHWM for the peak) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise LookupError(f"no {field} in /proc/{pid}/status")


def cpu_seconds(pid: int) -> float:
    """Return the user + system CPU seconds a process has used so far (NaN once it is gone).

    A process that exits between the harness's last check and this read (a peer that drained
    and stopped, or one that crashed) has no /proc entry left: its run is still reported,
    with its CPU unknown, instead of losing every figure of the suite.
    """
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return math.nan
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: A process is busy above this share of a core whatever it did before: no idle worker uses it.
_BUSY_SHARE = 0.20
#: How far from the window before a quiet window's use may be (CPU ticks are 10 ms apart).
_SETTLED_SHARE = 0.05


def settled_cpu(
    pid: int,
    quiet_s: float = 2.0,
    limit_s: float = 60.0,
    *,
    cpu: Callable[[int], float] = cpu_seconds,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Return a process's CPU seconds once it has gone quiet, or after ``limit_s``: work it
    does after its last sample counts too.

    Quiet is the process's idle use, whatever that is: a window of ``quiet_s`` under a fifth
    of a core whose use is within 5 % of a core of the window's before it (the first
    window: under a tenth). An idle
    worker still polls the broker (8.8 % of a core with the default 25-ms fetch wait;
    benchmarks/RESULTS.md, findings behind the design), so a fixed floor under that would
    never see it quiet and would add the limit's idle CPU to the work measured.
    """
    deadline, before = clock() + limit_s, cpu(pid)
    share = _SETTLED_SHARE  # the first window is quiet under twice that
    while clock() < deadline:
        sleep(quiet_s)
        now = cpu(pid)
        used, share = share, (now - before) / quiet_s
        if share < _BUSY_SHARE and abs(share - used) <= _SETTLED_SHARE:
            return now
        before = now
    return cpu(pid)


def wait_metric(fleet: Fleet, name: str, target: float, timeout: float, **labels: str) -> bool:
    """Poll the fleet's summed metric until it reaches ``target``; False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fleet.metric(name, **labels) >= target:
            return True
        time.sleep(0.5)
    return False
