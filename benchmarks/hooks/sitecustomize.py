"""Profile a worker from the benchmark harness (put this directory on PYTHONPATH).

With ``LEARNSTREAM_BENCH_PROFILE=<file>`` set, SIGPROF starts cProfile on the main thread
(the event loop) and the stats are written to ``<file>`` when the process exits.
"""

from __future__ import annotations

import atexit
import cProfile
import os
import signal
from types import FrameType

_PATH = os.environ.get("LEARNSTREAM_BENCH_PROFILE")
_PROFILER = cProfile.Profile()


def _start(signum: int, frame: FrameType | None) -> None:
    _PROFILER.enable()


def _dump() -> None:
    _PROFILER.disable()
    if _PATH:
        _PROFILER.dump_stats(_PATH)


if _PATH:
    signal.signal(signal.SIGPROF, _start)
    atexit.register(_dump)


# With ``LEARNSTREAM_BENCH_GCLOG=<prefix>`` every process that loads this hook writes its
# garbage-collector pauses to ``<prefix>.<pid>`` at exit: one line per generation (count,
# total and longest pause, ms) and one per pause of 20 ms or more.
_GCLOG = os.environ.get("LEARNSTREAM_BENCH_GCLOG")
_GC_STARTED: list[float] = []
_GC_PAUSES: list[tuple[int, float]] = []


def _gc_callback(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _GC_STARTED[:] = [time.perf_counter()]
    elif _GC_STARTED:
        _GC_PAUSES.append((info["generation"], 1000 * (time.perf_counter() - _GC_STARTED[0])))


def _gc_dump() -> None:
    lines = []
    for generation in (0, 1, 2):
        pauses = [ms for g, ms in _GC_PAUSES if g == generation]
        if pauses:
            lines.append(
                f"gen{generation} count={len(pauses)} total_ms={sum(pauses):.1f} "
                f"max_ms={max(pauses):.1f}"
            )
    lines += [f"pause gen{g} {ms:.1f} ms" for g, ms in _GC_PAUSES if ms >= 20]
    with open(f"{_GCLOG}.{os.getpid()}", "w") as out:
        out.write("\n".join(lines) + "\n")


if _GCLOG:
    import gc
    import time

    gc.callbacks.append(_gc_callback)
    atexit.register(_gc_dump)
