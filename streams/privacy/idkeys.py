"""Which values the anonymizer may leave unread: well-formed ids under id keys, nothing else."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["META_IDS", "META_TEXT", "is_id_key", "is_person_key", "is_wellformed_id"]

#: meta fields copied from the runtime's input: ids (read under the id rule) and free text.
META_IDS: tuple[str, ...] = ("id_refs", "source_flow_id")
META_TEXT: tuple[str, ...] = ("ambiguity_flags",)

_DIGIT = re.compile(r"\d")
#: Keys whose value is who did something: ``decided_by`` (read as ``decided_by_role``),
#: ``approved_by``, ``reviewer``, ``assignee``... in snake, kebab or camel case.
_PERSON_KEY = re.compile(
    r"(?:.*[_-])?(?:(?:decided|approved|rejected|requested|reported|reviewed|assigned|signed"
    r"|created|updated|owned|submitted)[_-]?by(?:[_-]?role)?|reviewers?|approvers?|assignees?"
    r"|owners?|authors?|contacts?|requester|reporter|user|username|on[_-]?call|cc)",
    re.IGNORECASE,
)
_PREFIXED_UUID = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9]*[-_])*[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
)
_WORD_ID = re.compile(r"[A-Za-z0-9]{1,15}(?:[-_][A-Za-z0-9]{1,15})*")


def is_id_key(key: Any) -> bool:
    """Tell whether a dict key names an identifier ("id", "*_id", "*_ids")."""
    k = key.lower() if isinstance(key, str) else ""
    return k == "id" or k.endswith(("_id", "_ids"))


#: Keys whose ``is_person_key`` answer is kept: the walk asks it of every key of every record,
#: and records repeat a few dozen keys ("objective", "steps", "decided_by"). A key is copied
#: to the output as written, so keeping it holds nothing the anonymizer would mask.
_KEYS_KEPT = 1024


@lru_cache(maxsize=_KEYS_KEPT)
def is_person_key(key: Any) -> bool:
    """Tell whether a dict key names the person who did something ("decided_by", "reviewer")."""
    return isinstance(key, str) and _PERSON_KEY.fullmatch(key) is not None


def is_wellformed_id(value: str) -> bool:
    """Tell whether a string is an identifier no PII or secret detector needs to read.

    A UUID, optionally after word prefixes (``plan-550e8400-e29b-41d4-a716-446655440000``),
    or words of at most 15 characters joined by ``-`` / ``_`` holding at most 3 digits
    (``plan-123``, ``evt_7f3a``, ``decision-001``): a phone number needs 4 digits, every
    other PII entity more, or ``@``, ``.``, ``:`` or a space, none of which these shapes
    allow; an access key or token is one longer run (``AKIAIOSFODNN7EXAMPLE``).
    """
    if _PREFIXED_UUID.fullmatch(value):
        return True
    return _WORD_ID.fullmatch(value) is not None and len(_DIGIT.findall(value)) <= 3
