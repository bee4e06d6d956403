"""Opt-out: drop keys and file paths that match user globs before anything leaves."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fnmatch import translate
from functools import lru_cache
from typing import Any

__all__ = ["OPTED_OUT", "strip_opted_out"]

#: What an opted-out path held by a dict key becomes: the key stays, so required fields
#: (an intent text that *is* a path) keep the sample schema-valid.
OPTED_OUT = "<OPTED_OUT>"

_WHITESPACE = re.compile(r"\s")


#: Never matches: what no glob compiles to.
_NOTHING = re.compile(r"(?!)")


@lru_cache(maxsize=64)
def _compile(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Compile the lower-cased globs once into one regex (fnmatch semantics)."""
    globs = [translate(p.lower()) for p in patterns if p]
    return re.compile("|".join(globs)) if globs else _NOTHING


def _matches(name: str, globs: re.Pattern[str]) -> bool:
    """Tell whether a name matches a glob on its full string or its basename."""
    full = name.replace("\\", "/").lower()
    if globs.match(full):
        return True
    base = full.rstrip("/").rsplit("/", 1)[-1]
    return base != full and globs.match(base) is not None


def _is_opted_out_path(value: Any, globs: re.Pattern[str]) -> bool:
    """Tell whether a value is a path-like string matching a glob.

    Path-like means single-line and either without whitespace or containing a separator,
    so prose such as "please fix the .env" is kept while "My Docs/prod.secret" is dropped.
    """
    if not isinstance(value, str) or not value or "\n" in value:
        return False
    path_like = "/" in value or "\\" in value or not _WHITESPACE.search(value)
    return path_like and _matches(value, globs)


def _strip(obj: Any, globs: re.Pattern[str]) -> Any:
    """Return a deep copy of obj without opted-out keys, values and list items."""
    if isinstance(obj, dict):
        return {
            k: OPTED_OUT if _is_opted_out_path(v, globs) else _strip(v, globs)
            for k, v in obj.items()
            if not (isinstance(k, str) and _matches(k, globs))
        }
    if isinstance(obj, list | tuple):
        kept = [_strip(v, globs) for v in obj if not _is_opted_out_path(v, globs)]
        return tuple(kept) if isinstance(obj, tuple) else kept
    return obj


def strip_opted_out(obj: Any, patterns: Sequence[str]) -> Any:
    """Return a deep copy of obj with every key or file path matching a glob removed.

    Globs use fnmatch, case-insensitively, against the full string and its basename:
    ``"config/.env"`` matches ``"*.env"``. Dict keys that match are dropped with their
    subtree; path-like string values that match become ``OPTED_OUT``, list items are removed.
    """
    return _strip(obj, _compile(tuple(patterns)))
