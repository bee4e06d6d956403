"""Read samples written in the retired ``JsonValue`` wrapper layout (read-only).

Before the JSON-text layout, free-form objects were ``map<JsonValue>``, every value a
``{"v": <union>}`` record. The samples topic keeps records forever, so those schemas stay
registered under ``schemas/avro/legacy/`` for reading; nothing writes them any more.
"""

from __future__ import annotations

from collections.abc import Mapping
from io import BytesIO
from pathlib import Path
from typing import Any

from fastavro import schemaless_reader

from learnstream.streams.encoding.avro import Schema, load_schemas

__all__ = ["LEGACY_READER", "LegacyReader", "unwrap"]

#: The wrapper-layout schema records are resolved into (the old writers' common reader).
LEGACY_READER = "learning_sample.jsonvalue.v1.avsc"
_FREE_FORM = ("input", "output", "state")


def unwrap(node: Mapping[str, Any]) -> Any:
    """Convert a decoded ``JsonValue`` record back into a plain JSON value."""
    value = node["v"]
    if type(value) is list:
        return [unwrap(item) for item in value]
    if type(value) is dict:
        return {key: unwrap(item) for key, item in value.items()}
    return value


def _drop_nulls(section: dict[str, Any]) -> None:
    for key in [k for k, v in section.items() if v is None]:
        del section[key]


def _to_sample(record: dict[str, Any]) -> dict[str, Any]:
    """Unwrap the free-form parts; null typed fields mean absent, as in the current layout."""
    record.pop("present_nulls", None)
    for name in _FREE_FORM:
        if record.get(name) is not None:
            record[name] = {key: unwrap(value) for key, value in record[name].items()}
    feedback = record["feedback"]
    if feedback.get("details") is not None:
        feedback["details"] = unwrap(feedback["details"])
    for section in (record, feedback, record["meta"]):
        _drop_nulls(section)
    return record


class LegacyReader:
    """Decode bodies written with any wrapper-layout schema of a directory."""

    def __init__(self, directory: Path) -> None:
        """Register every ``*.avsc`` of ``directory`` (none when it does not exist)."""
        schemas = load_schemas(directory) if directory.is_dir() else {}
        self.writers: dict[bytes, Schema] = dict(schemas.values())
        self._reader = schemas[LEGACY_READER][1] if LEGACY_READER in schemas else None

    def read(self, body: BytesIO, fingerprint: bytes) -> dict[str, Any]:
        """Decode one body written with the schema of ``fingerprint`` into a sample dict."""
        record = schemaless_reader(body, self.writers[fingerprint], self._reader)
        if not isinstance(record, dict):
            raise TypeError(f"expected a record, got {type(record).__name__}")
        return _to_sample(record)
