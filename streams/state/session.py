"""A MAP session's state: what its events say so far (folded by streams/join/sessions.py)."""

from __future__ import annotations

from typing import Literal

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict

__all__ = ["SEEN_IDS", "Closed", "SessionState"]

#: Event ids a session remembers to count a redelivered event once.
SEEN_IDS = 128
#: How a session ended: its ``MAPSessionCompleted``, or quiet for the timeout.
Closed = Literal["completed", "timeout"]


class SessionState(BaseModel):
    """What a MAP session's events say so far; JSON bytes in the ``map_sessions`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: As the runtime spelled it (the records' key, and the sample's ``input.session_id``).
    session_id: str
    first_at: AwareDatetime
    last_at: AwareDatetime
    #: When the worker last heard of the session (its clock): the timeout runs from here.
    touched_at: AwareDatetime
    started: bool = False
    initiator_role: str | None = None
    coordination_mode: str | None = None
    project_id: str | None = None
    source_flow_id: str | None = None
    roles: tuple[str, ...] = ()
    turns_dispatched: int = 0
    turns_completed: int = 0
    handoffs: int = 0
    last_turn_role: str | None = None
    broadcasts_sent: int = 0
    broadcasts_received: int = 0
    conflicts_detected: int = 0
    conflicts_resolved: int = 0
    #: What ``MAPSessionCompleted`` said of the outcome (``payload.outcome`` or ``status``).
    reported_outcome: str | None = None
    #: The events read, latest last (at most :data:`SEEN_IDS`).
    seen: tuple[str, ...] = ()
    #: How the session ended (None: still open), and the events that came after.
    closed: Closed | None = None
    late_events: int = 0

    @property
    def record_key(self) -> str:
        """Return the key of the session's records (its partition is the state's)."""
        return self.session_id

    def to_table(self) -> bytes:
        """Return the JSON bytes stored in the table and its changelog."""
        return orjson.dumps(self.model_dump(mode="json", exclude_defaults=True))

    @classmethod
    def from_table(cls, raw: bytes) -> SessionState:
        """Parse what :meth:`to_table` stored."""
        return cls.model_validate_json(raw)
