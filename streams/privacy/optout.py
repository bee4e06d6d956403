"""Opt-out: drop files, keys and paths that match user globs before anything leaves.

Three rules, applied to every level of a payload (globs are fnmatch, case-insensitive, tried
on the full path and on its basename, with any ``?query``, ``#fragment`` or ``:line`` suffix
cut off, so ``*.env`` matches ``config/.env``, ``file:///srv/.env`` and ``app/.env:12``):

1. A **file object** (a dict with a path field, see :data:`PATH_FIELDS`, naming a matching
   file) goes whole, with its content: removed from a list, its key removed from a dict.
2. A **key** that matches goes with its subtree.
3. A **string**: if it is one path-like token that matches, it is removed from a list or
   becomes :data:`OPTED_OUT` under a key; in longer text, each matching path is replaced by
   :data:`OPTED_OUT`.

The root object itself is never removed: its own path fields become :data:`OPTED_OUT`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fnmatch import translate
from functools import lru_cache
from typing import Any

__all__ = ["OPTED_OUT", "PATH_FIELDS", "strip_opted_out"]

#: What an opted-out path becomes where it cannot simply go.
OPTED_OUT = "<OPTED_OUT>"
#: Keys (case-insensitive) whose string value names the file an object stands for.
PATH_FIELDS: frozenset[str] = frozenset(
    {"path", "file", "filename", "file_name", "file_path", "filepath", "uri", "url", "name"}
)

#: Never matches: what no glob compiles to.
_NOTHING = re.compile(r"(?!)")
#: A path-like token in text: a run without whitespace, quotes or brackets.
_TOKEN = re.compile(r"[^\s\"'`<>()\[\]{},;|]+")
#: Trailing characters that end a sentence or cite a line, not part of a file name.
_SUFFIXES = tuple(re.compile(p) for p in (r"[?#].*$", r"[.:!?]+$", r"(?::\d+)+$", r"[.:!?]+$"))


class _Globs:
    """The compiled globs and the literal text one of them needs to see (a cheap gate)."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        globs = [p.lower() for p in patterns if p]
        self.regex = re.compile("|".join(translate(g) for g in globs)) if globs else _NOTHING
        literals = [max(re.split(r"\*|\?|\[[^\]]*\]", g), key=len) for g in globs]
        # A glob with no literal part (e.g. "*") can match anything: no gate then.
        self.needles = None if not all(literals) else tuple(set(literals))

    def may_match(self, text: str) -> bool:
        """Tell whether text holds a literal part of some glob (else no path in it matches)."""
        if self.needles is None:
            return True
        normalized = text.replace("\\", "/").lower()  # as _matches reads a path
        return any(n in normalized for n in self.needles)


@lru_cache(maxsize=64)
def _compile(patterns: tuple[str, ...]) -> _Globs:
    """Compile the lower-cased globs once (fnmatch semantics)."""
    return _Globs(patterns)


def _matches(name: str, globs: _Globs) -> bool:
    """Tell whether a name matches a glob on its full string or its basename."""
    full = name.replace("\\", "/").lower()
    if globs.regex.match(full):
        return True
    base = full.rstrip("/").rsplit("/", 1)[-1]
    return base != full and globs.regex.match(base) is not None


def _is_opted_out_path(token: str, globs: _Globs) -> bool:
    """Tell whether a path-like token (or it without a suffix) matches a glob."""
    if _matches(token, globs):
        return True
    for suffix in _SUFFIXES:
        token = suffix.sub("", token)
        if token and _matches(token, globs):
            return True
    return False


def _is_path(value: Any, globs: _Globs) -> bool:
    """Tell whether a value is one path-like token that matches a glob."""
    if not isinstance(value, str) or not value or not globs.may_match(value):
        return False
    token = value.strip()
    return bool(token) and _TOKEN.fullmatch(token) is not None and _is_opted_out_path(token, globs)


def _mask(text: str, globs: _Globs) -> str:
    """Return text with every matching path in it replaced by OPTED_OUT."""
    if not globs.may_match(text):
        return text

    def replace(found: re.Match[str]) -> str:
        token = found.group()
        return OPTED_OUT if _is_opted_out_path(token, globs) else token

    return _TOKEN.sub(replace, text)


def _is_file_object(obj: Any, globs: _Globs) -> bool:
    """Tell whether obj is a dict whose path field names a matching file."""
    return isinstance(obj, dict) and any(
        isinstance(k, str) and k.lower() in PATH_FIELDS and _is_path(v, globs)
        for k, v in obj.items()
    )


def _goes(key: Any, value: Any, globs: _Globs) -> bool:
    """Tell whether a dict entry is dropped: its key matches or it is a matching file."""
    return (isinstance(key, str) and _matches(key, globs)) or _is_file_object(value, globs)


def _strip(obj: Any, globs: _Globs) -> Any:
    """Return a deep copy of obj without opted-out files, keys and paths."""
    if isinstance(obj, str):
        return OPTED_OUT if _is_path(obj, globs) else _mask(obj, globs)
    if isinstance(obj, dict):
        return {k: _strip(v, globs) for k, v in obj.items() if not _goes(k, v, globs)}
    if isinstance(obj, list | tuple):
        kept = [
            _strip(v, globs) for v in obj if not (_is_path(v, globs) or _is_file_object(v, globs))
        ]
        return tuple(kept) if isinstance(obj, tuple) else kept
    return obj


def strip_opted_out(obj: Any, patterns: Sequence[str]) -> Any:
    """Return a deep copy of obj with every file, key or path matching a glob removed.

    See the module docstring for the rules; ``obj`` itself is never removed.
    """
    return _strip(obj, _compile(tuple(patterns)))
