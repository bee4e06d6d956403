"""A worker with every agent wired, run through ``test_context`` (no broker): its clock set
by the test, its outputs mocked, records fed as Kafka would deliver them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest.mock import AsyncMock

import orjson

from learnstream.agents.runtime import Runtime
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app
from tests.support.apps import close_consumer_loop
from tests.support.clock import SettableClock
from tests.support.offsets import FakeEnds
from tests.support.outputs import Feed, mock_outputs

__all__ = ["RunningWorker", "sent_samples", "running_worker"]

#: (runtime, output mocks by Topics field, feed, clock)
RunningWorker = tuple[Runtime, dict[str, AsyncMock], Feed, SettableClock]


@asynccontextmanager
async def running_worker(tmp_path: Path, now: datetime) -> AsyncIterator[RunningWorker]:
    """Yield a wired worker writing JSON samples, its clock at ``now``; stop it after."""
    settings = Settings(store="memory://", sample_format="json", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    clock = SettableClock(now)
    runtime = wire(app, settings, ends=FakeEnds(), clock=clock)
    mocks = mock_outputs(app, runtime, "samples", "dlq", "events")
    try:
        yield runtime, mocks, Feed(app), clock
    finally:
        close_consumer_loop(app)


def sent_samples(mocks: dict[str, AsyncMock]) -> list[dict[str, Any]]:
    """Return the JSON samples sent so far, in order."""
    return [orjson.loads(c.kwargs["value"]) for c in mocks["samples"].await_args_list]
