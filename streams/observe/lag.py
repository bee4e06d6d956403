"""Consumer lag of the input topics (pure): high watermark minus committed offset."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

__all__ = ["TopicPartition", "partition_lags"]


class TopicPartition(Protocol):
    """What a partition needs here: a topic and a number (Faust's and aiokafka's TP have both)."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...


_TP = TypeVar("_TP", bound=TopicPartition)


def partition_lags(
    assigned: Iterable[_TP],
    topics: frozenset[str],
    highwater: Callable[[_TP], int | None],
    committed: Callable[[_TP], int | None],
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
