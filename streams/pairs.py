"""Preference pairs mined from the samples topic: the wire model and the pure matching.

Wire format of ``mplp.preference_pairs``: key = ``pair_id`` (UTF-8), value = the JSON object
of :class:`PreferencePair` with every field present (``margin`` is ``null`` when no score).
"""

from __future__ import annotations

from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict

from streams.fields import Uuid4
from streams.ids import sample_id

__all__ = ["PairFamily", "PairKind", "PreferencePair", "pair_id"]

PairKind = Literal["replan", "correction", "feedback"]
PairFamily = Literal["intent_resolution", "error_correction", "dialog_response"]


def pair_id(kind: str, rejected_sample_id: str, chosen_sample_id: str) -> str:
    """Return the pair's UUID v4-shaped id: a pure function of its kind and two samples.

    A replay of the same samples re-emits the same id, so the compacted topic keeps one.
    """
    return sample_id(f"preference_pair.{kind}", f"{rejected_sample_id}\x1f{chosen_sample_id}")


class PreferencePair(BaseModel):
    """One DPO pair: ``prompt``, a ``chosen`` and a ``rejected`` completion, and provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pair_id: Uuid4
    kind: PairKind
    intent_id: str | None
    project_id: str | None
    family: PairFamily
    prompt: dict[str, Any]
    chosen: dict[str, Any]
    rejected: dict[str, Any]
    chosen_sample_id: str
    rejected_sample_id: str
    event_time: str
    created_at: str
    margin: float | None = None

    def key(self) -> bytes:
        """Return the record key: the pair id."""
        return self.pair_id.encode()

    def to_json(self) -> bytes:
        """Return the record value: compact JSON, every field present."""
        return orjson.dumps(self.model_dump(mode="json"))
