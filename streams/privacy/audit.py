"""Audit decoded records for residual PII: entity kind and JSON path, never the matched text.

A sample is read where the anonymizer writes (input, state, output, feedback.details and the
runtime's meta fields); a raw input record everywhere. Well-formed ids under id keys are
skipped as the anonymizer skips them, and its replacements (``<EMAIL_ADDRESS>``) are not
findings. Detection is the worker's own: the Anonymizer built from the same settings, a
value under a person key (``decided_by``, ``reviewer``: ``is_person_key``) read as the
worker reads it, whole, so a lone "Dana" there is a finding.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.idkeys import (
    META_IDS,
    META_TEXT,
    is_id_key,
    is_person_key,
    is_wellformed_id,
)

__all__ = [
    "AuditReport",
    "Detect",
    "Finding",
    "detectors",
    "scan_input",
    "scan_sample",
]

#: Return the entity kinds found in one string (never the text itself).
Detect = Callable[[str], Iterable[str]]
_TOKEN = re.compile(r"<[A-Z][A-Z_]*>")


@dataclass(frozen=True)
class Finding:
    """One residual entity: where the record is, the JSON path in it, its kind."""

    record: str  # a sample_id, or topic/partition/offset for an input record
    path: str
    entity: str

    def line(self) -> str:
        """Return the finding as one line (no value of the record in it)."""
        return f"{self.entity} at {self.record} {self.path}"


@dataclass
class AuditReport:
    """What an audit read and found."""

    topic: str
    records: int = 0
    undecodable: int = 0
    findings: list[Finding] = field(default_factory=list)

    def summary(self) -> str:
        """Return the one summary line: records read, findings by entity, or none."""
        if not self.findings:
            head = f"no PII found in {self.records} records of {self.topic}"
        else:
            kinds = Counter(f.entity for f in self.findings)
            by_kind = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            hit = len({f.record for f in self.findings})
            head = (
                f"PII found: {len(self.findings)} findings ({by_kind}) in "
                f"{hit} of {self.records} records of {self.topic}"
            )
        return head + (f"; {self.undecodable} undecodable" if self.undecodable else "")


def detectors(config: PrivacyConfig) -> tuple[Detect, Detect]:
    """Build the worker's detector for config (PII entities, secrets, score threshold) as
    its two readings: of free text, and of a person key's value (all of it one name when it
    is shaped as one)."""
    from learnstream.streams.privacy.pii import build_anonymizer

    anonymizer = build_anonymizer(config)

    def detect(text: str) -> Iterable[str]:
        return sorted(anonymizer.anonymize_text(_TOKEN.sub(" ", text))[1])

    def person(text: str) -> Iterable[str]:
        return sorted(anonymizer.anonymize_person(_TOKEN.sub(" ", text).strip())[1])

    return detect, person


@dataclass(frozen=True)
class _Reading:
    """How string leaves are read: free text, and a person key's value."""

    text: Detect
    person: Detect


def _walk(
    value: Any, read: _Reading, path: str, under_id: bool = False, person: bool = False
) -> Iterator[tuple[str, str]]:
    """Yield (path, entity) for every entity found in a string leaf below value."""
    if isinstance(value, str):
        if not (under_id and is_wellformed_id(value)):
            found = (read.person if person else read.text)(value)
            yield from ((path, entity) for entity in found)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, read, f"{path}.{key}", is_id_key(key), is_person_key(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _walk(item, read, f"{path}[{i}]", under_id, person)


def scan_input(
    record: str, doc: Any, detect: Detect, person: Detect | None = None
) -> list[Finding]:
    """Return the findings of a raw input record (any JSON value), read everywhere;
    ``person`` reads the values under person keys (default: ``detect``)."""
    read = _Reading(detect, person or detect)
    return [Finding(record, path, entity) for path, entity in _walk(doc, read, "$")]


def scan_sample(
    sample: dict[str, Any], detect: Detect, person: Detect | None = None
) -> list[Finding]:
    """Return the findings of a decoded LearningSample, read where the anonymizer writes;
    ``person`` reads the values under person keys (default: ``detect``)."""
    read = _Reading(detect, person or detect)
    record = str(sample.get("sample_id", "?"))
    found: list[tuple[str, str]] = []
    for key in ("input", "state", "output"):
        found += _walk(sample.get(key), read, f"$.{key}")
    details = (sample.get("feedback") or {}).get("details")
    found += _walk(details, read, "$.feedback.details")
    meta = sample.get("meta") or {}
    for key in (*META_IDS, *META_TEXT):
        found += _walk(meta.get(key), read, f"$.meta.{key}", key in META_IDS)
    return [Finding(record, path, entity) for path, entity in found]
