"""Validate samples as an MPLP consumer would: the official learning schemas, formats checked."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator, FormatChecker
from referencing import Registry, Resource

__all__ = [
    "CORE",
    "FAMILY_SCHEMA",
    "LEARNING",
    "PROJECT_COPIES",
    "format_checker",
    "learning_validators",
    "mplp_errors",
]

PROJECT_COPIES = Path(__file__).resolve().parents[2] / "schemas" / "json" / "mplp"
CORE = "mplp-learning-sample-core.schema.json"
FAMILY_SCHEMA = {
    "intent_resolution": "mplp-learning-sample-intent.schema.json",
    "delta_impact": "mplp-learning-sample-delta.schema.json",
}
LEARNING = [CORE, *FAMILY_SCHEMA.values()]
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _is_datetime(value: object) -> bool:
    """Check RFC 3339 date-time: jsonschema skips the format without an optional extra."""
    if not isinstance(value, str):
        return True
    return bool(_RFC3339.fullmatch(value)) and bool(datetime.fromisoformat(value.upper()))


def format_checker() -> FormatChecker:
    """Return a checker of every format jsonschema knows (uuid included) and date-time."""
    checker = FormatChecker()
    checker.checks("date-time", raises=ValueError)(_is_datetime)
    return checker


def learning_validators(learning_dir: Path) -> dict[str, Draft7Validator]:
    """Return a validator per learning schema file of ``learning_dir``, formats checked."""
    files = {name: json.loads((learning_dir / name).read_text("utf-8")) for name in LEARNING}
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in files.values()
    )
    for schema in files.values():
        Draft7Validator.check_schema(schema)
    return {
        name: Draft7Validator(s, registry=registry, format_checker=format_checker())
        for name, s in files.items()
    }


def mplp_errors(validators: dict[str, Draft7Validator], sample: dict[str, Any]) -> list[str]:
    """Return what the core schema and the sample's family schema find wrong (empty: valid)."""
    names = [CORE] + ([FAMILY_SCHEMA[f]] if (f := sample["sample_family"]) in FAMILY_SCHEMA else [])
    return [
        f"{name}: {err.json_path}: {err.message}"
        for name in names
        for err in validators[name].iter_errors(sample)
    ]
