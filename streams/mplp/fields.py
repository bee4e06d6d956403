"""Field types of the MPLP inputs: runtime ids, timestamps, and what decoding noticed.

Runtimes send what the seeds show, not only what the official schemas say: ids like
``plan-123`` where the schemas say UUID v4, timestamps without a zone (``datetime.now()``).
Both are accepted; decoding notes each such field by *name* in an :class:`InputNotes`
(passed as pydantic validation context) so the worker can count them. Error messages name
what is accepted and never repeat the value (it may be personal data).

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ValidationInfo

from learnstream.streams.samples.ids import is_uuid4

__all__ = [
    "MAX_ID_LENGTH",
    "InputNotes",
    "IsoTime",
    "RuntimeId",
    "Uuid4",
    "check_uuid4",
    "noted",
    "text_of",
]

MAX_ID_LENGTH = 256
_NO_SPACE = re.compile(r"\S+")
#: A date, then a time: what ISO-8601 date-times start with (a bare date is refused).
_DATE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}")


@dataclass
class InputNotes:
    """Names of the fields one record carried in a tolerated, non-official form."""

    non_uuid_ids: list[str] = field(default_factory=list)
    naive_timestamps: list[str] = field(default_factory=list)
    filled: list[str] = field(default_factory=list)
    #: A core event's (family, what it came to): streams/mplp/core_events.py.
    core_events: list[tuple[str, str]] = field(default_factory=list)


def _notes(info: ValidationInfo) -> InputNotes | None:
    context = info.context
    notes = context.get("notes") if isinstance(context, dict) else None
    return notes if isinstance(notes, InputNotes) else None


def check_uuid4(value: str) -> str:
    """Return a canonical UUID v4 in lower case; refuse anything else (value not quoted)."""
    if not is_uuid4(value):
        raise ValueError("expected a canonical UUID v4 (8-4-4-4-12 hex digits, version 4)")
    return value.lower()


#: What we write where MPLP says ``format: uuid`` (sample ids, canonical ids in samples).
Uuid4 = Annotated[str, AfterValidator(check_uuid4)]


def _runtime_id(value: str, info: ValidationInfo) -> str:
    if not 0 < len(value) <= MAX_ID_LENGTH or not _NO_SPACE.fullmatch(value):
        raise ValueError(
            f"expected an id: a UUID v4, or 1 to {MAX_ID_LENGTH} characters without whitespace"
        )
    if not is_uuid4(value) and (notes := _notes(info)) is not None and info.field_name:
        notes.non_uuid_ids.append(info.field_name)
    return value


#: A runtime's id as sent: UUID v4 (official) or any short token without whitespace (seeds).
RuntimeId = Annotated[str, AfterValidator(_runtime_id)]


def _iso_only(value: object) -> object:
    # pydantic would read a number, or a string of digits, as Unix time, and a bare date
    # as midnight: neither is what a runtime means by an event's timestamp.
    if not isinstance(value, str | datetime) or (
        isinstance(value, str) and not _DATE_TIME.match(value)
    ):
        raise ValueError("expected an ISO-8601 date-time string, e.g. 2026-03-01T12:00:00Z")
    return value


def _aware(value: datetime, info: ValidationInfo) -> datetime:
    if value.tzinfo is not None:
        return value
    if (notes := _notes(info)) is not None and info.field_name:
        notes.naive_timestamps.append(info.field_name)
    return value.replace(tzinfo=UTC)  # seed 002's Python SDK writes datetime.now(): read as UTC


#: An ISO-8601 date-time; without a timezone it is read as UTC (and noted). Numbers refused.
IsoTime = Annotated[datetime, BeforeValidator(_iso_only), AfterValidator(_aware)]


def text_of(payload: dict[str, Any], *names: str) -> str | None:
    """Return the first of ``names`` an open payload holds as a non-empty string (a value of
    another type is ignored: payloads are the runtime's, not the schema's)."""
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def noted(notes: InputNotes | None) -> dict[str, Any] | None:
    """Return the validation context that makes the validators fill ``notes``."""
    return {"notes": notes} if notes is not None else None
