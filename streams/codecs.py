"""Encode LearningSamples (plain JSON-like dicts) as JSON or Avro single-object messages.

Absent vs null, the rule that keeps ``decode(encode(s)) == s`` exact:

* inside free-form objects (``input``, ``output``, ``state``, ``feedback.details``)
  keys are kept as they are: absent stays absent, ``None`` stays ``None``;
* a typed optional field (``state``, ``feedback.details``, ``meta.project_id``, ...)
  that is absent is written as Avro null and decoded as absent again;
* a typed optional field set to ``None`` is written as Avro null plus its dotted path
  in ``present_nulls``, and decoded as ``None`` again (``feedback.details = None`` is
  simply a JsonValue holding null).
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson
from fastavro import schemaless_reader, schemaless_writer

from streams.avro import MAGIC, SCHEMA_DIR, SampleLayout, Schema, load_schemas, schema_fingerprint

__all__ = [
    "SCHEMA_DIR",
    "AvroSampleCodec",
    "CodecError",
    "JsonSampleCodec",
    "SampleCodec",
    "codec_for",
    "decode_any",
    "schema_fingerprint",
]

_HEADER_LEN = len(MAGIC) + 8
_CODECS: dict[str, SampleCodec] = {}
_ENCODE_ERRORS = (AttributeError, KeyError, OverflowError, TypeError, ValueError)


class CodecError(ValueError):
    """Signal that a sample cannot be encoded or a message cannot be decoded."""


class SampleCodec(Protocol):
    """Turn a LearningSample dict into bytes and back."""

    content_type: str

    def encode(self, sample: dict[str, Any]) -> bytes: ...

    def decode(self, data: bytes) -> dict[str, Any]: ...


class JsonSampleCodec:
    """Encode samples as compact UTF-8 JSON (orjson)."""

    content_type: str = "application/json"

    def encode(self, sample: dict[str, Any]) -> bytes:
        """Serialize a sample to JSON bytes."""
        try:
            return orjson.dumps(sample)
        except orjson.JSONEncodeError as exc:
            raise CodecError(f"sample is not JSON-serializable: {exc}") from exc

    def decode(self, data: bytes) -> dict[str, Any]:
        """Parse JSON bytes into a sample dict."""
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise CodecError(f"not valid JSON: {exc}") from exc
        if not isinstance(obj, dict):
            raise CodecError(f"a JSON sample must be an object, got {type(obj).__name__}")
        return obj


class AvroSampleCodec:
    """Encode samples as Avro single-object messages: ``C3 01``, fingerprint, binary body."""

    content_type: str = "application/vnd.learnstream.sample+avro"

    def __init__(
        self, schema_dir: Path | None = None, reader_schema: str = "learning_sample.avsc"
    ) -> None:
        """Load every ``*.avsc`` of ``schema_dir``; write with and read into ``reader_schema``."""
        schema_dir = schema_dir or SCHEMA_DIR
        schemas = load_schemas(schema_dir)
        if reader_schema not in schemas:
            raise CodecError(f"no Avro schema {reader_schema!r} in {schema_dir}")
        self.fingerprint, self.schema = schemas[reader_schema]
        self.registry: dict[bytes, Schema] = dict(schemas.values())
        self._layout = SampleLayout(self.schema)

    def encode(self, sample: dict[str, Any]) -> bytes:
        """Serialize a sample into one single-object message."""
        out = BytesIO()
        out.write(MAGIC + self.fingerprint)
        try:
            schemaless_writer(out, self.schema, self._layout.to_record(sample))
        except _ENCODE_ERRORS as exc:
            raise CodecError(f"sample does not fit the Avro schema: {exc!r}") from exc
        return out.getvalue()

    def decode(self, data: bytes) -> dict[str, Any]:
        """Parse a message written with any known schema, resolved into the reader schema."""
        if len(data) < _HEADER_LEN or data[:2] != MAGIC:
            raise CodecError("not an Avro single-object message (bad magic or too short)")
        fingerprint = bytes(data[2:_HEADER_LEN])
        writer = self.registry.get(fingerprint)
        if writer is None:
            raise CodecError(f"unknown Avro schema fingerprint {fingerprint.hex()}")
        body = BytesIO(data)
        body.seek(_HEADER_LEN)
        reader = None if fingerprint == self.fingerprint else self.schema
        try:
            record = schemaless_reader(body, writer, reader)
            if not isinstance(record, dict):
                raise TypeError(f"expected a record, got {type(record).__name__}")
            if body.tell() != len(data):
                raise ValueError(f"{len(data) - body.tell()} trailing bytes after the record")
            return self._layout.from_record(record)
        except Exception as exc:
            raise CodecError(f"corrupt Avro message: {exc!r}") from exc


def codec_for(fmt: Literal["avro", "json"]) -> SampleCodec:
    """Return the shared codec of a wire format, created on first use."""
    if fmt not in _CODECS:
        if fmt not in ("avro", "json"):
            raise CodecError(f"unknown sample format {fmt!r} (expected 'avro' or 'json')")
        _CODECS[fmt] = AvroSampleCodec() if fmt == "avro" else JsonSampleCodec()
    return _CODECS[fmt]


def decode_any(data: bytes) -> dict[str, Any]:
    """Decode a message of either format, sniffing the Avro magic bytes ``C3 01``."""
    return codec_for("avro" if data[:2] == MAGIC else "json").decode(data)
