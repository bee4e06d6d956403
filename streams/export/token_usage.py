"""The common learning sample's ``token_usage`` from a usage object as a runtime sent it.

Pure. The common schema's object (``common/learning-sample.schema.json``) admits
``total_tokens``, ``prompt_tokens`` and ``completion_tokens`` (numbers >= 0) and ``by_agent``
(``{agent_id, role?, tokens}`` entries), nothing else. A stage's payload is the runtime's
own, so what is kept is only what the schema would accept: a count that is no number or is
negative is left out, an entry without a string ``agent_id`` or a count is left out, a
``role`` that is no string is left out of its entry. The record is never refused for it.

``total_tokens`` is the payload's, else prompt + completion when both are given (the sum
the plan_optimization rule compares too). ``by_agent`` is read from a list of entries or
from a mapping of agent id to a count (or to an entry without its ``agent_id``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from learnstream.streams.samples.parts import present

__all__ = ["token_usage"]

_COUNTS = ("total_tokens", "prompt_tokens", "completion_tokens")


def _count(value: Any) -> int | float | None:
    """Return a token count the schema accepts (a finite number >= 0), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _entry(entry: Any) -> dict[str, Any] | None:
    """Return one ``by_agent`` entry as the schema has it, or None if it cannot be one."""
    if not isinstance(entry, Mapping):
        return None
    agent, tokens, role = entry.get("agent_id"), _count(entry.get("tokens")), entry.get("role")
    if not isinstance(agent, str) or not agent or tokens is None:
        return None
    return present({"agent_id": agent, "role": role if isinstance(role, str) else None}) | {
        "tokens": tokens,
    }


def _keyed(agent: Any, part: Any) -> dict[str, Any]:
    """Return the entry of a mapping's ``agent: count`` or ``agent: {tokens, role}``."""
    return (
        {**part, "agent_id": agent}
        if isinstance(part, Mapping)
        else {"agent_id": agent, "tokens": part}
    )


def _by_agent(value: Any) -> list[dict[str, Any]]:
    """Return the well-formed entries of a list, or of a mapping agent id -> count / entry."""
    if isinstance(value, Mapping):
        value = [_keyed(agent, part) for agent, part in value.items()]
    if not isinstance(value, list):
        return []
    return [entry for item in value if (entry := _entry(item)) is not None]


def token_usage(usage: Any) -> dict[str, Any] | None:
    """Return the common schema's ``token_usage`` of ``usage``; None when nothing of it fits."""
    if not isinstance(usage, Mapping):
        return None
    counts = {name: _count(usage.get(name)) for name in _COUNTS}
    prompt, completion = counts["prompt_tokens"], counts["completion_tokens"]
    if counts["total_tokens"] is None and prompt is not None and completion is not None:
        counts["total_tokens"] = prompt + completion
    return present({**counts, "by_agent": _by_agent(usage.get("by_agent")) or None}) or None
