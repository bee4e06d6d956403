"""Samples and preference pairs as the rows TRL's trainers read. Pure: no Kafka here.

Formats (``learnstream export --format``), plain text or, with ``chat``, TRL's
conversational form (user / assistant ``messages``):

- ``sft``: ``{"prompt", "completion"}``; chat: ``{"messages"}``. Good samples by default
  (acceptable ones if asked; never poor).
- ``kto``: ``{"prompt", "completion", "label"}``, label = quality is not poor. Good and
  poor samples by default.
- ``dpo``: ``{"prompt", "chosen", "rejected"}`` (+ ``"margin"``), from preference pairs.
- ``reward``: ``{"chosen", "rejected"}`` (+ ``"margin"``), TRL's implicit-prompt preference
  form: each side is the prompt followed by that completion.
- ``mplp``: the samples themselves (``LearningSample.to_dict()``), every quality by default.
- ``mplp-common``: MPLP's common learning sample (:mod:`learnstream.streams.export.common`), every
  quality by default; a sample without a project has no row.
- ``training-dataset``: the seed's ``TrainingDataset`` rows ``{prompt, completion,
  metadata{sample_id, quality}}``, good samples only by default (streams/export/files.py
  writes the one JSON object around them).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from learnstream.streams.export.common import common_record
from learnstream.streams.export.formatters import Formatter, default_formatter, messages
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.pairs import PreferencePair
from learnstream.streams.samples.sample import QUALITIES, LearningSample

__all__ = [
    "DEFAULT_QUALITIES",
    "FORMATS",
    "PAIR_FORMATS",
    "Dedup",
    "ExportError",
    "RowMaker",
    "SampleFilter",
    "export_filter",
]

FORMATS = ("sft", "dpo", "kto", "reward", "mplp", "mplp-common", "training-dataset")
PAIR_FORMATS = frozenset({"dpo", "reward"})
DEFAULT_QUALITIES: dict[str, tuple[str, ...]] = {
    "sft": ("good",),
    "kto": ("good", "poor"),
    "mplp": QUALITIES,
    "mplp-common": QUALITIES,
    "training-dataset": ("good",),
}


class ExportError(ValueError):
    """Signal export options that do not go together (one line, names the option)."""


@dataclass(frozen=True)
class SampleFilter:
    """Keep samples (or pairs) of these families, qualities and project; empty = any.

    ``project`` is compared as the worker writes it
    (:func:`learnstream.streams.samples.ids.canonical_id`): the runtime's own id (``proj-acme``)
    and the UUID in ``meta.project_id`` are one project.
    """

    families: frozenset[str] = frozenset()
    qualities: frozenset[str] = frozenset()
    project: str | None = None

    def accepts(self, sample: LearningSample) -> bool:
        """Tell whether ``sample`` passes every filter."""
        return (
            (not self.families or sample.sample_family in self.families)
            and (not self.qualities or sample.feedback.quality_label in self.qualities)
            and self._owns(sample.meta.project_id)
        )

    def accepts_pair(self, pair: PreferencePair) -> bool:
        """Tell whether ``pair`` passes the family and project filters."""
        return (not self.families or pair.family in self.families) and self._owns(pair.project_id)

    def _owns(self, project_id: str | None) -> bool:
        if self.project is None:
            return True
        return project_id is not None and canonical_id(project_id) == canonical_id(self.project)


def export_filter(
    fmt: str, families: Iterable[str], qualities: Iterable[str], project: str | None
) -> SampleFilter:
    """Return the filter of an export, the format's default qualities when none are given."""
    asked = frozenset(qualities)
    if fmt in PAIR_FORMATS and asked:
        raise ExportError(f"--quality does not apply to {fmt}: pairs hold a chosen and a rejected")
    if fmt == "sft" and "poor" in asked:
        raise ExportError("--quality: sft trains on good (and acceptable) samples, not poor ones")
    chosen = asked or frozenset(DEFAULT_QUALITIES.get(fmt, ()))
    return SampleFilter(frozenset(families), chosen, project)


@dataclass
class Dedup:
    """Remember ids seen (as 128-bit ints: ~70 bytes each); a replay re-emits the same id."""

    seen: set[int] = field(default_factory=set)

    def first(self, record_id: str) -> bool:
        """Return True the first time ``record_id`` is seen, False after."""
        key = uuid.UUID(record_id).int
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


@dataclass(frozen=True)
class RowMaker:
    """Make the rows of one format with a formatter, plain or chat."""

    fmt: str
    formatter: Formatter = default_formatter
    chat: bool = False

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise ExportError(f"--format must be one of {', '.join(FORMATS)}")
        if self.chat and self.fmt in ("mplp", "mplp-common", "training-dataset"):
            raise ExportError(f"--chat does not apply to {self.fmt}")

    def rows(self, items: Iterable[Any]) -> Iterator[dict[str, Any]]:
        """Yield the row of each sample (or pair, for dpo / reward) that has one."""
        make = self.pair_row if self.fmt in PAIR_FORMATS else self.sample_row
        for item in items:
            row = make(item)
            if row is not None:
                yield row

    def sample_row(self, sample: LearningSample) -> dict[str, Any] | None:
        """Return the row of one sample; None when the format has none for it (mplp-common:
        a sample without a project)."""
        if self.fmt == "mplp":
            return sample.to_dict()
        if self.fmt == "mplp-common":
            return common_record(sample)
        quality = sample.feedback.quality_label
        prompt, completion = self.formatter(sample.sample_family, sample.input, sample.output)
        if self.fmt == "training-dataset":
            meta = {"sample_id": sample.sample_id, "quality": quality}
            return {"prompt": prompt, "completion": completion, "metadata": meta}
        if self.fmt == "sft" and self.chat:
            return {"messages": messages("user", prompt) + messages("assistant", completion)}
        row = {
            "prompt": self._turn("user", prompt),
            "completion": self._turn("assistant", completion),
        }
        return row | {"label": quality != "poor"} if self.fmt == "kto" else row

    def pair_row(self, pair: PreferencePair) -> dict[str, Any]:
        """Return the row of one pair; ``margin`` always (None without scores: see export_files)."""
        prompt, chosen = self.formatter(pair.family, pair.prompt, pair.chosen)
        _, rejected = self.formatter(pair.family, pair.prompt, pair.rejected)
        if self.fmt == "dpo":
            row: dict[str, Any] = {
                "prompt": self._turn("user", prompt),
                "chosen": self._turn("assistant", chosen),
                "rejected": self._turn("assistant", rejected),
            }
        elif self.chat:
            user = messages("user", prompt)
            row = {
                "chosen": user + messages("assistant", chosen),
                "rejected": user + messages("assistant", rejected),
            }
        else:
            row = {"chosen": f"{prompt}\n{chosen}", "rejected": f"{prompt}\n{rejected}"}
        return row | {"margin": pair.margin}

    def _turn(self, role: str, text: str) -> Any:
        return messages(role, text) if self.chat else text
