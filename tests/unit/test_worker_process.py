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
