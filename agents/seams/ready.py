"""Faust's worker, timed: how long a worker took from process start to ready, by phase."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import faust

from learnstream.streams.observe.startup import StartupPhases, process_age

__all__ = ["ReadyWorker", "startup_phases"]

log = logging.getLogger("learnstream")


def startup_phases() -> StartupPhases:
    """Start timing at this process's start (Linux), with its imports as the first phase."""
    now = time.monotonic()
    try:
        stat, uptime = Path("/proc/self/stat").read_text(), Path("/proc/uptime").read_text()
        age = process_age(stat, uptime, os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        age = None
    if age is None:
        return StartupPhases(now)
    phases = StartupPhases(now - age)
    phases.mark("imports", now)
    return phases


class ReadyWorker(faust.Worker):
    """Faust's worker, which also logs how long it took to get ready, by phase."""

    def __init__(self, app: faust.App, phases: StartupPhases, **options: Any) -> None:
        """Run ``app``; ``phases`` holds what the start-up took before Faust started."""
        super().__init__(app, **options)
        self.phases = phases
        self._told = False

    @property
    def shortlabel(self) -> str:
        """Keep Faust's own label: scripts and tests wait for ``[^Worker]: Ready``."""
        return "Worker"

    async def on_startup_finished(self) -> None:
        """Say "Ready" (what tests and scripts wait for), then where the time went."""
        await super().on_startup_finished()
        if not self._told:
            self._told = True
            self.phases.mark("group join and recovery", time.monotonic())
            log.info("worker %s", self.phases.summary())
