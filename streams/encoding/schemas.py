"""JSON Schemas (Draft-07) of every record we read or write, generated from the models.

``python -m learnstream.streams.encoding.schemas [--check] [DIR]`` writes them (default
``schemas/json/``) or reports drift. The MPLP schemas in ``schemas/json/mplp/`` are hand-written
from the seed; :func:`validate_sample` checks a wire-form sample against ours and MPLP's, offline.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from learnstream.streams.a2e import messages as a2e_messages
from learnstream.streams.a2e import models as a2e_models
from learnstream.streams.encoding.resources import schema_root
from learnstream.streams.mplp import fields, models
from learnstream.streams.samples.sample import LearningSample

__all__ = [
    "OFFICIAL_MPLP_DIR",
    "SCHEMA_DIR",
    "generated",
    "main",
    "stale",
    "validate_sample",
    "write",
]

SCHEMA_DIR: Path = schema_root() / "json"
#: Unchanged copies of the official MPLP v1.0 schemas (Apache-2.0, see its NOTICE). They share
#: ``$id``s with our learning-sample copies, so they stay out of our validators' registry.
OFFICIAL_MPLP_DIR: Path = SCHEMA_DIR / "mplp" / "official"
DRAFT7 = "http://json-schema.org/draft-07/schema#"
BASE_ID = "https://learnstream.dev/schemas/"
_HEX = "[0-9a-fA-F]"
UUID4_PATTERN = f"^{_HEX}{{8}}-{_HEX}{{4}}-4{_HEX}{{3}}-[89abAB]{_HEX}{{3}}-{_HEX}{{12}}$"
MODELS: dict[str, type[BaseModel]] = {
    "plan_snapshot.json": models.PlanSnapshot,
    "plan.json": models.Plan,
    "confirm.json": models.Confirm,
    "decision_event.json": models.DecisionEvent,
    "delta_intent_event.json": models.DeltaIntentEvent,
    "stage_event.json": models.StageEvent,
    "consent_record.json": models.ConsentRecord,
    "learning_sample.json": LearningSample,
    "a2e_feedback.json": a2e_models.Feedback,
    "a2e_experience.json": a2e_models.Experience,
    "a2e_skill_performance_record.json": a2e_models.SkillPerformanceRecord,
    "a2e_reward_sample.json": a2e_models.RewardSample,
    "a2e_learn_request.json": a2e_messages.LearnRequestMessage,
    "a2e_learn_response.json": a2e_messages.LearnResponseMessage,
}
#: MPLP family schema of each family that has one (the others use the core schema only).
FAMILY_SCHEMAS = {
    "intent_resolution": "mplp/mplp-learning-sample-intent.schema.json",
    "delta_impact": "mplp/mplp-learning-sample-delta.schema.json",
}
_CHECK_UUID4 = get_args(models.Uuid4)[1].func
_CHECK_RUNTIME_ID = get_args(models.RuntimeId)[1].func
#: What the RuntimeId validator enforces: a UUID v4 or any short token without whitespace.
RUNTIME_ID = {"minLength": 1, "maxLength": fields.MAX_ID_LENGTH, "pattern": r"^\S+$"}
_NOTES = frozenset({"$ref", "title", "description", "default", "examples", "$comment"})
_DATA = frozenset({"default", "const", "enum", "examples"})
_MAPS = frozenset({"properties", "patternProperties", "definitions"})
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


class _Draft7Json(GenerateJsonSchema):
    """Say in the schema what the id validators enforce (pydantic cannot see into them)."""

    def function_after_schema(
        self, schema: core_schema.AfterValidatorFunctionSchema
    ) -> JsonSchemaValue:
        out = dict(super().function_after_schema(schema))
        if schema["function"]["function"] is _CHECK_UUID4:
            out |= {"format": "uuid", "pattern": UUID4_PATTERN}
        elif schema["function"]["function"] is _CHECK_RUNTIME_ID:
            out |= RUNTIME_ID
        return out


def _to_draft7(node: Any) -> Any:
    """Rewrite the 2019+ keywords pydantic may emit into their Draft-07 equivalents."""
    if isinstance(node, list):
        return [_to_draft7(item) for item in node]
    if not isinstance(node, dict):
        return node
    # ``discriminator`` is an OpenAPI hint; the oneOf beside it does the validating.
    out = {key: _keyword(key, value) for key, value in node.items() if key != "discriminator"}
    if "prefixItems" in out:
        rest = out.pop("items", None)
        out["items"] = out.pop("prefixItems")
        if rest is not None:
            out["additionalItems"] = rest
    if "$ref" in out and set(out) - _NOTES:  # Draft-07 ignores every sibling of $ref
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def _keyword(key: str, value: Any) -> Any:
    if key in _DATA:  # JSON values, not schemas
        return value
    if key in _MAPS:  # names -> schemas
        return {name: _to_draft7(sub) for name, sub in value.items()}
    return _to_draft7(value)


def _schema(name: str, model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(
        ref_template="#/definitions/{model}", schema_generator=_Draft7Json
    )
    defs = raw.pop("$defs", {})
    out = {"$schema": DRAFT7, "$id": BASE_ID + name, **_to_draft7(raw)}
    if defs:
        out["definitions"] = {key: _to_draft7(value) for key, value in defs.items()}
    return out


def _render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def generated() -> dict[str, dict[str, Any]]:
    """Return the generated schemas by file name."""
    return {name: _schema(name, model) for name, model in MODELS.items()}


def write(directory: Path) -> list[Path]:
    """Write every generated schema into ``directory`` and return the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, schema in generated().items():
        (directory / name).write_text(_render(schema), encoding="utf-8")
        paths.append(directory / name)
    return paths


def stale(directory: Path) -> list[str]:
    """Return the generated files that are missing from ``directory`` or differ from it."""
    return [
        name
        for name, schema in generated().items()
        if not (path := directory / name).is_file() or path.read_text("utf-8") != _render(schema)
    ]


@cache
def _validators() -> dict[str, Any]:
    from jsonschema import Draft7Validator, FormatChecker  # dev-only: the worker never validates
    from referencing import Registry, Resource

    files = {
        p.relative_to(SCHEMA_DIR).as_posix(): json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(SCHEMA_DIR.rglob("*.json"))
        if not p.is_relative_to(OFFICIAL_MPLP_DIR)
    }
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in files.values()
    )
    checker = FormatChecker(formats=())
    checker.checkers.update(Draft7Validator.FORMAT_CHECKER.checkers)
    # Without the optional rfc3339-validator extra jsonschema skips date-time silently.
    checker.checks("date-time", raises=ValueError)(_is_datetime)
    return {
        name: Draft7Validator(s, registry=registry, format_checker=checker)
        for name, s in files.items()
    }


def _is_datetime(value: object) -> bool:
    """Return True for an RFC 3339 date-time (the range checks are ``fromisoformat``'s)."""
    if not isinstance(value, str):
        return True
    return bool(_RFC3339.fullmatch(value)) and bool(datetime.fromisoformat(value.upper()))


def validate_sample(sample: dict[str, Any]) -> list[str]:
    """Return what our schema, MPLP's core/family schema and the feedback schema reject."""
    checks = [
        ("learning_sample.json", sample),
        ("mplp/mplp-learning-sample-core.schema.json", sample),
    ]
    if family := FAMILY_SCHEMAS.get(str(sample.get("sample_family"))):
        checks.append((family, sample))
    if isinstance(sample.get("feedback"), dict):
        checks.append(("mplp/learning-feedback.schema.json", sample["feedback"]))
    validators = _validators()
    return [
        f"{name}: {err.json_path}: {err.message}"
        for name, instance in checks
        for err in sorted(validators[name].iter_errors(instance), key=lambda e: e.json_path)
    ]


def main(argv: list[str] | None = None) -> int:
    """Write the generated schemas, or with ``--check`` list the stale ones and return 1."""
    parser = argparse.ArgumentParser(
        prog="python -m learnstream.streams.encoding.schemas", description=main.__doc__
    )
    parser.add_argument("--check", action="store_true", help="only report files that differ")
    parser.add_argument("directory", nargs="?", type=Path, default=SCHEMA_DIR)
    args = parser.parse_args(argv)
    if not args.check:
        for path in write(args.directory):
            print(f"wrote {path}")
        return 0
    for name in (drift := stale(args.directory)):
        print(
            f"stale: {args.directory / name} (run python -m learnstream.streams.encoding.schemas)",
            file=sys.stderr,
        )
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
