"""Deterministic ids: sample ids a replay re-emits, and UUIDs for runtimes' own id strings."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

__all__ = [
    "canonical_id",
    "derived_uuid",
    "is_uuid4",
    "normalized_objective",
    "objective_intent_id",
    "sample_id",
]

#: The canonical (hyphenated) form of an RFC 4122 UUID of version 4, any case.
_UUID4 = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.IGNORECASE
)


def _v4_from(text: str) -> str:
    """Return a UUID with version-4 bits whose 122 free bits come from SHA-256 of text.

    The same string ``str(uuid.UUID(bytes=digest[:16], version=4))`` gives, built without
    ``uuid.UUID``'s checks: every event derives several ids on the worker's main thread, so
    their cost shows in its profile (benchmarks/RESULTS.md, findings behind the design); and
    ids already written must not change.
    """
    raw = bytearray(hashlib.sha256(text.encode()).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def sample_id(family: str, source_event_id: str) -> str:
    """Return a UUID v4-shaped id derived from (family, source event id).

    The id validates as v4 while staying a pure function of its inputs, so a replay
    re-emits the same id and trainers deduplicate exactly.
    """
    return _v4_from(f"{family}\x1f{source_event_id}")


def is_uuid4(value: str) -> bool:
    """Tell whether value is a canonical UUID v4 string (any case)."""
    return _UUID4.fullmatch(value) is not None


def derived_uuid(runtime_id: str) -> str:
    """Return the UUID v4-shaped stand-in of a runtime id that is not a UUID (``plan-123``).

    Samples must carry UUIDs where the MPLP learning schemas say ``format: uuid``; a
    runtime's own id maps to the same stand-in every time, on every worker.
    """
    return _v4_from(f"mplp-id\x1f{runtime_id}")


@lru_cache(maxsize=4096)  # ~1 MB: recent plan and project ids repeat on every event naming them
def canonical_id(runtime_id: str) -> str:
    """Return the UUID a sample carries for a runtime id: itself (lower case) or its stand-in.

    Also the key of per-plan and per-project state, so ``PLAN-1`` style ids and
    upper-case UUIDs join with what refers to them.
    """
    return runtime_id.lower() if is_uuid4(runtime_id) else derived_uuid(runtime_id)


def normalized_objective(objective: str) -> str:
    """Return an objective as two plans of one intent are compared by: case folded, runs of
    whitespace as one space, no trailing full stop."""
    return " ".join(objective.casefold().split()).rstrip(".")


def objective_intent_id(context_id: str, objective: str) -> str:
    """Return the intent id of a plan that names no intent: a UUID v4-shaped SHA-256 of its
    context and normalized objective, so two plans of one context with one objective (a
    replan, a second execution) resolve the same intent, on every worker."""
    return _v4_from(f"intent\x1f{canonical_id(context_id)}\x1f{normalized_objective(objective)}")
