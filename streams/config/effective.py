"""What ``learnstream config`` prints: every effective value once, as the user writes it."""

from __future__ import annotations

import json
import shlex
from typing import Any

from learnstream.streams.config.settings import Settings

__all__ = ["effective", "env_lines"]

_UNSET_BROKER = "  # unset: `learnstream worker` starts the embedded broker"


def effective(settings: Settings) -> dict[str, Any]:
    """Return the settings as JSON data: secrets masked, durations as typed, broker URL once.

    ``LEARNSTREAM_BROKER_URL`` and ``LEARNSTREAM_BROKER__URL`` set the same thing; only
    the value in force is shown, as ``broker.url``.
    """
    data: dict[str, Any] = json.loads(settings.model_dump_json(exclude={"broker_url"}))
    data["broker"]["url"] = settings.kafka_url
    return data


def _flatten(name: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for key, item in value.items() for pair in _flatten(f"{name}__{key}", item)]
    return [(name.upper(), value)]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return json.dumps(value)
    return "" if value is None else str(value)


def _quoted(value: Any) -> str:
    text = _shown(value)
    return shlex.quote(text) if text else ""


def env_lines(settings: Settings) -> list[str]:
    """Return ``LEARNSTREAM_NAME=value`` lines, ready to paste into a shell or ``.env``."""
    lines = []
    for name, value in _flatten("LEARNSTREAM", effective(settings)):
        name = name.replace("LEARNSTREAM__", "LEARNSTREAM_", 1)
        if name == "LEARNSTREAM_BROKER__URL":  # the spelling the README and errors use
            name = "LEARNSTREAM_BROKER_URL"
        unset = _UNSET_BROKER if name == "LEARNSTREAM_BROKER_URL" and value is None else ""
        lines.append(f"{name}={_quoted(value)}{unset}")
    return lines
