"""Encode LearningSamples (plain JSON-like dicts) as JSON or Avro single-object messages.

Avro messages are ``C3 01``, the 8-byte CRC-64-AVRO fingerprint of the writer schema, then
the binary body (``schemas/avro/README.md``). Null and absent are one thing, as in
``LearningSample.to_dict()``: a field left out or set to ``None`` is written as Avro null
and decoded as absent, so ``decode(encode(s)) == s`` for every ``to_dict()`` output. Inside
free-form JSON (``input``, ``output``, ``state``, ``feedback.details``) nothing changes:
nulls, key order, integers and floats survive the JSON text exactly.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson
from fastavro import schemaless_reader, schemaless_writer

from learnstream.streams.encoding.avro import (
    MAGIC,
    SCHEMA_DIR,
    LayoutError,
    Schema,
    from_record,
    load_schemas,
    schema_fingerprint,
    to_record,
)
from learnstream.streams.encoding.avro_legacy import LegacyReader

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
        """Load every ``*.avsc`` of ``schema_dir``; write with and read into ``reader_schema``.

        The wrapper-layout schemas of ``schema_dir/legacy/`` are registered for reading only.
        """
        schema_dir = schema_dir or SCHEMA_DIR
        schemas = load_schemas(schema_dir)
        if reader_schema not in schemas:
            raise CodecError(f"no Avro schema {reader_schema!r} in {schema_dir}")
        self.fingerprint, self.schema = schemas[reader_schema]
        self.registry: dict[bytes, Schema] = dict(schemas.values())
        self.legacy = LegacyReader(schema_dir / "legacy")

    def encode(self, sample: dict[str, Any]) -> bytes:
        """Serialize a sample into one single-object message."""
        out = BytesIO()
        out.write(MAGIC + self.fingerprint)
        try:
            schemaless_writer(out, self.schema, to_record(self.schema, sample))
        except LayoutError as exc:
            raise CodecError(f"sample does not fit the Avro schema: {exc}") from exc
        except _ENCODE_ERRORS as exc:  # fastavro's messages quote the value: name the type only
            raise CodecError(f"sample does not fit the Avro schema ({type(exc).__name__})") from exc
        return out.getvalue()

    def decode(self, data: bytes) -> dict[str, Any]:
        """Parse a message written with any known schema, resolved into the reader schema."""
        if len(data) < _HEADER_LEN or data[:2] != MAGIC:
            raise CodecError("not an Avro single-object message (bad magic or too short)")
        fingerprint = bytes(data[2:_HEADER_LEN])
        if fingerprint not in self.registry and fingerprint not in self.legacy.writers:
            raise CodecError(f"unknown Avro schema fingerprint {fingerprint.hex()}")
        body = BytesIO(data)
        body.seek(_HEADER_LEN)
        try:
            sample = self._read(body, fingerprint)
        except Exception as exc:  # the messages may quote the bytes: name the type only
            raise CodecError(f"corrupt Avro message ({type(exc).__name__})") from exc
        if body.tell() != len(data):
            raise CodecError(f"corrupt Avro message: {len(data) - body.tell()} trailing bytes")
        return sample

    def _read(self, body: BytesIO, fingerprint: bytes) -> dict[str, Any]:
        if fingerprint in self.legacy.writers:
            return self.legacy.read(body, fingerprint)
        reader = None if fingerprint == self.fingerprint else self.schema
        record = schemaless_reader(body, self.registry[fingerprint], reader)
        if not isinstance(record, dict):
            raise TypeError("the body is not a record")
        return from_record(self.schema, record)


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
