"""Decode learn/* messages from bytes or JSON objects; errors name fields, never values."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from learnstream.streams.a2e.messages import REQUEST_TYPES, LearnRequest, LearnResponse
from learnstream.streams.dlq.errors import InvalidEvent, field_path

__all__ = ["describe", "encode", "parse_request", "parse_response"]

_REQUEST: TypeAdapter[LearnRequest] = TypeAdapter(LearnRequest)
_RESPONSE: TypeAdapter[LearnResponse] = TypeAdapter(LearnResponse)
#: pydantic messages that quote the input; each gets a message of ours instead.
_OWN_MESSAGES = {
    "union_tag_invalid": "expected one of " + ", ".join(REQUEST_TYPES) + " (or its /resp)",
    "union_tag_not_found": "the message has no type",
}


def describe(exc: ValidationError) -> str:
    """Return ``field: what is accepted`` for each error, without any input value."""
    parts = []
    for err in exc.errors(include_input=False, include_url=False, include_context=False):
        message = _OWN_MESSAGES.get(err["type"], err["msg"])
        parts.append(f"{field_path(err['loc']) or 'message'}: {message}")
    return "; ".join(parts)


def _load(data: bytes | str | dict[str, Any]) -> Any:
    if isinstance(data, dict):
        return data
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise InvalidEvent("invalid_json", "the message is not valid JSON") from None


def parse_request(data: bytes | str | dict[str, Any]) -> LearnRequest:
    """Return the learn/*/req message in ``data``; raise InvalidEvent (schema_violation)."""
    try:
        return _REQUEST.validate_python(_load(data))
    except ValidationError as exc:
        raise InvalidEvent("schema_violation", describe(exc)) from None


def parse_response(data: bytes | str | dict[str, Any]) -> LearnResponse:
    """Return the learn/*/resp message in ``data``; raise InvalidEvent (schema_violation)."""
    try:
        return _RESPONSE.validate_python(_load(data))
    except ValidationError as exc:
        raise InvalidEvent("schema_violation", describe(exc)) from None


def encode(message: LearnRequest | LearnResponse) -> bytes:
    """Return the wire form: compact JSON (nulls kept: a state may hold a JSON null)."""
    return orjson.dumps(message.model_dump(mode="json"))
