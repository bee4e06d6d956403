"""Turn a sample's ``input`` / ``output`` into a prompt and a completion for trainers. Pure.

A *formatter* is any function ``(family, input, output) -> (prompt, completion)`` returning
plain text. ``learnstream export --formatter module:function`` replaces the default one;
``--chat`` wraps what it returns into user / assistant ``messages``. Preference pairs use it
too: the prompt from the pair's ``prompt`` object, each side rendered as a completion.

The default, per family (a field it needs but the sample lacks: that part as JSON):

- intent_resolution: ``input.intent_text`` -> ``output.plan_title`` + ``plan_structure``
- error_correction: ``input.plan_state`` (if any) + ``change_summary`` -> ``output.result``
- confirm_decision: the confirm request -> ``output.decision`` + ``reasoning``
- pipeline_outcome: ``input.objective`` -> ``output.result``
- delta_impact: ``input.change_summary`` -> ``output.actual_impact_summary``
- dialog_response: ``input.prompt`` -> ``output.response``
- anything else: ``input`` -> ``output``, as JSON.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "Formatter",
    "FormatterError",
    "default_formatter",
    "load_formatter",
    "messages",
    "render_completion",
    "render_prompt",
]

Formatter = Callable[[str, Mapping[str, Any], Mapping[str, Any]], tuple[str, str]]


class FormatterError(ValueError):
    """Signal that ``--formatter`` does not name a usable function."""


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render_prompt(family: str, inp: Mapping[str, Any]) -> str:
    """Return the default plain-text prompt of a family's ``input``."""
    if family == "intent_resolution" and "intent_text" in inp:
        return _json(inp["intent_text"])
    if family == "error_correction" and "change_summary" in inp:
        plan = f"Plan:\n{_json(inp['plan_state'])}\n" if "plan_state" in inp else ""
        return f"{plan}Correction requested: {_json(inp['change_summary'])}"
    if family == "confirm_decision":
        return f"Approve or reject this plan confirmation request:\n{_json(dict(inp))}"
    if family == "pipeline_outcome" and "objective" in inp:
        return _json(inp["objective"])
    if family == "delta_impact" and "change_summary" in inp:
        return _json(inp["change_summary"])
    if family == "dialog_response" and "prompt" in inp:
        return _json(inp["prompt"])
    return _json(dict(inp))


def render_completion(family: str, out: Mapping[str, Any]) -> str:
    """Return the default plain-text completion of a family's ``output``."""
    if family == "intent_resolution" and "plan_title" in out:
        return f"{_json(out['plan_title'])}\n{_json(out.get('plan_structure', []))}"
    if family in ("error_correction", "pipeline_outcome") and "result" in out:
        return _json(out["result"])
    if family == "confirm_decision" and "decision" in out:
        reason = out.get("reasoning", out.get("reason"))
        return f"{out['decision']}: {_json(reason)}" if reason else _json(out["decision"])
    if family == "delta_impact" and "actual_impact_summary" in out:
        return _json(out["actual_impact_summary"])
    if family == "dialog_response" and "response" in out:
        return _json(out["response"])
    return _json(dict(out))


def default_formatter(
    family: str, inp: Mapping[str, Any], out: Mapping[str, Any]
) -> tuple[str, str]:
    """Return the default (prompt, completion) of a sample, as plain text."""
    return render_prompt(family, inp), render_completion(family, out)


def messages(role: str, content: str) -> list[dict[str, str]]:
    """Return one chat turn as TRL's conversational format reads it."""
    return [{"role": role, "content": content}]


def load_formatter(spec: str) -> Formatter:
    """Return the function named ``module:function`` (importable from the current path)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise FormatterError("--formatter must be written module:function (e.g. mypkg.fmt:render)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise FormatterError(f"--formatter: cannot import module {module_name}") from exc
    function = getattr(module, attr, None)
    if not callable(function):
        raise FormatterError(f"--formatter: {module_name} has no function {attr}")
    return _checked(function, spec)


def _checked(function: Callable[..., Any], spec: str) -> Formatter:
    """Wrap a user formatter so a wrong return type is a clear error, not a broken file."""

    def formatter(family: str, inp: Mapping[str, Any], out: Mapping[str, Any]) -> tuple[str, str]:
        result = function(family, inp, out)
        if not (
            isinstance(result, tuple)
            and len(result) == 2
            and all(isinstance(r, str) for r in result)
        ):
            raise FormatterError(f"--formatter {spec} must return (prompt, completion) strings")
        return result[0], result[1]

    return formatter
