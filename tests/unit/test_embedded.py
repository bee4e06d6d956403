"""The embedded broker wrapper finds its binary or says clearly what to do."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from learnstream.streams.config.settings import BrokerSettings, Settings
from learnstream.streams.io.app import one_record_per_batch
from learnstream.streams.io.embedded import (
    ENV_BINARY,
    EmbeddedBrokerError,
    die_with_parent,
    find_binary,
)


def test_override_that_is_not_executable_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_BINARY, str(tmp_path / "nope"))
    with pytest.raises(EmbeddedBrokerError, match=ENV_BINARY):
        find_binary()


def test_bundled_binary_is_found(monkeypatch):
    monkeypatch.delenv(ENV_BINARY, raising=False)
    assert find_binary().endswith(tuple(["tansu", "tansu-v0.6.0-510f3e2"]))


@pytest.mark.parametrize(
    ("forced", "embedded", "expected"),
    [(None, True, True), (None, False, False), (False, True, False), (True, False, True)],
)
def test_one_record_per_batch_follows_the_broker(forced, embedded, expected):
    settings = Settings(broker=BrokerSettings(one_record_per_batch=forced))
    assert one_record_per_batch(settings, embedded) is expected


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def test_a_child_armed_with_die_with_parent_dies_when_its_parent_is_killed(tmp_path):
    """kill -9 of the parent: the kernel signals the child (nothing else could)."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, time\n"
            "from learnstream.streams.io.embedded import die_with_parent\n"
            "child = subprocess.Popen(['sleep', '600'], preexec_fn=die_with_parent())\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    # Alive in any state: "D" (disk wait) is common while exec pages the binary in.
    assert _state(child) not in ("Z", "X", "gone")
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while _state(child) not in ("Z", "X", "gone") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(child) in ("Z", "X", "gone")  # a zombie is dead, waiting for init to reap it


def test_die_with_parent_is_a_preexec_function_on_linux():
    arm = die_with_parent(signal.SIGTERM)
    assert callable(arm) is sys.platform.startswith("linux")
