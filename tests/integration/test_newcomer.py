"""A newcomer's first hour: install, `make demo` on a busy machine, stopping it, crashes.

Each test does what the README tells a new user to do and checks what they would see:
no warning at install, a demo that runs when port 6066 is taken and leaves nothing behind,
and no embedded broker left running when whatever started it dies.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from learnstream.streams.io.embedded import free_port
from learnstream.streams.io.worker_process import WorkerProcess

# One test holds port 6066 busy and runs a demo that must move off it; the others' demos and
# builds are heavy: under make test's parallel processes the module runs in one process.
# 8 minutes: a package build into two venvs waits up to 300 s for pip alone.
pytestmark = [
    pytest.mark.integration,
    pytest.mark.xdist_group("port-6066"),
    pytest.mark.timeout(480),
]

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(
    r"learnstream demo ran \d+ s\n"
    r"  events in     (?P<events>\d+)\n"
    r"  samples out   (?P<samples>\d+): (?P<families>[a-z_ 0-9,]+)\n"
    r"  dead letters  \d+.*\n"
    r"  left behind   nothing \(worker, broker, temp folder removed\)\n"
)


def _clean_env(tmp: Path) -> dict[str, str]:
    """Return the environment of a shell with no LEARNSTREAM_* set and its own TMPDIR."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNSTREAM_")}
    tmp.mkdir(exist_ok=True)
    return env | {"TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"}


def _alive_with(marker: str) -> list[int]:
    """Return the live (not zombie) processes whose environment contains ``marker``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and marker.encode() in (entry / "environ").read_bytes():
                pids.append(int(entry.name))
    return pids


@contextlib.contextmanager
def _listener(port: int) -> Iterator[None]:
    """Hold ``port`` on 127.0.0.1 like another program would (skipping if it already is)."""
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        with contextlib.suppress(OSError):  # already taken by someone else: just as busy
            sock.bind(("127.0.0.1", port))
            sock.listen()
        yield
    finally:
        sock.close()


def _wait_for_metrics(proc: subprocess.Popen[str], out: Path, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"metrics: (http://\S+/metrics)", out.read_text())
        if found and "worker ready: " in out.read_text():
            with contextlib.suppress(OSError):
                urllib.request.urlopen(found[1], timeout=2).close()  # noqa: S310 - our URL
                return found[1]
        assert proc.poll() is None, out.read_text()
        time.sleep(0.5)
    raise AssertionError(f"the demo's worker never served /metrics:\n{out.read_text()}")


def _demo(env: dict[str, str], out: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "learnstream", "demo", "--rate", "10", *args],
        env=env,
        stdout=out.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, like a shell job
    )


def test_demo_on_a_busy_6066_picks_a_port_and_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
    env, out = _clean_env(tmp_path / "tmp"), tmp_path / "demo.out"
    with _listener(6066):
        proc = _demo(env, out)
        try:
            url = _wait_for_metrics(proc, out)
            time.sleep(10)  # samples flow
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: whole group
            assert proc.wait(timeout=90) == 0
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
    text = out.read_text()
    assert text.startswith("metrics: http://127.0.0.1:")
    assert "(port 6066 is busy; LEARNSTREAM_WEB_PORT picks one)" in text.splitlines()[0]
    assert ":6066/" not in url
    summary = SUMMARY.search(text)
    assert summary, text[-3000:]
    assert int(summary["events"]) > 0
    assert int(summary["samples"]) > 0
    assert "intent_resolution" in summary["families"]
    for noise in ("Traceback", "KafkaConnectionError", "Unable to", "Errno"):
        assert noise not in text
    assert list((tmp_path / "tmp").iterdir()) == []  # no learnstream-demo-* folder
    assert _alive_with(f"TMPDIR={tmp_path / 'tmp'}") == []  # no worker, no broker


def test_demo_stopped_with_sigterm_prints_its_summary(tmp_path: Path) -> None:
    env, out = _clean_env(tmp_path / "tmp"), tmp_path / "demo.out"
    proc = _demo(env, out, "--web-port", str(free_port()))
    try:
        _wait_for_metrics(proc, out)
        proc.send_signal(signal.SIGTERM)  # only the demo: it must stop its children itself
        assert proc.wait(timeout=90) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    text = out.read_text()
    assert "stopping the worker and the embedded broker..." in text
    assert re.search(r"learnstream demo ran \d+ s\n  events in     \d+\n", text), text[-2000:]
    assert list((tmp_path / "tmp").iterdir()) == []
    assert _alive_with(f"TMPDIR={tmp_path / 'tmp'}") == []


def test_demo_refuses_a_busy_port_the_user_chose_in_one_line(tmp_path: Path) -> None:
    port = free_port()
    env = _clean_env(tmp_path / "tmp") | {"LEARNSTREAM_WEB_PORT": str(port)}
    with _listener(port):
        done = subprocess.run(
            [sys.executable, "-m", "learnstream", "demo", "--duration", "1"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr == (
        f"Error: port {port} is already in use by another program: "
        "set LEARNSTREAM_WEB_PORT to a free port\n"
    )
    assert list((tmp_path / "tmp").iterdir()) == []


def _children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    kids = (t / "children" for t in tasks.iterdir())
    return [int(k) for path in kids for k in path.read_text().split()]


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is dead, waiting to be reaped


def test_kill_9_of_a_worker_takes_its_embedded_broker_down(tmp_path: Path) -> None:
    env = _clean_env(tmp_path / "tmp") | {"LEARNSTREAM_DATA_DIR": str(tmp_path / "data")}
    worker = WorkerProcess(env, tmp_path / "worker.log").start()
    assert worker.proc is not None
    brokers = [
        pid
        for pid in _children(worker.proc.pid)
        if "tansu" in Path(f"/proc/{pid}/cmdline").read_text()
    ]
    assert len(brokers) == 1, worker.log()
    worker.kill()
    deadline = time.monotonic() + 10
    while not _gone(brokers[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(brokers[0]), "the embedded broker outlived its worker"


README_EXAMPLE = "<!-- tests/integration/test_newcomer.py runs this block as it is -->"


def _readme_example() -> str:
    after = (ROOT / "README.md").read_text().split(README_EXAMPLE, 1)[1]
    return after.split("```python\n", 1)[1].split("```\n", 1)[0]


# The sample that example makes is shown in docs/runtimes.md, the first JSON block after this.
SAMPLE_SHOWN = (
    "<!-- tests/integration/test_newcomer.py checks that the README's example makes this sample -->"
)


def _shown_sample() -> str:
    after = (ROOT / "docs" / "runtimes.md").read_text().split(SAMPLE_SHOWN, 1)[1]
    return after.split("```json\n", 1)[1].split("```")[0]


def _json_objects(text: str) -> list[dict[str, object]]:
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        value, end = decoder.raw_decode(text, at)
        found.append(value)
        at = text.find("{", end)
    return found


def test_the_readme_example_runs_and_makes_the_sample_it_shows(broker, tmp_path: Path) -> None:
    """The publisher snippet, unchanged, against a worker on the default topic names."""
    env = {
        "LEARNSTREAM_BROKER_URL": broker.url,
        "LEARNSTREAM_BROKER__ONE_RECORD_PER_BATCH": "true" if broker.embedded else "false",
        "LEARNSTREAM_APP_ID": "ls-readme-example",
        "LEARNSTREAM_DATA_DIR": str(tmp_path / "data"),
    }
    script = tmp_path / "publish_example.py"
    script.write_text(_readme_example())
    worker = WorkerProcess(env, tmp_path / "worker.log").start()
    try:
        done = subprocess.run(
            [sys.executable, str(script)],
            env=os.environ | {"BOOTSTRAP": broker.bootstrap},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        worker.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PublisherStats(accepted=2, sent=2, dropped=0, failed=0)")
    samples = {s["sample_family"]: s for s in _json_objects(done.stdout)}
    assert set(samples) == {"confirm_decision", "intent_resolution"}
    shown = json.loads(_shown_sample())
    made = samples["intent_resolution"]
    for key in ("sample_id", "input", "output", "state", "feedback"):
        assert made[key] == shown[key], key  # the docs show what really comes out
    assert "ana@example.com" not in done.stdout
    assert "415 555 0100" not in done.stdout


def test_kill_9_of_the_demo_leaves_no_process_running(tmp_path: Path) -> None:
    """Nothing can clean up after SIGKILL but the kernel: worker and broker die with it."""
    env, out = _clean_env(tmp_path / "tmp"), tmp_path / "demo.out"
    proc = _demo(env, out, "--web-port", str(free_port()))
    marker = f"TMPDIR={tmp_path / 'tmp'}"
    try:
        _wait_for_metrics(proc, out)
        assert len(_alive_with(marker)) == 3  # demo, broker, worker
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while _alive_with(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive_with(marker) == []
    finally:
        for pid in _alive_with(marker):  # only the processes this test started
            os.kill(pid, signal.SIGKILL)
