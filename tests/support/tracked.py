"""The repository's tracked text files, for tests that check what every file says."""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@cache
def tracked_texts() -> dict[str, str]:
    """Return {path: text} of every tracked text file: links (learnstream/'s), files deleted
    in this checkout and binary files are left out. Skips where there is no git checkout."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git or a git checkout is not available: the tracked files cannot be listed")
    texts: dict[str, str] = {}
    for name in sorted(filter(None, out.decode().split("\0"))):
        path = ROOT / name
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data:
            texts[name] = data.decode("utf-8", errors="replace")
    return texts
