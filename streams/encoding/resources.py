"""Locate the schema files, in a checkout and in an installed wheel alike."""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["schema_root"]


def schema_root() -> Path:
    """Return the directory holding ``avro/`` and ``json/`` schemas.

    A checkout (or editable install) uses ``<repo>/schemas``; a wheel ships the same files
    as the ``learnstream_schemas`` package (see ``pyproject.toml``).
    """
    checkout = Path(__file__).resolve().parents[2] / "schemas"  # streams/encoding/ -> root
    if (checkout / "avro").is_dir():
        return checkout
    spec = importlib.util.find_spec("learnstream_schemas")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("learnstream schemas not found: reinstall the package")
    return Path(next(iter(spec.submodule_search_locations)))
