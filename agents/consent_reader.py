"""Consent: each worker's own reader of the consent topic, and the agent for bad records.

The reader feeds the runtime's ConsentView and Fence (streams/consent/view.py says why): it reads
every partition from the beginning with its own consumer, outside the consumer group (a
TopicTailer: agents/seams/tailer.py). The fence's end offsets are asked elsewhere
(agents/seams/end_offsets.py). It starts with the app, before its consumer.

The agent stays in the consumer group only to dead-letter invalid consent records: one group
member reads each record, so each bad record is dead-lettered once, not once per worker.
"""

from __future__ import annotations

import logging

from aiokafka import TopicPartition
from faust.types import EventT, StreamT
from mode import Service

from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.faust_compat import note_fetched_ends
from learnstream.agents.seams.tailer import TopicTailer
from learnstream.streams.consent.fence import Fence
from learnstream.streams.consent.view import ConsentView, parse_consent
from learnstream.streams.io.connection import Broker, app_connection
from learnstream.streams.observe.metrics import Metrics

__all__ = ["ConsentReader", "register"]

log = logging.getLogger("learnstream")

#: Seconds a record may wait for the consent view before the reader warns (and again after).
WARN_AFTER = 10.0


class ConsentReader(TopicTailer):
    """Read every partition of the consent topic into the view; answer the fence.

    After every poll the fence takes the reader's positions; while a fetch fails, the fence
    holds samples and the reader keeps retrying.
    """

    reader_name, client_prefix = "consent reader", "learnstream-consent"

    def __init__(
        self, broker: Broker, topic: str, view: ConsentView, fence: Fence, metrics: Metrics
    ) -> None:
        super().__init__(broker, topic)
        self.view, self.fence, self.metrics = view, fence, metrics
        self._warned = 0.0

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        self.view.apply(key, value)

    def _advance(self, positions: dict[TopicPartition, int]) -> None:
        self.fence.advance(positions)

    async def _connected(self) -> None:
        if self.fence.fetched is not None and self._consumer is not None:
            note_fetched_ends(self._consumer, self.fence.fetched)  # they answer the fence too

    @Service.timer(1.0)
    async def _watch(self) -> None:
        fence, metrics = self.fence, self.metrics
        metrics.consent_lag.set(fence.lag)
        metrics.consent_waiting.set(fence.waiting)
        waited = fence.oldest_wait()
        if waited > WARN_AFTER and waited - self._warned > WARN_AFTER:
            log.warning(
                "consent fence: %d records have waited up to %.0fs for the consent view "
                "(%d consent records behind, %d failed end-offset requests); their samples wait",
                fence.waiting,
                waited,
                fence.lag,
                fence.failures,
            )
            self._warned = waited
        elif waited <= WARN_AFTER:
            self._warned = 0.0


def register(runtime: Runtime) -> None:
    """Start a consent reader with the app and register the dead-lettering agent."""
    topic = runtime.topics.consent.get_topic_name()
    broker = app_connection(runtime.app, runtime.settings.broker)
    reader = ConsentReader(broker, topic, runtime.consent, runtime.fence, runtime.metrics)
    runtime.app.add_dependency(reader)

    async def handle(event: EventT[bytes]) -> None:
        msg = event.message
        parse_consent(msg.key, msg.value)  # raises InvalidEvent: guarded dead-letters it

    @runtime.app.agent(runtime.topics.consent, name="learnstream.consent")
    async def consent(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("consent", event, handle)
