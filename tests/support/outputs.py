"""A stand-in for the worker's producer in agent tests: records sends, one mock per topic."""

from __future__ import annotations

from typing import Any
from unittest.mock import AsyncMock

import faust

from agents.runtime import Runtime

__all__ = ["mock_outputs"]


class _RecordingProducer:
    """Route ``send`` to the mock of the destination topic (key/value/headers as kwargs)."""

    def __init__(self, by_topic: dict[str, AsyncMock]) -> None:
        self.by_topic = by_topic

    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int | None,
        timestamp: float | None,
        headers: Any,
        *,
        transactional_id: str | None = None,
    ) -> Any:
        mock = self.by_topic.get(topic)
        if mock is None:
            raise AssertionError(f"unexpected send to {topic}")
        return await mock(key=key, value=value, headers=headers)


def mock_outputs(app: faust.App, runtime: Runtime) -> dict[str, AsyncMock]:
    """Replace the producer's ``send`` (table changelogs still go to Faust's own buffer);
    return the mocks of the samples, events and DLQ topics."""
    mocks = {name: AsyncMock(return_value=None) for name in ("samples", "events", "dlq")}
    by_topic = {getattr(runtime.topics, n).get_topic_name(): m for n, m in mocks.items()}
    app.producer.send = _RecordingProducer(by_topic).send  # type: ignore[method-assign]
    return mocks
