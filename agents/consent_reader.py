"""Consent: each worker's own reader of the consent topic, and the agent for bad records.

The reader feeds the runtime's ConsentView and Fence (streams/consent/view.py says why): it reads
every partition from the beginning with its own consumer, outside the consumer group. The
fence's end offsets are asked elsewhere (agents/end_offsets.py). It starts with the app,
before its consumer.

The agent stays in the consumer group only to dead-letter invalid consent records: one group
member reads each record, so each bad record is dead-lettered once, not once per worker.
"""

from __future__ import annotations

import logging

from aiokafka import AIOKafkaConsumer, TopicPartition
from faust.types import EventT, StreamT
from mode import Service

from agents.faust_compat import refresh_metadata
from agents.runtime import Runtime
from streams.consent.fence import Fence
from streams.consent.view import ConsentView, parse_consent
from streams.io.connection import Broker, app_connection, connection_of
from streams.observe.metrics import Metrics

__all__ = ["ConsentReader", "register"]

log = logging.getLogger("learnstream")

#: Seconds a record may wait for the consent view before the reader warns (and again after).
WARN_AFTER = 10.0


class ConsentReader(Service):
    """Read every partition of the consent topic into the view; answer the fence."""

    def __init__(
        self, broker: Broker, topic: str, view: ConsentView, fence: Fence, metrics: Metrics
    ) -> None:
        super().__init__()
        self.broker, self.topic = broker, topic
        self.view, self.fence, self.metrics = view, fence, metrics
        self._consumer: AIOKafkaConsumer | None = None
        self._partitions: list[TopicPartition] = []
        self._warned = 0.0

    async def on_stop(self) -> None:
        """Close the consumers."""
        await self._close()

    @Service.task
    async def _read(self) -> None:
        consumer = await self._assign()
        while not self.should_stop:
            try:
                batches = await consumer.getmany(timeout_ms=500)
                for records in batches.values():
                    for record in records:
                        self.view.apply(record.key, record.value)
                # After every poll, empty ones too: control records move positions alone.
                self.fence.advance({tp: await consumer.position(tp) for tp in self._partitions})
            except Exception as exc:  # the fence holds samples meanwhile; keep reading
                log.warning("consent reader: fetch failed (%s); retrying", type(exc).__name__)
                await self.sleep(1.0)

    async def _assign(self) -> AIOKafkaConsumer:
        """Connect and assign every partition of the topic (waiting until it exists)."""
        while True:
            try:
                return await self._try_assign()
            except Exception as exc:
                log.warning("consent reader: cannot start (%s); retrying", type(exc).__name__)
                await self._close()
                await self.sleep(1.0)

    async def _try_assign(self) -> AIOKafkaConsumer:
        self._consumer = consumer = self._new()
        await consumer.start()
        partitions = consumer.partitions_for_topic(self.topic)
        while not partitions:
            await refresh_metadata(consumer)  # the app may be creating it
            partitions = consumer.partitions_for_topic(self.topic)
            if not partitions:
                await self.sleep(0.5)
        self._partitions = [TopicPartition(self.topic, p) for p in sorted(partitions)]
        consumer.assign(self._partitions)
        await consumer.seek_to_beginning(*self._partitions)
        return consumer

    def _new(self) -> AIOKafkaConsumer:
        return AIOKafkaConsumer(
            **connection_of(self.broker).client_options(),
            client_id="learnstream-consent-reader",
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            fetch_max_wait_ms=100,  # an idle long poll must not delay a fence
        )

    async def _close(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            await consumer.stop()

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
