"""Consumer lag of the input topics (pure): high watermark minus committed offset."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from faust.types import TP

__all__ = ["partition_lags"]


def partition_lags(
    assigned: Iterable[TP],
    topics: frozenset[str],
    highwater: Callable[[TP], int | None],
    committed: Callable[[TP], int | None],
) -> dict[tuple[str, int], int]:
    """Return {(topic, partition): lag} of the assigned partitions of ``topics``.

    A partition whose high watermark is not known yet (no fetch answered) is left out. With
    nothing committed yet the group starts from the beginning, so the lag is the high
    watermark itself. A high watermark older than the commit reads as 0, never negative.
    """
    lags = {}
    for tp in assigned:
        if tp.topic not in topics:
            continue
        end = highwater(tp)
        if end is not None:
            lags[(tp.topic, tp.partition)] = max(end - (committed(tp) or 0), 0)
    return lags
