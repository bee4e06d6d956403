"""A fixture for unit tests that wire the whole app: default settings, no connection."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

__all__ = ["isolated"]


def _no_network(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("network access attempted")


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use default settings whatever the shell exported, and never open a connection."""
    for name in list(os.environ):
        if name.startswith("LEARNSTREAM_"):
            monkeypatch.delenv(name)
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
