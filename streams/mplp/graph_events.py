"""GraphUpdateEvent: a structural change of a project state graph (PSG), as
``events/mplp-graph-update-event.schema.json`` defines it (topic ``mplp.graph_updates``,
keyed by ``graph_id``).

The event extends the core event (any other field allowed): ``graph_id``, ``update_kind``
(node or edge added, updated, deleted, or bulk), ``node_delta`` and ``edge_delta`` (counts, +
or -), ``source_module``. What caused the change may ride in the payload (``plan_id``,
``delta_id``, ``trigger_event_id``): it is read, never required.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.mplp.decode import RecordOrigin, load_json, validate_event
from learnstream.streams.mplp.fields import InputNotes, RuntimeId
from learnstream.streams.mplp.models import MplpEvent

__all__ = ["GraphUpdateEvent", "UpdateKind", "decode_graph_update"]

UpdateKind = Literal[
    "node_add", "node_update", "node_delete", "edge_add", "edge_update", "edge_delete", "bulk"
]


#: Deltas are held within this (a graph does not change by more; stored counts stay JSON-safe).
MAX_DELTA = 2**53


def _whole(value: Any) -> Any:
    """Return a whole number as an int within ``MAX_DELTA``: JSON integers past 64 bits reach
    us as floats (orjson), and the schema allows any integer."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return max(-MAX_DELTA, min(value, MAX_DELTA))
    return value


#: A count delta: any integer, held within ``MAX_DELTA``.
Delta = Annotated[int, BeforeValidator(_whole)]


class GraphUpdateEvent(MplpEvent):
    """One PSG structural update."""

    event_family: Literal["graph_update"]
    graph_id: RuntimeId
    update_kind: UpdateKind
    node_delta: Delta
    edge_delta: Delta
    source_module: str | None = None


def decode_graph_update(
    data: bytes | None, origin: RecordOrigin | None = None, notes: InputNotes | None = None
) -> GraphUpdateEvent:
    """Decode a graph update event (``event_family`` must be ``graph_update``)."""
    obj = load_json(data)
    if isinstance(obj, dict) and obj.get("event_family") != "graph_update":
        raise InvalidEvent("unknown_event_type", "event_family: expected graph_update")
    return validate_event(GraphUpdateEvent, obj, origin, notes)
