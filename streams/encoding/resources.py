"""Locate the schema files, in a checkout and in an installed wheel alike."""

from __future__ import annotations

from pathlib import Path

__all__ = ["schema_root"]


def schema_root() -> Path:
    """Return the directory holding ``avro/`` and ``json/`` schemas: ``learnstream/schemas``,
    which is ``schemas/`` itself in a checkout (a link) and package data in a wheel."""
    root = (Path(__file__).parents[2] / "schemas").resolve()  # learnstream/streams/encoding/..
    if not (root / "avro").is_dir():
        raise FileNotFoundError(f"learnstream schemas not found in {root}: reinstall the package")
    return root
