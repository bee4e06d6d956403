"""How ``learnstream export`` shows its progress: a rich bar on a terminal, one line otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from learnstream.streams.io.consumer import ReadStats

__all__ = ["export_progress", "summary"]

#: Redraw at most this often: a listener runs once per record.
_EVERY_S = 0.1


@contextmanager
def export_progress(stats: ReadStats, console: Console) -> Iterator[None]:
    """Show read / written / skipped and an ETA from the offsets left while the block runs."""
    if not console.is_terminal:
        yield
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("read {task.fields[read]:,}  written {task.fields[written]:,}"),
        TextColumn("skipped {task.fields[skipped]:,}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("export", total=None, read=0, written=0, skipped=0)
        stats.listener = _updater(bar, task)
        try:
            yield
        finally:
            stats.listener = None


def _updater(bar: Progress, task: TaskID) -> Callable[[ReadStats], None]:
    last = 0.0

    def update(stats: ReadStats) -> None:
        nonlocal last
        moment = time.monotonic()
        if moment - last < _EVERY_S:
            return
        last, progress = moment, stats.progress
        done = progress.total - progress.left
        bar.update(
            task,
            total=progress.total or None,
            completed=done,
            read=stats.read,
            written=stats.kept,
            skipped=stats.skipped,
        )

    return update


def summary(rows: int, fmt: str, out: str, stats: ReadStats) -> str:
    """Return the one-line summary of an export."""
    line = (
        f"exported {rows:,} {fmt} rows to {out}: read {stats.read:,} records, skipped "
        f"{stats.skipped:,} (bad {stats.bad:,}, duplicates {stats.duplicates:,}, "
        f"filtered out {stats.filtered:,})"
    )
    if stats.progress.idle:
        line += (
            f"; stopped after no record came for a while, {stats.progress.left:,} offsets "
            "left unread (transactions still open?)"
        )
    return line
