"""Write export rows to a file with flat memory: JSON lines, Parquet, or one TrainingDataset.

Every writer streams: rows go to ``FILE.partial`` as they come (Parquet in row groups of
``ROW_GROUP`` rows) and the file is renamed into place at the end, so a failed export never
leaves a half file under the asked name. Two things are only known at the end, and go through
a temporary file beside the output instead of memory:

- TrainingDataset's ``sample_count`` (it precedes ``samples`` in the seed's object);
- whether every preference pair has a ``margin``: trainers need it on all rows or none.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson

from learnstream.streams.export.rows import ExportError

__all__ = ["DATASET_VERSION", "ROW_GROUP", "write_export"]

DATASET_VERSION = "1.0.0"
ROW_GROUP = 10_000


@contextmanager
def _partial(out: Path) -> Iterator[Path]:
    """Yield a path beside ``out``; rename it to ``out`` on success, remove it on failure."""
    partial = out.with_name(out.name + ".partial")
    try:
        yield partial
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


def write_export(rows: Iterable[dict[str, Any]], out: Path, fmt: str) -> int:
    """Write ``rows`` of format ``fmt`` to ``out`` (``.parquet``: Parquet); return the count."""
    parquet = out.suffix == ".parquet"
    if parquet and fmt in ("mplp", "mplp-common", "training-dataset"):
        raise ExportError(f"{fmt} is written as JSON only (free-form fields have no fixed columns)")
    if fmt == "training-dataset":
        return _write_dataset(rows, out)
    if fmt in ("dpo", "reward"):
        rows = _margin_all_or_none(rows, out.parent)
    return _write_parquet(rows, out) if parquet else _write_jsonl(rows, out)


def _write_jsonl(rows: Iterable[dict[str, Any]], out: Path) -> int:
    count = 0
    with _partial(out) as partial, partial.open("wb") as handle:
        for row in rows:
            handle.write(orjson.dumps(row) + b"\n")
            count += 1
    return count


def _write_parquet(rows: Iterable[dict[str, Any]], out: Path) -> int:
    import pyarrow as pa  # heavy: only when asked for
    import pyarrow.parquet as pq

    count, writer, batch = 0, None, []
    with _partial(out) as partial:
        try:
            for row in rows:
                batch.append(row)
                if len(batch) == ROW_GROUP:
                    writer = _row_group(pa, pq, writer, batch, partial)
                    count, batch = count + len(batch), []
            if batch or writer is None:  # an empty export still gets a (column-less) file
                writer = _row_group(pa, pq, writer, batch, partial)
                count += len(batch)
        finally:
            if writer is not None:
                writer.close()
    return count


def _row_group(pa: Any, pq: Any, writer: Any, batch: list[dict[str, Any]], path: Path) -> Any:
    """Write ``batch`` as one row group, opening the writer with the first batch's schema."""
    table = pa.Table.from_pylist(batch, schema=writer.schema if writer else None)
    writer = writer or pq.ParquetWriter(path, table.schema)
    writer.write_table(table)
    return writer


def _write_dataset(rows: Iterable[dict[str, Any]], out: Path) -> int:
    """Write ``{"version", "sample_count", "samples": [...]}``, samples spooled to disk first."""
    count = 0
    with tempfile.TemporaryFile(dir=out.parent) as spool:
        for row in rows:
            spool.write((b",\n" if count else b"\n") + orjson.dumps(row))
            count += 1
        head = {"version": DATASET_VERSION, "sample_count": count}
        with _partial(out) as partial, partial.open("wb") as handle:
            handle.write(orjson.dumps(head)[:-1] + b', "samples": [')
            _copy(spool, handle)
            handle.write(b"\n]}\n")
    return count


def _copy(spool: IO[bytes], handle: IO[bytes]) -> None:
    spool.seek(0)
    while chunk := spool.read(1 << 20):
        handle.write(chunk)


def _margin_all_or_none(rows: Iterable[dict[str, Any]], where: Path) -> Iterator[dict[str, Any]]:
    """Yield ``rows`` again, keeping ``margin`` only if every row has one (spooled to disk)."""
    every = True
    with tempfile.TemporaryFile(dir=where) as spool:
        for row in rows:
            every = every and row.get("margin") is not None
            spool.write(orjson.dumps(row) + b"\n")
        spool.seek(0)
        for line in spool:
            row = orjson.loads(line)
            if not every:
                row.pop("margin", None)
            yield row
