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

from typing import Any

import orjson
from ddsketch import LogCollapsingLowestDenseDDSketch
from ddsketch.store import DenseStore
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from streams.dlq.errors import field_path

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


def _bins(store: DenseStore) -> Bins:
    if store.count == 0:
        return Bins()
    low, high = store.min_key - store.offset, store.max_key - store.offset
    return Bins(min_key=store.min_key, counts=store.bins[low : high + 1])


def _fill(store: DenseStore, bins: Bins) -> None:
    for key, count in enumerate(bins.counts, start=bins.min_key):
        if count > 0:
            store.add(key, count)


class DurationSketch:
    """A DDSketch at 1 % relative accuracy that round-trips through JSON and merges."""

    def __init__(self) -> None:
        self._sketch = LogCollapsingLowestDenseDDSketch(RELATIVE_ACCURACY, BIN_LIMIT)

    @property
    def count(self) -> float:
        """Return how many values were added (merged sketches included)."""
        return float(self._sketch.count)

    def add(self, value: float) -> None:
        """Add one value."""
        self._sketch.add(value)

    def merge(self, other: DurationSketch) -> None:
        """Add every value of ``other`` (both sketches share their parameters)."""
        self._sketch.merge(other._sketch)

    def quantile(self, q: float) -> float | None:
        """Return the value at quantile ``q`` (0..1) within 1 %, or None when empty."""
        value = self._sketch.get_quantile_value(q)
        return None if value is None else float(value)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (JSON types only)."""
        s = self._sketch
        empty = s.count == 0
        return SketchState(
            relative_accuracy=RELATIVE_ACCURACY,
            bin_limit=BIN_LIMIT,
            positive=_bins(s._store),
            negative=_bins(s._negative_store),
            zero_count=s._zero_count,
            count=s.count,
            sum=s.sum,
            min=None if empty else s._min,
            max=None if empty else s._max,
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
        out = cls()
        s = out._sketch
        _fill(s._store, state.positive)
        _fill(s._negative_store, state.negative)
        s._zero_count, s._count, s._sum = state.zero_count, state.count, state.sum
        if state.min is not None and state.max is not None:
            s._min, s._max = state.min, state.max
        return out

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
