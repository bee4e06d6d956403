"""Count samples per window in memory, so a flush writes each window key once. Pure.

Counting a sample in the windowed tables one by one costs one changelog record per window
size per sample. Instead the worker counts here, per source partition, and a flush takes a
partition's counts summed per window key: one table write, one changelog record, per key.
A sample is kept by its step (``WindowSpec.bucket``): samples of one step fall into the same
windows, so the pending counts stay small whatever the rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from learnstream.streams.quality.windows import WindowSpec

__all__ = ["PendingCounts", "WindowKey"]

#: A windowed table's key as Faust stores it: (table key, (window start, window end)).
WindowKey = tuple[str, tuple[float, float]]


class PendingCounts:
    """Samples counted but not yet written, per source partition, window size and step."""

    def __init__(self, specs: Iterable[WindowSpec]) -> None:
        self.specs = {spec.label: spec for spec in specs}
        self._counts: dict[int, Counter[tuple[str, str, float]]] = {}

    def add(self, partition: int, label: str, key: str, ts: float) -> None:
        """Count one sample of table key ``key`` at event time ``ts`` in window size ``label``."""
        bucket = self.specs[label].bucket(ts)
        self._counts.setdefault(partition, Counter())[(label, key, bucket)] += 1

    def take(self, partition: int) -> dict[str, Counter[WindowKey]]:
        """Remove ``partition``'s counts; return them per window size, summed per window key."""
        by_label: dict[str, Counter[WindowKey]] = {}
        for (label, key, bucket), n in self._counts.pop(partition, Counter()).items():
            sums = by_label.setdefault(label, Counter())
            for window in self.specs[label].ranges(bucket):
                sums[(key, window)] += n
        return by_label

    def peek(self, label: str, partitions: set[int]) -> Counter[WindowKey]:
        """Return what ``take`` would, summed over ``partitions``, for window size ``label``,
        without removing it (what the gauges add to the tables)."""
        sums: Counter[WindowKey] = Counter()
        spec = self.specs[label]
        for partition in partitions & self._counts.keys():
            for (counted, key, bucket), n in self._counts[partition].items():
                if counted == label:
                    for window in spec.ranges(bucket):
                        sums[(key, window)] += n
        return sums

    def writes(self, label: str) -> int:
        """Return how many table writes (changelog records) flushing every partition would
        make for window size ``label``: its window keys, per partition."""
        return sum(len(self.peek(label, {partition})) for partition in self._counts)

    def partitions(self) -> list[int]:
        """Return the partitions with counts not yet taken."""
        return list(self._counts)

    def drop(self, partitions: Iterable[int]) -> None:
        """Forget the counts of ``partitions`` (revoked: their next owner counts them again)."""
        for partition in partitions:
            self._counts.pop(partition, None)
