"""MAP events: a multi-agent collaboration session's lifecycle (``events/mplp-map-event``).

The official schema is closed (no field beyond ``event_id``, ``event_type``, ``timestamp``,
``session_id``, ``initiator_role``, ``target_roles`` and ``payload``); we read what it names
and let anything else pass unread, as for the other inputs. Ids that are no UUID and
timestamps without a zone are accepted and noted (streams/mplp/fields.py). Payloads are open
in the schema: what a sample needs from them is read by ``text_of``
(streams/mplp/fields.py), which ignores a value of the wrong type instead of refusing the
event.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from learnstream.streams.mplp.decode import RecordOrigin, decode_typed
from learnstream.streams.mplp.fields import InputNotes, IsoTime, RuntimeId

__all__ = [
    "MAP_EVENT_TYPES",
    "MapEvent",
    "MapEventType",
    "decode_map_event",
]

MapEventType = Literal[
    "MAPSessionStarted",
    "MAPRolesAssigned",
    "MAPTurnDispatched",
    "MAPTurnCompleted",
    "MAPBroadcastSent",
    "MAPBroadcastReceived",
    "MAPConflictDetected",
    "MAPConflictResolved",
    "MAPSessionCompleted",
]
MAP_EVENT_TYPES: tuple[str, ...] = MapEventType.__args__  # type: ignore[attr-defined]


class MapEvent(BaseModel):
    """One MAP session event, as ``events/mplp-map-event.schema.json`` defines it."""

    model_config = ConfigDict(extra="allow", frozen=True)
    event_id: RuntimeId
    event_type: MapEventType
    timestamp: IsoTime
    session_id: RuntimeId
    initiator_role: str | None = None
    target_roles: list[str] = Field(default_factory=list)
    payload: dict[str, Any] = Field(default_factory=dict)


def decode_map_event(
    data: bytes | None, origin: RecordOrigin | None = None, notes: InputNotes | None = None
) -> MapEvent:
    """Decode a MAP event; one whose ``event_type`` the schema does not name is refused."""
    return decode_typed(data, MapEvent, MAP_EVENT_TYPES, "MAP", origin, notes)
