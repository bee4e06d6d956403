"""Codec boundary for inputs: bytes -> validated MPLP models, or InvalidEvent.

Every decoder takes an optional :class:`InputNotes` that collects the names of fields sent
in a tolerated form (non-UUID ids, zone-less timestamps, fields filled from the record).
Event decoders take the record's :class:`RecordOrigin`: an event without ``event_id`` or
``timestamp`` (seed 002 §4.3 emits neither) gets an id derived from where the record sits,
so a replay re-derives it, and the record's Kafka time. Messages name the field and what is
accepted, never the value.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from learnstream.streams.dlq.errors import InvalidEvent, field_path
from learnstream.streams.mplp.fields import InputNotes, noted
from learnstream.streams.mplp.models import (
    ConsentRecord,
    DecisionEvent,
    DeltaIntentEvent,
    PlanSnapshot,
    StageEvent,
)
from learnstream.streams.samples.ids import derived_uuid

__all__ = [
    "MAX_RECORD_BYTES",
    "RecordOrigin",
    "decode_consent",
    "decode_decision",
    "decode_delta",
    "decode_plan",
    "decode_stage",
    "decode_typed",
    "load_json",
    "validate_event",
]

MAX_RECORD_BYTES = 1_048_576
#: Deeper JSON is rejected here: serializing a sample nested past ~250 levels fails later.
MAX_DEPTH = 64
DECISION_TYPES = ("plan_approved", "plan_rejected")
M = TypeVar("M", bound=BaseModel)
#: The Confirm statuses a decision event of each type agrees with: ``pending`` always (the
#: object may have been captured before the decision was recorded in it); a cancellation has
#: no event type of its own, and seed 002 §4.3 emits it as ``plan_rejected``.
_AGREES = {
    "plan_approved": ("approved", "pending"),
    "plan_rejected": ("rejected", "cancelled", "pending"),
}


@dataclass(frozen=True)
class RecordOrigin:
    """Where a record sits and its Kafka time: what fills a missing event_id / timestamp."""

    topic: str
    partition: int
    offset: int
    timestamp: datetime

    @classmethod
    def of(cls, message: Any) -> RecordOrigin:
        """Return the origin of a consumed record (a Faust message; timestamp in seconds)."""
        moment = datetime.fromtimestamp(message.timestamp, UTC)
        return cls(message.topic, message.partition, message.offset, moment)


def load_json(data: bytes | None) -> Any:
    """Parse a record value as UTF-8 JSON."""
    if data is None:
        raise InvalidEvent("undecodable", "record has no value")
    if len(data) > MAX_RECORD_BYTES:
        raise InvalidEvent("too_large", f"record of {len(data)} bytes > {MAX_RECORD_BYTES}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEvent("undecodable", f"not UTF-8 (byte {exc.start})") from None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidEvent("invalid_json", str(exc)) from None
    if _too_deep(obj):
        raise InvalidEvent("schema_violation", f"JSON nested deeper than {MAX_DEPTH} levels")
    return obj


def _too_deep(obj: Any) -> bool:
    """Tell whether containers nest deeper than MAX_DEPTH (iterative: no recursion limit)."""
    level = [obj] if isinstance(obj, dict | list) else []
    for _ in range(MAX_DEPTH):
        if not level:
            return False
        children = (c for o in level for c in (o.values() if isinstance(o, dict) else o))
        level = [c for c in children if isinstance(c, dict | list)]
    return bool(level)


def _validate(model: type[M], obj: Any, notes: InputNotes | None = None) -> M:
    if not isinstance(obj, dict):
        raise InvalidEvent("schema_violation", f"expected a JSON object, got {type(obj).__name__}")
    try:
        return model.model_validate(obj, context=noted(notes))
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where, message = _located(first["loc"], first["type"], first["msg"])
        raise InvalidEvent(
            "schema_violation", f"{where}: {message}" if where else message
        ) from None
    except RecursionError:
        raise InvalidEvent("schema_violation", "value nested too deeply") from None


def _located(loc: tuple[int | str, ...], kind: str, msg: str) -> tuple[str, str]:
    """Return (where, what) of a validation error without any input value.

    An unexpected key *is* input (``{"jane@corp.com": 1}``): name its parent instead.
    """
    if kind == "extra_forbidden":
        loc, msg = loc[:-1], "unexpected field (only the documented fields are allowed)"
    return field_path(loc), msg.removeprefix("Value error, ")


def _with_origin(obj: Any, origin: RecordOrigin | None, notes: InputNotes | None) -> Any:
    """Return the event with a missing event_id / timestamp taken from its record."""
    if origin is None or not isinstance(obj, dict):
        return obj
    found = {
        "event_id": derived_uuid(
            f"record\x1f{origin.topic}\x1f{origin.partition}\x1f{origin.offset}"
        ),
        "timestamp": origin.timestamp.isoformat(),
    }
    missing = [key for key in found if obj.get(key) is None]
    if notes is not None:
        notes.filled.extend(missing)
    return {**obj, **{key: found[key] for key in missing}} if missing else obj


def _event_kind(obj: Any) -> tuple[str, str]:
    if not isinstance(obj, dict):
        raise InvalidEvent("schema_violation", "expected a JSON object")
    return str(obj.get("event_family", "")), str(obj.get("event_type", ""))


def decode_plan(data: bytes | None, notes: InputNotes | None = None) -> PlanSnapshot:
    """Decode a plan snapshot; a bare MPLP Plan is wrapped into a snapshot."""
    obj = load_json(data)
    if isinstance(obj, dict) and "plan" not in obj and "plan_id" in obj:
        obj = {"plan": obj}
    return _validate(PlanSnapshot, obj, notes)


def decode_decision(
    data: bytes | None,
    expected_type: str,
    *,
    origin: RecordOrigin | None = None,
    notes: InputNotes | None = None,
) -> DecisionEvent:
    """Decode a Confirm decision published on the topic of ``expected_type``.

    A Confirm riding along whose status (or seed 000's ``approved`` flag) says otherwise
    than the event type is a schema violation: which of the two is true cannot be told.
    A cancelled Confirm comes as ``plan_rejected`` (seed 002 §4.3).
    """
    obj = load_json(data)
    family, kind = _event_kind(obj)
    if family != "pipeline_stage" or kind not in DECISION_TYPES:
        raise InvalidEvent(
            "unknown_event_type",
            "event_family/event_type: expected pipeline_stage/plan_approved or plan_rejected",
        )
    if kind != expected_type:
        raise InvalidEvent("wrong_topic", f"{kind} published on the {expected_type} topic")
    event = _validate(DecisionEvent, _with_origin(obj, origin, notes), notes)
    _check_agreement(event)
    return event


def _check_agreement(event: DecisionEvent) -> None:
    confirm = event.payload.confirm
    if confirm is None:
        return
    agrees = _AGREES[event.event_type]
    flag = (confirm.model_extra or {}).get("approved")
    if confirm.status not in agrees or (
        isinstance(flag, bool) and flag != (event.event_type == "plan_approved")
    ):
        raise InvalidEvent(
            "schema_violation",
            f"payload.confirm.status contradicts event_type: a {event.event_type} event "
            f"needs confirm status {agrees[0]} (or {', '.join(agrees[1:])})",
        )


def decode_delta(
    data: bytes | None, *, origin: RecordOrigin | None = None, notes: InputNotes | None = None
) -> DeltaIntentEvent:
    """Decode a delta_intent event."""
    obj = load_json(data)
    family, _ = _event_kind(obj)
    if family != "delta_intent":
        raise InvalidEvent("unknown_event_type", "event_family: expected delta_intent")
    return _validate(DeltaIntentEvent, _with_origin(obj, origin, notes), notes)


def decode_stage(
    data: bytes | None, *, origin: RecordOrigin | None = None, notes: InputNotes | None = None
) -> StageEvent:
    """Decode a pipeline_stage event other than a Confirm decision (either stage form)."""
    obj = load_json(data)
    family, kind = _event_kind(obj)
    if family != "pipeline_stage":
        raise InvalidEvent("unknown_event_type", "event_family: expected pipeline_stage")
    if kind in DECISION_TYPES:
        raise InvalidEvent("wrong_topic", f"{kind} belongs on its decision topic")
    return _validate(StageEvent, _with_origin(obj, origin, notes), notes)


def decode_consent(data: bytes | None, notes: InputNotes | None = None) -> ConsentRecord:
    """Decode a consent record."""
    return _validate(ConsentRecord, load_json(data), notes)


def validate_event(
    model: type[M], obj: Any, origin: RecordOrigin | None, notes: InputNotes | None
) -> M:
    """Validate a parsed event as ``model``, a missing event_id / timestamp taken from its
    record (the event decoders of other modules: streams/mplp/map_events.py)."""
    return _validate(model, _with_origin(obj, origin, notes), notes)


def decode_typed(
    data: bytes | None,
    model: type[M],
    types: tuple[str, ...],
    what: str,
    origin: RecordOrigin | None = None,
    notes: InputNotes | None = None,
) -> M:
    """Decode an event of a closed ``event_type`` enum (``what``: "MAP", "SA"): one of a type
    the schema does not name is refused as ``unknown_event_type``, not as a violation."""
    obj = load_json(data)
    kind = obj.get("event_type") if isinstance(obj, dict) else None
    if isinstance(kind, str) and kind not in types:
        raise InvalidEvent("unknown_event_type", f"event_type: expected one of the {what} events")
    return validate_event(model, obj, origin, notes)
