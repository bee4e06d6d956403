"""Walk a sample's sections and anonymize every string leaf a detector must read.

One pass (``_copy``) holds which sections are read, the meta and feedback rules and the id
rule: it copies the sample, leaving each string it reads in place, and lists those leaves
with where each one's answer goes. ``walk_sample`` hands the listed texts ahead (the
anonymizer reads a record's names in one batch), then answers each leaf in order; what is
read ahead is, by construction, what the walk then asks for.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
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
    """Return the string leaves ``walk_sample`` hands to the anonymizer, in its order."""
    return [leaf.text for leaf in _copy(sample)[1].leaves]


def walk_sample(
    sample: dict[str, Any],
    anonymize: TextAnonymizer,
    whole_name: TextAnonymizer | None = None,
    ahead: Callable[[list[str]], None] | None = None,
) -> tuple[dict[str, Any], Counter[str]]:
    """Return a new sample with input, state, output and feedback.details anonymized.

    Well-formed ids under id keys ("id", "*_id", "*_ids") are kept. In meta, the fields
    taken from the runtime's input are read too: ``id_refs`` and ``source_flow_id`` as ids,
    ``ambiguity_flags`` as text. sample_id, sample_family, created_at, the rest of meta
    and feedback.source/type/quality_label are copied untouched. A string under a person
    key (``decided_by``, ``reviewer``, see ``is_person_key``) goes to ``whole_name``: a
    lone "Dana" there is a name, where in free text it is as often "Deploy" or "Pending".
    ``ahead`` is handed the texts to read, in order, before the first is anonymized.
    """
    out, built = _copy(sample)
    if ahead is not None:
        ahead([leaf.text for leaf in built.leaves])
    counts: Counter[str] = Counter()
    person_reader = whole_name or anonymize
    for leaf in built.leaves:
        text, found = (person_reader if leaf.person else anonymize)(leaf.text)
        leaf.into[leaf.at] = text
        counts.update(found)
    for into, at, items in reversed(built.tuples):  # inner tuples first
        into[at] = tuple(items)
    return out, counts


@dataclass(slots=True)
class _Leaf:
    """A string the walk reads, whether a person key holds it, and where its answer goes."""

    text: str
    person: bool
    into: dict[Any, Any] | list[Any]
    at: Any


@dataclass
class _Built:
    """The leaves a sample's copy still has to answer, and its tuples, built as lists until
    their leaves are answered: (container, place, items)."""

    leaves: list[_Leaf] = field(default_factory=list)
    tuples: list[tuple[dict[Any, Any] | list[Any], Any, list[Any]]] = field(default_factory=list)


def _copy(sample: dict[str, Any]) -> tuple[dict[str, Any], _Built]:
    """Return a copy of the sample holding each string to read as written, and those leaves."""
    out: dict[str, Any] = {}
    built = _Built()
    for key, value in sample.items():
        _section(out, key, value, built)
    return out, built


def _section(into: dict[str, Any], key: str, value: Any, built: _Built) -> None:
    """Copy one top-level section of a sample into ``into``, noting the leaves it reads."""
    if key in ("input", "state", "output"):
        _put(into, key, value, built)
    elif key == "feedback" and isinstance(value, dict):
        feedback: dict[str, Any] = {}
        into[key] = feedback
        for k, v in value.items():
            if k == "details":
                _put(feedback, k, v, built)
            else:
                feedback[k] = copy.deepcopy(v)
    elif key == "meta" and isinstance(value, dict):
        meta: dict[str, Any] = {}
        into[key] = meta
        for k, v in value.items():
            _meta_field(meta, k, v, built)
    else:
        into[key] = copy.deepcopy(value)


def _meta_field(into: dict[str, Any], key: str, value: Any, built: _Built) -> None:
    """Copy one meta field: runtime ids and text read, our provenance as it is."""
    if key in META_IDS and isinstance(value, dict):  # id_refs: {path: runtime id}
        refs: dict[Any, Any] = {}
        into[key] = refs
        for k, v in value.items():
            _put(refs, k, v, built, under_id=True)
    elif key in META_IDS or key in META_TEXT:
        _put(into, key, value, built, under_id=key in META_IDS)
    else:
        into[key] = copy.deepcopy(value)


def _put(
    into: dict[Any, Any] | list[Any],
    at: Any,
    value: Any,
    built: _Built,
    under_id: bool = False,
    person: bool = False,
) -> None:
    """Copy value to ``into[at]``, noting every string leaf below it to read.

    Under an id key only well-formed ids are left unread: ``customer_id: "jane@corp.com"``
    is read like any other string.
    """
    if isinstance(value, str):
        into[at] = value
        if not (under_id and is_wellformed_id(value)):  # a well-formed id: nothing to detect
            built.leaves.append(_Leaf(value, person, into, at))
    elif isinstance(value, dict):
        out: dict[Any, Any] = {}
        into[at] = out
        for k, v in value.items():
            _put(out, k, v, built, is_id_key(k), is_person_key(k))
    elif isinstance(value, list | tuple):
        items: list[Any] = [None] * len(value)
        into[at] = items
        if isinstance(value, tuple):
            built.tuples.append((into, at, items))
        for i, v in enumerate(value):
            _put(items, i, v, built, under_id, person)
    elif value is None or isinstance(value, int | float):  # immutable: nothing to copy
        into[at] = value
    else:
        into[at] = copy.deepcopy(value)
