"""Run ``learnstream worker`` as a child process (the demo, tests, benchmarks)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from learnstream.streams.io.embedded import die_with_parent, free_port
from learnstream.streams.io.preflight import PORT_TAKEN

__all__ = ["WorkerProcess"]


class WorkerProcess:
    """A worker subprocess with its own log file; stop() always reaps it."""

    def __init__(
        self, env: dict[str, str], log_path: Path, *, stop_with_parent: bool = False
    ) -> None:
        """Prepare a worker; ``stop_with_parent`` SIGKILLs it when this process dies (Linux).

        SIGKILL, not SIGTERM: a parent that dies takes its embedded broker along, and a
        worker shutting down gracefully would wait for that broker forever. Only for a
        parent that starts it from its main thread (see ``die_with_parent``).
        """
        self.stop_with_parent = stop_with_parent
        #: The web port was picked here: another program may take it before the worker binds
        #: it (free_port only finds one free now), and then another one is picked.
        self.own_port = "LEARNSTREAM_WEB_PORT" not in env
        self.env = {
            **os.environ,
            **env,
            "LEARNSTREAM_WEB_PORT": env.get("LEARNSTREAM_WEB_PORT", str(free_port())),
        }
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def web_port(self) -> int:
        """Return the port of the worker's /metrics."""
        return int(self.env["LEARNSTREAM_WEB_PORT"])

    def start(self, timeout: float = 90.0) -> WorkerProcess:
        """Start the worker and wait until Faust reports it ready; on a port picked here that
        another program took meanwhile, start it again on another (at most twice)."""
        for _ in range(2):
            try:
                return self._start(timeout)
            except RuntimeError as exc:
                if not self.own_port or not self._port_taken(exc):
                    raise
                self.env["LEARNSTREAM_WEB_PORT"] = str(free_port())
        return self._start(timeout)  # the last try: its error is the caller's

    def _port_taken(self, exc: RuntimeError) -> bool:
        """Tell whether the last start failed because the web port was taken: before the
        worker's check (``PORT_TAKEN``), or after it, when the web server bound the port
        seconds later. The error carries the log's last lines only, and a stop's lines
        can push the bind error out of them: the start's whole log is read."""
        if PORT_TAKEN in str(exc):
            return True
        try:
            since = self._log_since_start()
        except OSError:
            return False
        port = re.escape(str(self.web_port))
        return (
            re.search(rf"bind on address \(.*?, {port}\): address already in use", since)
            is not None
        )

    def _marker(self) -> str:
        """The line written before each start: a restart appends to the same log."""
        return f"=== start {self.starts} ===\n"

    def _log_since_start(self) -> str:
        """Return the log written since the last start's marker."""
        return self.log_path.read_text(errors="replace").rsplit(self._marker(), 1)[-1]

    def _start(self, timeout: float) -> WorkerProcess:
        self.starts += 1
        with open(self.log_path, "a") as log:
            log.write(self._marker())
        out = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child process
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "learnstream", "worker"],
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent() if self.stop_with_parent else None,
            # Ctrl-C in a terminal reaches the whole process group: the parent stops us.
            start_new_session=self.stop_with_parent,
        )
        out.close()
        self._wait_for("[^Worker]: Ready", timeout)
        return self

    def _wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self._log_since_start()
            if text in log:
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"worker exited with {self.proc.returncode}:\n{log[-4000:]}")
            time.sleep(0.2)
        raise TimeoutError(f"worker not ready after {timeout}s:\n{self.log()[-4000:]}")

    def log(self) -> str:
        """Return the worker's log so far."""
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 30.0) -> int | None:
        """Stop the worker with SIGTERM (SIGKILL if it hangs); return its exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        code, self.proc = self.proc.returncode, None
        return code

    def kill(self) -> None:
        """SIGKILL the worker (crash simulation)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
