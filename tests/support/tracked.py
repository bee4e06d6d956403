"""The repository's tracked text files, for tests that check what every file says."""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Directories a tree that is not a git checkout (an unpacked archive) may hold that are not
#: the project's: what .gitignore names, and hidden ones (caches, .git) but CI's.
_UNTRACKED_DIRS = {"__pycache__", "build", "dist", "target"}
_TRACKED_HIDDEN = {".ci", ".github"}


def _listed() -> list[str]:
    """Return the tracked files' paths; without git or a checkout, every file of the tree
    outside the directories that are not the project's."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        return list(filter(None, out.decode().split("\0")))
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for path in ROOT.rglob("*"):
        *dirs, _ = path.relative_to(ROOT).parts
        if any(_untracked(d) for d in dirs):
            continue
        names.append(path.relative_to(ROOT).as_posix())
    return names


def _untracked(directory: str) -> bool:
    hidden = directory.startswith(".") and directory not in _TRACKED_HIDDEN
    return hidden or directory in _UNTRACKED_DIRS or directory.endswith(".egg-info")


@cache
def tracked_texts() -> dict[str, str]:
    """Return {path: text} of every tracked text file: links (learnstream/'s), files deleted
    in this checkout and binary files are left out."""
    texts: dict[str, str] = {}
    for name in sorted(_listed()):
        path = ROOT / name
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data:
            texts[name] = data.decode("utf-8", errors="replace")
    return texts
