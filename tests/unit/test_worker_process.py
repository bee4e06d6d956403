"""The worker starter picks another web port when another program took the one it picked
(free_port finds a port free now; a busy machine may bind it before the worker does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from learnstream.streams.io.preflight import PORT_TAKEN
from learnstream.streams.io.worker_process import WorkerProcess


def _taken_once(worker: WorkerProcess, ports: list[int]) -> None:
    def start(timeout: float) -> WorkerProcess:
        ports.append(worker.web_port)
        if len(ports) == 1:
            raise RuntimeError(f"worker exited with 1:\nError: port {ports[0]} {PORT_TAKEN}: ...")
        return worker

    worker._start = start  # type: ignore[method-assign]


def test_a_port_picked_here_and_taken_meanwhile_is_replaced(tmp_path: Path) -> None:
    worker, ports = WorkerProcess({}, tmp_path / "w.log"), []
    _taken_once(worker, ports)
    assert worker.start() is worker
    assert len(ports) == 2
    assert ports[0] != ports[1]
    assert worker.web_port == ports[1]


def test_a_port_the_caller_chose_is_never_replaced(tmp_path: Path) -> None:
    worker, ports = WorkerProcess({"LEARNSTREAM_WEB_PORT": "6066"}, tmp_path / "w.log"), []
    _taken_once(worker, ports)
    with pytest.raises(RuntimeError, match=PORT_TAKEN):
        worker.start()
    assert ports == [6066]


def test_a_port_taken_after_the_check_is_replaced_though_the_stop_hid_the_error(
    tmp_path: Path,
) -> None:
    """The worker checked its port, another program bound it, and the web server's bind
    failed seconds later; the stop's lines pushed that error out of the log's tail the
    exception carries (CI, 2 Dec: the test failed instead of starting again)."""
    log = tmp_path / "w.log"
    worker, ports = WorkerProcess({}, log), []

    def start(timeout: float) -> WorkerProcess:
        worker.starts += 1
        ports.append(worker.web_port)
        if len(ports) > 1:
            return worker
        bind = (
            '[ERROR] [^Worker]: Error: OSError(98, "error while attempting to bind on address '
            f"('127.0.0.1', {worker.web_port}): address already in use\")\n"
        )
        stopping = "".join(f"[INFO] [^--Service{i}]: Stopping...\n" for i in range(200))
        log.write_text(f"=== start {worker.starts} ===\n{bind}{stopping}")
        raise RuntimeError(f"worker exited with 1:\n{log.read_text()[-4000:]}")

    worker._start = start  # type: ignore[method-assign]
    assert worker.start() is worker
    assert len(ports) == 2
    assert ports[0] != ports[1]


def test_another_bind_error_is_not_taken_for_the_web_port(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    worker = WorkerProcess({}, log)
    other = worker.web_port + 1
    log.write_text(
        "=== start 1 ===\nerror while attempting to bind on address "
        f"('127.0.0.1', {other}): address already in use\n"
    )
    worker.starts = 1
    assert not worker._port_taken(RuntimeError("worker exited with 1"))
