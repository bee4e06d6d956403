"""Avro plumbing for LearningSamples: schema files, fingerprints, sample <-> record mapping.

Free-form JSON objects are stored as ``map<JsonValue>``, ``JsonValue`` being a record
with one union field ``v``. :func:`wrap` picks the union branch itself through
fastavro's tuple notation (``("long", 5)``), so the writer never guesses and
``True``/``1``/``1.0`` keep their JSON types.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import fastavro
from fastavro.schema import to_parsing_canonical_form

from streams.resources import schema_root

__all__ = [
    "MAGIC",
    "SCHEMA_DIR",
    "SampleLayout",
    "Schema",
    "load_schemas",
    "rabin64",
    "schema_fingerprint",
    "unwrap",
    "unwrap_map",
    "wrap",
    "wrap_map",
]

Schema = dict[str, Any]
MAGIC = b"\xc3\x01"
SCHEMA_DIR: Path = schema_root() / "avro"
_EMPTY64 = 0xC15D213AA4D7A795
_SECTIONS = ("", "feedback.", "meta.")
_JSON_VALUE = "dev.learnstream.JsonValue"
_UNTRACKED = frozenset({"present_nulls", "feedback.details"})


def _rabin_table() -> tuple[int, ...]:
    """Build the CRC-64-AVRO lookup table of the Avro specification."""
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (_EMPTY64 & -(fp & 1))
        table.append(fp)
    return tuple(table)


_TABLE = _rabin_table()


def rabin64(data: bytes) -> int:
    """Return the unsigned 64-bit CRC-64-AVRO (Rabin) fingerprint of ``data``."""
    fp = _EMPTY64
    for byte in data:
        fp = (fp >> 8) ^ _TABLE[(fp ^ byte) & 0xFF]
    return fp


def schema_fingerprint(schema: Schema | str) -> bytes:
    """Return the 8-byte little-endian CRC-64-AVRO fingerprint of a schema's canonical form."""
    raw = json.loads(schema) if isinstance(schema, str) else schema
    return rabin64(to_parsing_canonical_form(raw).encode()).to_bytes(8, "little")


def load_schemas(schema_dir: Path) -> dict[str, tuple[bytes, Schema]]:
    """Parse every ``*.avsc`` of a directory into ``{file name: (fingerprint, parsed)}``."""
    schemas: dict[str, tuple[bytes, Schema]] = {}
    for path in sorted(schema_dir.glob("*.avsc")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        schemas[path.name] = (schema_fingerprint(raw), cast(Schema, fastavro.parse_schema(raw)))
    return schemas


def _wrap_list(value: list[Any] | tuple[Any, ...]) -> tuple[str, list[dict[str, Any]]]:
    return "array", [wrap(item) for item in value]


_BRANCH: dict[type, Callable[[Any], tuple[str, Any]]] = {
    bool: lambda v: ("boolean", v),
    int: lambda v: ("long", v),
    float: lambda v: ("double", v),
    str: lambda v: ("string", v),
    list: _wrap_list,
    tuple: _wrap_list,
    dict: lambda v: ("map", wrap_map(v)),
}


def wrap(value: Any) -> dict[str, Any]:
    """Convert a plain JSON value into a ``JsonValue`` record with an explicit union branch."""
    if value is None:
        return {"v": None}
    branch = _BRANCH.get(type(value))
    if branch is None:  # subclasses (StrEnum, IntEnum, OrderedDict): first isinstance match
        branch = next((f for t, f in _BRANCH.items() if isinstance(value, t)), None)
        if branch is None:
            raise TypeError(f"not a JSON value: {type(value).__name__}")
    return {"v": branch(value)}


def wrap_map(obj: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Convert a JSON object into an Avro ``map<JsonValue>``."""
    return {key: wrap(value) for key, value in obj.items()}


def unwrap(node: Mapping[str, Any]) -> Any:
    """Convert a decoded ``JsonValue`` record back into a plain JSON value."""
    value = node["v"]
    if type(value) is list:
        return [unwrap(item) for item in value]
    if type(value) is dict:
        return {key: unwrap(item) for key, item in value.items()}
    return value


def unwrap_map(obj: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Convert a decoded ``map<JsonValue>`` back into a JSON object."""
    return {key: unwrap(value) for key, value in obj.items()}


def _as_list(avro_type: Any) -> list[Any]:
    """Return the branches of a union type, or the type alone as a one-item list."""
    return avro_type if isinstance(avro_type, list) else [avro_type]


def _sections(sample: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(path prefix, dict)`` for the top level, ``feedback`` and ``meta``."""
    yield "", sample
    yield "feedback.", sample["feedback"]
    yield "meta.", sample["meta"]


class SampleLayout:
    """Map LearningSample dicts onto the records of one parsed schema and back."""

    def __init__(self, schema: Schema) -> None:
        """Derive the known keys and the nullable fields of each section from ``schema``."""
        records = {"": schema, **{f"{f['name']}.": f["type"] for f in schema["fields"]}}
        fields = [(p, f) for p in _SECTIONS for f in records[p]["fields"]]
        self.names = {p: frozenset(f["name"] for q, f in fields if q == p) for p in _SECTIONS}
        self.names[""] -= _UNTRACKED
        optional = (p + f["name"] for p, f in fields if "null" in _as_list(f["type"]))
        self.nullable = frozenset(optional) - _UNTRACKED

    def to_record(self, sample: dict[str, Any]) -> dict[str, Any]:
        """Map a sample onto the Avro record shape (JsonValue wrapping, ``present_nulls``)."""
        nulls = []
        for prefix, section in _sections(sample):
            if unknown := section.keys() - self.names[prefix]:
                raise ValueError(f"keys not in the schema: {sorted(prefix + k for k in unknown)}")
            nulls += [prefix + k for k, v in section.items() if v is None]
        feedback = dict(sample["feedback"])
        if "details" in feedback:
            feedback["details"] = (_JSON_VALUE, wrap(feedback["details"]))
        state = sample.get("state")
        return sample | {
            "input": wrap_map(sample["input"]),
            "output": wrap_map(sample["output"]),
            "state": None if state is None else ("map", wrap_map(state)),
            "feedback": feedback,
            "present_nulls": [path for path in nulls if path in self.nullable],
        }

    def from_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """Map a decoded Avro record back onto the sample shape, in place."""
        nulls = frozenset(record.pop("present_nulls", ()))
        record["input"] = unwrap_map(record["input"])
        record["output"] = unwrap_map(record["output"])
        if record.get("state") is not None:
            record["state"] = unwrap_map(record["state"])
        feedback = record["feedback"]
        if (details := feedback.pop("details", None)) is not None:
            feedback["details"] = unwrap(details)
        for prefix, section in _sections(record):
            for key in [k for k, v in section.items() if v is None]:
                if prefix + key in self.nullable and prefix + key not in nulls:
                    del section[key]
        return record
