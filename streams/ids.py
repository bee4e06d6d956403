"""Deterministic sample ids: a replay re-emits the same id, so trainers deduplicate exactly."""

from __future__ import annotations

import hashlib
import uuid

__all__ = ["sample_id"]


def sample_id(family: str, source_event_id: str) -> str:
    """Return a UUID v4-shaped id derived from (family, source event id).

    The 122 free bits come from SHA-256, the version and variant bits are set as UUID v4
    requires, so the id validates as v4 while staying a pure function of its inputs.
    """
    digest = hashlib.sha256(f"{family}\x1f{source_event_id}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))
