"""Walk a sample's sections and anonymize every string leaf a detector must read.

One traversal (``_section``) holds which sections are read, the meta and feedback rules and
the id rule; it hands each string leaf it reads to a callback and returns the section
rebuilt from the callback's answers. ``walk_sample`` answers with the anonymized text;
``read_strings`` notes the text and answers it unchanged, so what the anonymizer reads
ahead for a record is, by construction, what the walk then asks it for.
"""

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

    The walk's own traversal, answering each leaf with itself and sharing what it does not
    read instead of copying it: the record's timestamps, provenance and well-formed ids are
    neither copied nor listed.
    """
    texts: list[str] = []

    def note(text: str, person: bool) -> str:
        texts.append(text)
        return text

    read = _Read(note, _shared)
    for key, value in sample.items():
        _section(key, value, read)
    return texts


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
    person_reader = whole_name or anonymize

    def anonymized(text: str, person: bool) -> str:
        out, found = (person_reader if person else anonymize)(text)
        counts.update(found)
        return out

    read = _Read(anonymized, copy.deepcopy)
    return {k: _section(k, v, read) for k, v in sample.items()}, counts


def _shared(value: Any) -> Any:
    """Return value itself: what ``read_strings`` does with a value the walk does not read."""
    return value


@dataclass(frozen=True)
class _Read:
    """What the traversal does with a string leaf it reads, and with a value it does not."""

    #: Return the text to put in a string leaf's place; ``person`` when it is the value of a
    #: person key (``is_person_key``).
    leaf: Callable[[str, bool], str]
    #: Return what to put in the place of a value the traversal does not read.
    keep: Callable[[Any], Any]


def _section(key: str, value: Any, read: _Read) -> Any:
    """Return one top-level section of a sample, its string leaves answered by ``read``."""
    if key in ("input", "state", "output"):
        return _walk(value, read)
    if key == "feedback" and isinstance(value, dict):
        return {k: _walk(v, read) if k == "details" else read.keep(v) for k, v in value.items()}
    if key == "meta" and isinstance(value, dict):
        return {k: _meta_field(k, v, read) for k, v in value.items()}
    return read.keep(value)


def _meta_field(key: str, value: Any, read: _Read) -> Any:
    """Return one meta field: runtime ids and text read, our provenance kept."""
    if key in META_IDS and isinstance(value, dict):  # id_refs: {path: runtime id}
        return {k: _walk(v, read, under_id=True) for k, v in value.items()}
    if key in META_IDS or key in META_TEXT:
        return _walk(value, read, under_id=key in META_IDS)
    return read.keep(value)


def _walk(value: Any, read: _Read, under_id: bool = False, person: bool = False) -> Any:
    """Return value rebuilt with every string leaf answered by ``read.leaf``.

    Under an id key only well-formed ids are kept unread: ``customer_id: "jane@corp.com"``
    is read like any other string.
    """
    if isinstance(value, str):
        if under_id and is_wellformed_id(value):  # nothing a detector reads: kept as is
            return value
        return read.leaf(value, person)
    if isinstance(value, dict):
        return {k: _walk(v, read, is_id_key(k), is_person_key(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_walk(v, read, under_id, person) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if value is None or isinstance(value, int | float):  # immutable: nothing to copy
        return value
    return read.keep(value)
