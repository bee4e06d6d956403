"""The one exception type for bad input, carrying a DLQ reason code."""

from __future__ import annotations

import re
import traceback
from typing import Literal

from pydantic import ValidationError

__all__ = ["REASONS", "InvalidEvent", "Reason", "describe_failure", "field_path"]

Reason = Literal[
    "undecodable",
    "invalid_json",
    "too_large",
    "schema_violation",
    "unknown_event_type",
    "wrong_topic",
    "plan_state_missing",
    "plan_deleted",
    "builder_error",
]
REASONS: tuple[str, ...] = Reason.__args__  # type: ignore[attr-defined]


class InvalidEvent(ValueError):
    """Raise when an input record cannot become a sample; ``reason`` names the DLQ reason."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason: Reason = reason
        self.detail = message


#: A location part we may print: a field name, not a key the input made up.
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def field_path(loc: tuple[int | str, ...]) -> str:
    """Return a validation error's location, with parts not shaped like field names hidden.

    A dict key of the input *is* input (``{"jane@corp.com": 1}``), so it prints as ``<key>``.
    """
    return ".".join(
        str(p) if isinstance(p, int) or _FIELD_NAME.fullmatch(p) else "<key>" for p in loc
    )


def describe_failure(exc: BaseException) -> str:
    """Describe an unexpected exception for the DLQ and the log without any input value.

    An exception's text may quote what it choked on (pydantic's ``input_value=...``), so
    only its type, the fields a validation error names, and where the code raised it go out.
    """
    what = type(exc).__name__
    if isinstance(exc, ValidationError):
        fields = (field_path(e["loc"]) for e in exc.errors(include_input=False, include_url=False))
        what = f"{what} in {', '.join(fields)}"
    frames = reversed(traceback.extract_tb(exc.__traceback__)[-3:])
    where = " < ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in frames)
    return f"{what} at {where}" if where else what
