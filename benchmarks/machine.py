"""Describe where and from what a benchmark ran: machine, load, git commit, command."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["describe"]

ROOT = Path(__file__).resolve().parents[1]


def _proc_field(path: str, key: str) -> str:
    """Return the first ``key: value`` of a /proc file ('' if absent)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False, timeout=10
    )
    return done.stdout.strip()


def commit() -> str:
    """Return the short commit, with ``+dirty`` when the work tree has changes."""
    head = _git("rev-parse", "--short", "HEAD") or "unknown"
    return f"{head}+dirty" if _git("status", "--porcelain") else head


def load_average() -> float:
    """Return the 1-minute load average (other work on the box skews the figures)."""
    return os.getloadavg()[0]


async def wait_quiet(
    limit: float,
    longest: float,
    *,
    load: Callable[[], float] = load_average,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    every: float = 5.0,
) -> tuple[float, bool]:
    """Wait until the 1-minute load average is at most ``limit``, up to ``longest`` seconds;
    return the load then and whether it was quiet (a run starts either way: the report says
    which rounds began on a busy machine)."""
    waited = 0.0
    while (now := load()) > limit and waited < longest:
        await sleep(every)
        waited += every
    return now, now <= limit


def describe() -> dict[str, Any]:
    """Return the machine, commit, command and time of this benchmark run."""
    mem_kb = int((_proc_field("/proc/meminfo", "MemTotal") or "0 kB").split()[0])
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "ram_gib": round(mem_kb / 1024**2, 1),
        "cpu": _proc_field("/proc/cpuinfo", "model name") or "unknown",
        "python": sys.version.split()[0],
        "commit": commit(),
        "command": shlex.join(["python", "-m", "benchmarks.run", *sys.argv[1:]]),
        "load_avg_start": round(load_average(), 2),
    }
