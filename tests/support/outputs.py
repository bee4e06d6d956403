"""Agent tests: a stand-in for the worker's producer (one mock per topic), and a feed that
delivers input records with the offsets Kafka would give them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any
from unittest.mock import AsyncMock

import faust

from learnstream.agents.runtime import Runtime
from tests.support.offsets import FakeEnds

__all__ = ["AGENT_OF", "Feed", "corrections_end", "mock_outputs"]


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


#: The agent that reads each input topic (the names Feed delivers to).
AGENT_OF = {
    "plans": "plans",
    "plan_approved": "decisions",
    "plan_rejected": "decisions",
    "delta_intents": "deltas",
    "pipeline_stage": "outcomes",
    "consent": "consent",
}


def mock_outputs(app: faust.App, runtime: Runtime, *extra: str) -> dict[str, AsyncMock]:
    """Replace the producer's ``send`` (table changelogs still go to Faust's own buffer);
    return the mocks of the samples, events, DLQ and pairs topics (the pairs miner sees
    every sample sent), then of the ``extra`` topics (``Topics`` field names).

    The runtime is one wired with ``ends=FakeEnds()`` (no broker to ask where the consent
    and corrections topics end): the consent view counts as caught up, and the corrections
    input as read to its end, until the test says otherwise (``corrections_end``).
    """
    names = dict.fromkeys(("samples", "events", "dlq", "pair_intents", "preference_pairs", *extra))
    mocks = {name: AsyncMock(return_value=None) for name in names}
    by_topic = {getattr(runtime.topics, n).get_topic_name(): m for n, m in mocks.items()}
    app.producer.send = _RecordingProducer(by_topic).send  # type: ignore[method-assign]
    return mocks


def corrections_end(runtime: Runtime, end: Callable[[], int]) -> None:
    """Say the broker's corrections topic ends at ``end()`` (asked again on each round)."""
    ends = runtime.ends
    if not isinstance(ends, FakeEnds):
        raise TypeError("wire the runtime with ends=FakeEnds() to set where topics end")
    ends.corrections_end = end


#: Event-loop turns a record's processing may take beyond entering its agent (a shared
#: end-offset round: its task starts, answers, wakes the waiter).
LOOP_TURNS = 4


class Feed:
    """Deliver records to an agent as Kafka would: offsets continue per topic partition.

    Each delivery uses a fresh ``test_context``, whose offsets would start at 0 again; to the
    agents a repeated offset is a redelivery, which they skip.
    """

    def __init__(self, app: faust.App) -> None:
        self.app = app
        self.offsets: dict[tuple[str, int | None], int] = {}

    async def put(
        self,
        agent: str,
        topic: str,
        *values: bytes | None,
        key: bytes | None = None,
        partition: int | None = None,
        timestamp: float | None = None,
    ) -> None:
        """Deliver ``values`` in order to agent ``learnstream.<agent>`` as records of ``topic``."""
        wrapper = self.app.agents[f"learnstream.{agent}"].test_context()
        # A multi-topic agent cannot name its topic: say which one the record came from.
        wrapper.original_channel = self.app.topic(topic)
        log = (topic, partition)
        wrapper.sent_offset = self.offsets.get(log, 0)
        async with wrapper as context:
            for value in values:
                await context.put(value, key=key, partition=partition, timestamp=timestamp)
                # ``put`` returns once the record enters its agent and the context's exit
                # cancels what still runs: let an end-offset round of the watermark (a task
                # the agent awaits, answered at once here) finish first.
                for _ in range(LOOP_TURNS):
                    await asyncio.sleep(0)
        self.offsets[log] = wrapper.sent_offset
