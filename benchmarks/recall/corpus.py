"""Build the corpus: each value planted in a sentence, and the clean sentences beside them."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from benchmarks.recall.clean import SHAPES, clean_sentence
from benchmarks.recall.kinds import KINDS, TEMPLATES
from benchmarks.recall.source import Source, Value

__all__ = ["Clean", "Corpus", "Planted", "build"]


@dataclass(frozen=True)
class Planted:
    """A sentence carrying one planted value, and where a sample carries it."""

    kind: str
    field: str
    template: str
    text: str
    value: Value


@dataclass(frozen=True)
class Clean:
    """A sentence with nothing private in it."""

    shape: str
    field: str
    text: str


@dataclass(frozen=True)
class Corpus:
    """The planted and the clean sentences of one seed."""

    seed: int
    planted: tuple[Planted, ...]
    clean: tuple[Clean, ...]


def _source(seed: int, name: str) -> Source:
    """Return the randomness of one kind: adding a kind leaves the others' values as they are."""
    return Source(seed * 1_000_003 + zlib.crc32(name.encode()))


def _planted(seed: int, kind: str, count: int) -> list[Planted]:
    """Return ``count`` sentences of distinct values of ``kind``."""
    src, templates, seen = _source(seed, kind), TEMPLATES[KINDS[kind].topic], set()
    out: list[Planted] = []
    for _ in range(count * 20):  # distinct values; a kind's value space is far larger
        if len(out) == count:
            break
        value = KINDS[kind].make(src)
        if value.text in seen:
            continue
        seen.add(value.text)
        field, template = src.rng.choice(templates)
        out.append(Planted(kind, field, template, template.format(v=value.text), value))
    return out


def _clean(seed: int, count: int) -> list[Clean]:
    """Return ``count`` distinct clean sentences, the shapes in turn."""
    src, shapes, seen = _source(seed, "clean"), sorted(SHAPES), set()
    out: list[Clean] = []
    for n in range(count * 20):
        if len(out) == count:
            break
        shape = shapes[n % len(shapes)]
        field, text = clean_sentence(src, shape)
        if text not in seen:
            seen.add(text)
            out.append(Clean(shape, field, text))
    return out


def build(seed: int, per_kind: int, clean: int, kinds: tuple[str, ...] | None = None) -> Corpus:
    """Return the corpus of ``seed``: ``per_kind`` sentences of each kind, ``clean`` clean ones."""
    planted = [p for kind in kinds or tuple(KINDS) for p in _planted(seed, kind, per_kind)]
    return Corpus(seed, tuple(planted), tuple(_clean(seed, clean)))
