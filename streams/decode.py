"""Codec boundary for inputs: bytes -> validated MPLP models, or InvalidEvent."""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from streams.errors import InvalidEvent
from streams.models import ConsentRecord, DecisionEvent, DeltaIntentEvent, PlanSnapshot, StageEvent

__all__ = [
    "MAX_RECORD_BYTES",
    "decode_consent",
    "decode_decision",
    "decode_delta",
    "decode_plan",
    "decode_stage",
    "load_json",
]

MAX_RECORD_BYTES = 1_048_576
#: Deeper JSON is rejected here: serializing a sample nested past ~250 levels fails later.
MAX_DEPTH = 64
DECISION_TYPES = ("plan_approved", "plan_rejected")
M = TypeVar("M", bound=BaseModel)


def load_json(data: bytes | None) -> Any:
    """Parse a record value as UTF-8 JSON."""
    if data is None:
        raise InvalidEvent("undecodable", "record has no value")
    if len(data) > MAX_RECORD_BYTES:
        raise InvalidEvent("too_large", f"record of {len(data)} bytes > {MAX_RECORD_BYTES}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEvent("undecodable", f"not UTF-8: {exc}") from None
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


def _validate(model: type[M], obj: Any) -> M:
    if not isinstance(obj, dict):
        raise InvalidEvent("schema_violation", f"expected a JSON object, got {type(obj).__name__}")
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise InvalidEvent("schema_violation", f"{where}: {first['msg']}") from None
    except RecursionError:
        raise InvalidEvent("schema_violation", "value nested too deeply") from None


def _event_kind(obj: Any) -> tuple[str, str]:
    if not isinstance(obj, dict):
        raise InvalidEvent("schema_violation", "expected a JSON object")
    return str(obj.get("event_family", "")), str(obj.get("event_type", ""))


def decode_plan(data: bytes | None) -> PlanSnapshot:
    """Decode a plan snapshot; a bare MPLP Plan is wrapped into a snapshot."""
    obj = load_json(data)
    if isinstance(obj, dict) and "plan" not in obj and "plan_id" in obj:
        obj = {"plan": obj}
    return _validate(PlanSnapshot, obj)


def decode_decision(data: bytes | None, expected_type: str) -> DecisionEvent:
    """Decode a Confirm decision published on the topic of ``expected_type``."""
    obj = load_json(data)
    family, kind = _event_kind(obj)
    if family != "pipeline_stage" or kind not in DECISION_TYPES:
        raise InvalidEvent("unknown_event_type", f"{family}/{kind} is not a plan decision")
    if kind != expected_type:
        raise InvalidEvent("wrong_topic", f"{kind} published on the {expected_type} topic")
    return _validate(DecisionEvent, obj)


def decode_delta(data: bytes | None) -> DeltaIntentEvent:
    """Decode a delta_intent event."""
    obj = load_json(data)
    family, kind = _event_kind(obj)
    if family != "delta_intent":
        raise InvalidEvent("unknown_event_type", f"{family}/{kind} is not a delta_intent event")
    return _validate(DeltaIntentEvent, obj)


def decode_stage(data: bytes | None) -> StageEvent:
    """Decode a pipeline_stage event other than a Confirm decision."""
    obj = load_json(data)
    family, kind = _event_kind(obj)
    if family != "pipeline_stage":
        raise InvalidEvent("unknown_event_type", f"{family}/{kind} is not a pipeline_stage event")
    if kind in DECISION_TYPES:
        raise InvalidEvent("wrong_topic", f"{kind} belongs on its decision topic")
    return _validate(StageEvent, obj)


def decode_consent(data: bytes | None) -> ConsentRecord:
    """Decode a consent record."""
    return _validate(ConsentRecord, load_json(data))
