"""Errors a user can cause, each said in one line: the cause and what to change.

A setting is named by the variable the user wrote (``LEARNSTREAM_JOIN__GRACE``), never by
pydantic's path (``join.grace``), and its value is never repeated back: it may be a secret.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_settings import SettingsError

__all__ = ["UserError", "env_name", "settings_problem"]

_PREFIX = "LEARNSTREAM_"
_WHAT = {
    "time_delta_parsing": "is not a duration: write seconds (90) or 250ms, 5m, 1h",
    "time_delta_type": "is not a duration: write seconds (90) or 250ms, 5m, 1h",
    "int_parsing": "must be a whole number",
    "float_parsing": "must be a number",
    "bool_parsing": "must be true or false",
    "extra_forbidden": "is not a setting",
}


class UserError(Exception):
    """Raise with one line that names the cause and the variable or option to change."""


def env_name(loc: tuple[int | str, ...]) -> str:
    """Return the environment variable that sets the field at pydantic location ``loc``."""
    return _PREFIX + "__".join(str(part) for part in loc if isinstance(part, str)).upper()


def _section_fields(loc: tuple[int | str, ...]) -> list[str]:
    from learnstream.streams.config.settings import Settings

    model: Any = Settings
    for part in loc[:-1]:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None or not isinstance(field.annotation, type):
            return []
        model = field.annotation
    return sorted(model.model_fields) if issubclass(model, BaseModel) else []


def _one(error: Any) -> str:
    loc, kind, ctx = tuple(error["loc"]), error["type"], error.get("ctx") or {}
    if kind == "settings_conflict":  # a whole line already, naming every variable involved
        return str(error["msg"])
    if kind == "extra_forbidden":
        known = ", ".join(_section_fields(loc))
        return f"{env_name(loc)} is not a setting (this section has: {known})"
    if kind == "literal_error":
        return f"{env_name(loc)} must be {ctx.get('expected', 'one of the documented values')}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = {"greater_than_equal": ">=", "greater_than": ">", "less_than": "<"}
        return f"{env_name(loc)} must be {bound.get(kind, '<=')} {next(iter(ctx.values()))}"
    if kind == "value_error":
        return f"{env_name(loc)} {str(ctx.get('error', 'is not valid'))}"
    what = _WHAT.get(kind) or str(error["msg"]).replace("Input should be", "must be")
    return f"{env_name(loc)} {what}"


def _json_problem(exc: SettingsError) -> str:
    """Name the variable pydantic-settings could not parse as JSON (lists, tables)."""
    from learnstream.streams.config.settings import Settings

    match = re.search(r'field "(\w+)"', str(exc))
    field = match[1] if match else ""
    section = Settings.model_fields.get(field)
    names = [f"{_PREFIX}{field.upper()}"]
    model = section.annotation if section is not None else None
    if isinstance(model, type) and issubclass(model, BaseModel):
        for name, info in model.model_fields.items():
            if get_origin(info.annotation) in (tuple, list, dict, set):
                names.append(f"{_PREFIX}{field.upper()}__{name.upper()}")
    bad = [name for name in names if name in os.environ and not _is_json(os.environ[name])]
    return (
        f"{(bad or names)[0]} is not valid JSON: lists are written as JSON, "
        """e.g. '["*.secret", "*.env"]'"""
    )


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def settings_problem(exc: ValidationError | SettingsError) -> str:
    """Return one line saying which variable is wrong and what it accepts."""
    if isinstance(exc, SettingsError):
        return _json_problem(exc)
    problems = [_one(error) for error in exc.errors()]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more
