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
