"""Summarise a worker's cProfile stats: where the event loop's time went."""

from __future__ import annotations

import pstats
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["hot_spots"]

_ROOT = Path(__file__).resolve().parents[1]
_OURS = ("streams", "agents")
_Func = tuple[str, int, str]


def _relative(path: str) -> tuple[str, ...]:
    """Return the path's parts from its package root (project, site-packages or stdlib)."""
    file = Path(path)
    if file.is_relative_to(_ROOT) and ".venv" not in file.parts:
        return _ours(file.relative_to(_ROOT).parts)
    for anchor in ("site-packages", "python3.11", "python3.12", "python3.13"):
        if anchor in file.parts:
            return _ours(file.parts[file.parts.index(anchor) + 1 :])
    return file.parts[-2:]


def _ours(parts: tuple[str, ...]) -> tuple[str, ...]:
    """Drop the ``learnstream/`` the installed code is imported through: streams/io/app.py."""
    return parts[1:] if parts[:1] == ("learnstream",) and len(parts) > 2 else parts


def _name(func: _Func) -> str:
    """Return ``package/module.py:line(function)`` for a pstats function key."""
    path, line, name = func
    return name if path == "~" else f"{'/'.join(_relative(path))}:{line}({name})"


def _package(func: _Func) -> str:
    """Return the top-level package a function belongs to (C built-ins grouped apart)."""
    path, _line, name = func
    if path == "~":
        return "idle: epoll wait" if "epoll" in name else "C built-ins (isinstance, sockets, re...)"
    return _relative(path)[0].removesuffix(".py")


def _row(func: _Func, stat: tuple[Any, ...], total: float) -> dict[str, Any]:
    calls, _prim, tottime, cumtime, _callers = stat
    return {
        "function": _name(func),
        "calls": calls,
        "self_s": round(tottime, 2),
        "self_pct": round(100 * tottime / total, 1),
        "cum_s": round(cumtime, 2),
        "cum_pct": round(100 * cumtime / total, 1),
    }


def hot_spots(path: Path, top: int = 15) -> dict[str, Any]:
    """Return the profile's total and idle time, self time per package, and the top functions."""
    stats: dict[_Func, tuple[Any, ...]] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    total = sum(s[2] for s in stats.values()) or 1e-9
    packages: Counter[str] = Counter()
    for func, stat in stats.items():
        packages[_package(func)] += stat[2]
    by_self = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    ours = [(f, s) for f, s in stats.items() if f[0] != "~" and _relative(f[0])[0] in _OURS]
    by_cum = sorted(ours, key=lambda kv: kv[1][3], reverse=True)[:top]
    return {
        "profiled_s": round(total, 1),
        "idle_s": round(packages["idle: epoll wait"], 1),
        "packages": [
            {"package": p, "self_s": round(t, 2), "self_pct": round(100 * t / total, 1)}
            for p, t in packages.most_common(top)
        ],
        "self": [_row(f, s, total) for f, s in by_self],
        "ours_cumulative": [_row(f, s, total) for f, s in by_cum],
    }
