"""Checks before anything starts: some broker answers, the web port is free. One line if not."""

from __future__ import annotations

import errno
import socket

from learnstream.streams.config.usererrors import UserError

__all__ = ["PORT_TAKEN", "check_broker", "check_port_free"]

#: What the error of a port another program holds says (the worker's own starter looks for it).
PORT_TAKEN = "is already in use by another program"


def _hosts(url: str) -> list[tuple[str, int]]:
    hosts = []
    for item in url.replace(";", ",").split(","):
        host, _, port = item.removeprefix("kafka://").rstrip("/").rpartition(":")
        hosts.append((host.strip("[]"), int(port)) if host else (port.strip("[]"), 9092))
    return hosts


def check_broker(
    url: str, variable: str, *, embedded_hint: bool = False, timeout: float = 5.0
) -> None:
    """Raise UserError unless some broker of ``url`` accepts a TCP connection."""
    reasons: list[str] = []
    for host, port in _hosts(url):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return
        except socket.gaierror:
            reasons.append(f"{host}: unknown host")
        except TimeoutError:
            reasons.append(f"{host}:{port}: no answer in {timeout:g} s")
        except OSError as exc:
            reasons.append(f"{host}:{port}: {(exc.strerror or 'cannot connect').lower()}")
    hint = ", or unset it to start the embedded broker" if embedded_hint else ""
    raise UserError(f"cannot reach the Kafka broker ({'; '.join(reasons)}): check {variable}{hint}")


def check_port_free(host: str, port: int, variable: str) -> None:
    """Raise UserError if ``host:port`` cannot be listened on (taken, or not our address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # asyncio (and so Faust's web server) binds with SO_REUSEADDR: do the same.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UserError(f"port {port} {PORT_TAKEN}: set {variable} to a free port") from exc
            raise UserError(
                f"cannot listen on {host}:{port} ({(exc.strerror or 'error').lower()}): "
                f"set {variable} or LEARNSTREAM_WEB_HOST"
            ) from exc
