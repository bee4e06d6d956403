"""Walk a sample's sections and anonymize every string leaf a detector must read."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from learnstream.streams.privacy.idkeys import (
    META_IDS,
    META_TEXT,
    is_id_key,
    is_person_key,
    is_wellformed_id,
)

__all__ = ["TextAnonymizer", "read_strings", "walk_sample"]

TextAnonymizer = Callable[[str], tuple[str, Counter[str]]]


def read_strings(sample: dict[str, Any]) -> list[str]:
    """Return the string leaves ``walk_sample`` hands to the anonymizer, in its order.

    The same sections and the same id rule as the walk, without copying anything: what the
    anonymizer reads ahead for a record is then only what the walk will ask it for, not the
    record's timestamps, provenance or well-formed ids.
    """
    texts: list[str] = []
    for key, value in sample.items():
        if key in ("input", "state", "output"):
            _read_leaves(value, texts)
        elif key == "feedback" and isinstance(value, dict):
            for name, item in value.items():
                if name == "details":
                    _read_leaves(item, texts)
        elif key == "meta" and isinstance(value, dict):
            for name, item in value.items():
                if name in META_IDS and isinstance(item, dict):
                    for ref in item.values():
                        _read_leaves(ref, texts, under_id=True)
                elif name in META_IDS or name in META_TEXT:
                    _read_leaves(item, texts, under_id=name in META_IDS)
    return texts


def _read_leaves(value: Any, texts: list[str], under_id: bool = False) -> None:
    """Append the string leaves below value that ``_walk`` reads."""
    if isinstance(value, str):
        if not (under_id and is_wellformed_id(value)):
            texts.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _read_leaves(item, texts, is_id_key(key))
    elif isinstance(value, list | tuple):
        for item in value:
            _read_leaves(item, texts, under_id)


def walk_sample(
    sample: dict[str, Any], anonymize: TextAnonymizer, whole_name: TextAnonymizer | None = None
) -> tuple[dict[str, Any], Counter[str]]:
    """Return a new sample with input, state, output and feedback.details anonymized.

    Well-formed ids under id keys ("id", "*_id", "*_ids") are kept. In meta, the fields
    taken from the runtime's input are read too: ``id_refs`` and ``source_flow_id`` as ids,
    ``ambiguity_flags`` as text. sample_id, sample_family, created_at, the rest of meta
    and feedback.source/type/quality_label are copied untouched. A string under a person
    key (``decided_by``, ``reviewer``, see ``is_person_key``) goes to ``whole_name``: a
    lone "Dana" there is a name, where in free text it is as often "Deploy" or "Pending".
    """
    counts: Counter[str] = Counter()
    read = _Read(anonymize, whole_name or anonymize, counts)
    return {k: _section(k, v, read) for k, v in sample.items()}, counts


@dataclass(frozen=True)
class _Read:
    """How string leaves are read, and the counts of what was found."""

    text: TextAnonymizer
    person: TextAnonymizer
    counts: Counter[str]


def _section(key: str, value: Any, read: _Read) -> Any:
    """Return the anonymized copy of one top-level section of a sample."""
    if key in ("input", "state", "output"):
        return _walk(value, read)
    if key == "feedback" and isinstance(value, dict):
        return {k: _walk(v, read) if k == "details" else copy.deepcopy(v) for k, v in value.items()}
    if key == "meta" and isinstance(value, dict):
        return {k: _meta_field(k, v, read) for k, v in value.items()}
    return copy.deepcopy(value)


def _meta_field(key: str, value: Any, read: _Read) -> Any:
    """Return one meta field: runtime ids and text anonymized, our provenance copied."""
    if key in META_IDS and isinstance(value, dict):  # id_refs: {path: runtime id}
        return {k: _walk(v, read, under_id=True) for k, v in value.items()}
    if key in META_IDS or key in META_TEXT:
        return _walk(value, read, under_id=key in META_IDS)
    return copy.deepcopy(value)


def _walk(value: Any, read: _Read, under_id: bool = False, person: bool = False) -> Any:
    """Return a copy of value with every string leaf anonymized.

    Under an id key only well-formed ids are kept unread: ``customer_id: "jane@corp.com"``
    is scanned like any other string.
    """
    if isinstance(value, str):
        if under_id and is_wellformed_id(value):  # nothing a detector reads: kept as is
            return value
        text, found = (read.person if person else read.text)(value)
        read.counts.update(found)
        return text
    if isinstance(value, dict):
        return {k: _walk(v, read, is_id_key(k), is_person_key(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_walk(v, read, under_id, person) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if value is None or isinstance(value, int | float):  # immutable: nothing to copy
        return value
    return copy.deepcopy(value)
