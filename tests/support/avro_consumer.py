"""A plain Avro consumer of learning samples, written from the published .avsc alone.

It uses no learnstream code on purpose: it is what a trainer, a Spark job or a sink does
with the schema file and its documented rule (json-parse the fields marked
``"learnstream.json": true``, leave out null fields).
"""

from __future__ import annotations

import json
from io import BytesIO
from pathlib import Path
from typing import Any

import fastavro

__all__ = ["AVSC", "marked_fields", "plain_read"]

AVSC = Path(__file__).resolve().parents[2] / "schemas" / "avro" / "learning_sample.avsc"
_HEADER = 2 + 8  # C3 01 + CRC-64-AVRO fingerprint


def _record(avro_type: Any) -> dict[str, Any] | None:
    return avro_type if isinstance(avro_type, dict) and avro_type["type"] == "record" else None


def _to_mplp(record: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for field in schema["fields"]:
        value = record[field["name"]]
        if value is None:
            continue
        if field.get("learnstream.json") is True:
            value = json.loads(value)
        elif (sub := _record(field["type"])) is not None:
            value = _to_mplp(value, sub)
        out[field["name"]] = value
    return out


def plain_read(data: bytes, avsc: Path = AVSC) -> dict[str, Any]:
    """Decode one single-object message into the MPLP sample a generic reader gets."""
    assert data[:2] == b"\xc3\x01", "not an Avro single-object message"
    schema = fastavro.parse_schema(json.loads(avsc.read_text(encoding="utf-8")))
    record = fastavro.schemaless_reader(BytesIO(data[_HEADER:]), schema, None)
    assert isinstance(record, dict)
    return _to_mplp(record, schema)


def marked_fields(schema: dict[str, Any], prefix: str = "") -> list[str]:
    """Return the dotted paths of the fields marked as JSON text."""
    found = []
    for field in schema["fields"]:
        if field.get("learnstream.json") is True:
            found.append(prefix + field["name"])
        elif (sub := _record(field["type"])) is not None:
            found += marked_fields(sub, f"{prefix}{field['name']}.")
    return found
