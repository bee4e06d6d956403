"""Avro plumbing for LearningSamples: schema files, fingerprints, sample <-> record mapping.

The layout is one any Avro reader can map to the MPLP sample without learnstream's code:
typed parts (ids, labels, ``meta``) are plain Avro fields; free-form JSON (``input``,
``output``, ``state``, ``feedback.details``) is JSON text in ``string`` fields marked with
the property ``"learnstream.json": true``. :func:`from_record` is that generic mapping:
json-parse the marked fields, leave out the null ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import fastavro
import orjson
from fastavro.schema import fingerprint, to_parsing_canonical_form

from learnstream.streams.encoding.resources import schema_root

__all__ = [
    "JSON_MARK",
    "MAGIC",
    "LayoutError",
    "SCHEMA_DIR",
    "Schema",
    "from_record",
    "load_schemas",
    "schema_fingerprint",
    "to_record",
]

Schema = dict[str, Any]
MAGIC = b"\xc3\x01"
SCHEMA_DIR: Path = schema_root() / "avro"
#: Field property saying "this string holds JSON text" (not part of the fingerprint).
JSON_MARK = "learnstream.json"


class LayoutError(ValueError):
    """Signal a sample that does not fit the schema; the message names fields, never values."""


def schema_fingerprint(schema: Schema | str) -> bytes:
    """Return the 8-byte little-endian CRC-64-AVRO fingerprint of a schema's canonical form."""
    raw = json.loads(schema) if isinstance(schema, str) else schema
    return bytes.fromhex(fingerprint(to_parsing_canonical_form(raw), "CRC-64-AVRO"))


def load_schemas(schema_dir: Path) -> dict[str, tuple[bytes, Schema]]:
    """Parse every ``*.avsc`` of a directory into ``{file name: (fingerprint, parsed)}``."""
    schemas: dict[str, tuple[bytes, Schema]] = {}
    for path in sorted(schema_dir.glob("*.avsc")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        schemas[path.name] = (schema_fingerprint(raw), cast(Schema, fastavro.parse_schema(raw)))
    return schemas


def _record_type(avro_type: Any) -> Schema | None:
    """Return the record schema of a field type (or of its non-null union branch), if any."""
    branches = avro_type if isinstance(avro_type, list) else [avro_type]
    return next((b for b in branches if isinstance(b, dict) and b.get("type") == "record"), None)


def _json_text(value: Any, path: str) -> str:
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError as exc:  # orjson names the type, never the value
        raise LayoutError(f"{path} is not JSON-serializable: {exc}") from exc


def to_record(schema: Schema, sample: dict[str, Any], path: str = "") -> dict[str, Any]:
    """Map a sample dict onto the records of ``schema``: marked fields become JSON text.

    A key the schema does not know, or a required field that is missing, raises
    :class:`LayoutError` naming the field (fastavro would drop the one and misreport the other).
    """
    fields = {field["name"]: field for field in schema["fields"]}
    if unknown := sample.keys() - fields.keys():
        raise LayoutError(f"keys not in the schema: {sorted(path + k for k in unknown)}")
    if missing := [n for n, f in fields.items() if n not in sample and "default" not in f]:
        raise LayoutError(f"missing required fields: {[path + n for n in missing]}")
    record = {}
    for name, value in sample.items():
        field = fields[name]
        if value is not None and field.get(JSON_MARK):
            value = _json_text(value, path + name)
        elif isinstance(value, dict) and (sub := _record_type(field["type"])) is not None:
            value = to_record(sub, value, f"{path}{name}.")
        record[name] = value
    return record


def from_record(schema: Schema, record: dict[str, Any]) -> dict[str, Any]:
    """Map a decoded record back onto the MPLP sample shape, in place.

    Marked fields are json-parsed; null fields are left out (null means absent), in
    nested records too. This is all a generic consumer needs to do.
    """
    for field in schema["fields"]:
        name = field["name"]
        value = record.get(name)
        if value is None:
            record.pop(name, None)
        elif field.get(JSON_MARK):
            record[name] = orjson.loads(value)
        elif (sub := _record_type(field["type"])) is not None:
            from_record(sub, value)
    return record
