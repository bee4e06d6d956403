"""A mergeable quantile sketch (DDSketch) whose bins travel as JSON.

Why DDSketch: a p95 from a stored list grows with traffic and cannot be combined across
partitions; a DDSketch keeps about ``ln(max / min) / ln(gamma)`` bins (gamma = 1.0202 at 1 %)
and two sketches merge into exactly the sketch of both streams. Any quantile it returns is
within ``RELATIVE_ACCURACY`` (1 %) of the true value at that rank. ``BIN_LIMIT`` bounds the
bins; past it the *lowest* ones collapse, so high quantiles such as p95 stay exact to 1 %.

The JSON form (:meth:`DurationSketch.to_dict`) holds the parameters, the non-empty key range
of each store with its counts, and the exact count, sum, min and max.
"""

from __future__ import annotations

import math
from typing import Any

import orjson
from ddsketch import CollapsingLowestDenseStore, LogarithmicMapping
from ddsketch.ddsketch import BaseDDSketch
from ddsketch.store import DenseStore
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from learnstream.streams.dlq.errors import field_path

__all__ = ["BIN_LIMIT", "RELATIVE_ACCURACY", "DurationSketch", "SketchState"]

RELATIVE_ACCURACY = 0.01
BIN_LIMIT = 2048
_STRICT = ConfigDict(extra="forbid", frozen=True)


class Bins(BaseModel):
    """The counts of consecutive keys from ``min_key`` on."""

    model_config = _STRICT
    min_key: int = 0
    counts: list[float] = Field(default_factory=list, max_length=BIN_LIMIT)


class SketchState(BaseModel):
    """A sketch as JSON: parameters, both stores' bins, and the exact summary."""

    model_config = _STRICT
    relative_accuracy: float
    bin_limit: int
    positive: Bins
    negative: Bins
    zero_count: float = Field(ge=0)
    count: float = Field(ge=0)
    sum: float
    min: float | None
    max: float | None


_EMPTY = SketchState(
    relative_accuracy=RELATIVE_ACCURACY,
    bin_limit=BIN_LIMIT,
    positive=Bins(),
    negative=Bins(),
    zero_count=0.0,
    count=0.0,
    sum=0.0,
    min=None,
    max=None,
)


def _bins(store: DenseStore) -> Bins:
    if store.count == 0:
        return Bins()
    low, high = store.min_key - store.offset, store.max_key - store.offset
    return Bins(min_key=store.min_key, counts=store.bins[low : high + 1])


def _store(bins: Bins) -> CollapsingLowestDenseStore:
    store = CollapsingLowestDenseStore(BIN_LIMIT)
    for key, count in enumerate(bins.counts, start=bins.min_key):
        if count > 0:
            store.add(key, count)
    return store


class DurationSketch:
    """A DDSketch at 1 % relative accuracy that round-trips through JSON and merges.

    The sketch is ddsketch's, built from stores this class makes and keeps, so their bins are
    read through the stores' public attributes. The exact sum, min and max are kept here:
    ddsketch has no public way to set them back when a sketch is read from JSON.
    """

    def __init__(self, state: SketchState | None = None) -> None:
        """Start empty, or from ``state`` (a validated JSON form)."""
        state = state or _EMPTY
        self._positive, self._negative = _store(state.positive), _store(state.negative)
        mapping = LogarithmicMapping(RELATIVE_ACCURACY)
        self._sketch = BaseDDSketch(mapping, self._positive, self._negative, state.zero_count)
        self._sum = state.sum
        self._min = math.inf if state.min is None else state.min
        self._max = -math.inf if state.max is None else state.max

    @property
    def count(self) -> float:
        """Return how many values were added (merged sketches included)."""
        return float(self._sketch.count)

    def add(self, value: float) -> None:
        """Add one value."""
        self._sketch.add(value)
        self._sum += value
        self._min, self._max = min(self._min, value), max(self._max, value)

    def merge(self, other: DurationSketch) -> None:
        """Add every value of ``other`` (both sketches share their parameters)."""
        self._sketch.merge(other._sketch)  # into the same two stores, even when this is empty
        self._sum += other._sum
        self._min, self._max = min(self._min, other._min), max(self._max, other._max)

    def quantile(self, q: float) -> float | None:
        """Return the value at quantile ``q`` (0..1) within 1 %, or None when empty."""
        value = self._sketch.get_quantile_value(q)
        return None if value is None else float(value)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (JSON types only)."""
        count = self.count
        empty = count == 0
        return SketchState(
            relative_accuracy=RELATIVE_ACCURACY,
            bin_limit=BIN_LIMIT,
            positive=_bins(self._positive),
            negative=_bins(self._negative),
            # what neither store holds: values too close to 0 for a bin
            zero_count=count - self._positive.count - self._negative.count,
            count=count,
            sum=self._sum,
            min=None if empty else self._min,
            max=None if empty else self._max,
        ).model_dump()

    def to_json(self) -> bytes:
        """Return the JSON form as compact UTF-8 bytes."""
        return orjson.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DurationSketch:
        """Return the sketch of a JSON form; raise ValueError naming what is wrong."""
        try:
            state = SketchState.model_validate(data)
        except ValidationError as exc:
            fields = ", ".join(field_path(e["loc"]) for e in exc.errors(include_input=False))
            raise ValueError(f"not a sketch: check {fields}") from None
        if (state.relative_accuracy, state.bin_limit) != (RELATIVE_ACCURACY, BIN_LIMIT):
            raise ValueError("the sketch was made with other parameters; it cannot merge")
        return cls(state)

    @classmethod
    def from_json(cls, data: bytes | str) -> DurationSketch:
        """Return the sketch of :meth:`to_json`'s bytes."""
        try:
            loaded = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise ValueError("not a sketch: invalid JSON") from None
        if not isinstance(loaded, dict):
            raise ValueError("not a sketch: expected a JSON object")
        return cls.from_dict(loaded)
