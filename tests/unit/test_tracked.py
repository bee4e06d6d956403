"""The tracked-files helper lists the same files with or without git (an unpacked archive)."""

from __future__ import annotations

import subprocess

import pytest

from tests.support import tracked


def test_without_git_the_tree_walk_finds_the_tracked_files(monkeypatch: pytest.MonkeyPatch) -> None:
    with_git = set(tracked._listed())

    def no_git(*args: object, **kwargs: object) -> None:
        raise OSError("git: not found")

    monkeypatch.setattr(subprocess, "run", no_git)
    walked = set(tracked._listed())
    assert "tests/support/tracked.py" in walked
    assert ".ci/run" in walked
    assert not any(name.startswith((".venv/", ".git/", ".pytest_cache/")) for name in walked)
    assert {name for name in with_git if (tracked.ROOT / name).is_file()} <= walked
