"""Consent: each worker's own reader of the consent topic, and the agent for bad records.

The reader feeds the runtime's ConsentView and Fence (streams/consent/view.py says why): it reads
every partition from the beginning with its own consumer, outside the consumer group, and
answers the fence's end-offset requests, and the corrections watermark's (agents/watermark.py)
on the same asking connection. It starts with the app, before its consumer.

The agent stays in the consumer group only to dead-letter invalid consent records: one group
member reads each record, so each bad record is dead-lettered once, not once per worker.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaConsumer, TopicPartition
from faust.types import EventT, StreamT
from mode import Service

from agents.faust_compat import refresh_metadata
from agents.runtime import Runtime
from agents.watermark import Ask
from streams.consent.fence import Fence, Offsets
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
        self,
        broker: Broker,
        topic: str,
        view: ConsentView,
        fence: Fence,
        metrics: Metrics,
        also_asked: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.broker, self.topic = broker, topic
        #: Other topics whose end offsets are asked here (the corrections input).
        self.also_asked = also_asked
        self.view, self.fence, self.metrics = view, fence, metrics
        self._consumer: AIOKafkaConsumer | None = None  # reads
        self._asker: AIOKafkaConsumer | None = None  # asks for end offsets
        self._partitions: list[TopicPartition] = []
        self._assigned = asyncio.Event()
        self._warned = 0.0

    async def end_offsets(self) -> Offsets:
        """Return the consent topic's end offsets (committed records: read_committed)."""
        ends: dict[TopicPartition, int] = await self.ends_of(self._partitions)
        return ends

    async def ends_of(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Return the end offsets of ``partitions`` of any topic, on the asking connection
        (the corrections watermark asks here too: agents/watermark.py)."""
        await self._assigned.wait()
        if self._asker is None:  # stopping: the caller asks again, and is cancelled
            raise RuntimeError("the consent reader is stopped")
        ends: dict[TopicPartition, int] = await self._asker.end_offsets(partitions)
        return ends

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
        # Two connections: a ListOffsets request must not queue behind the reader's long poll.
        self._consumer, self._asker = consumer, asker = self._new("reader"), self._new("offsets")
        for client in (consumer, asker):
            await client.start()
        partitions = consumer.partitions_for_topic(self.topic)
        while not partitions:
            await refresh_metadata(consumer)  # the app may be creating it
            partitions = consumer.partitions_for_topic(self.topic)
            if not partitions:
                await self.sleep(0.5)
        self._partitions = [TopicPartition(self.topic, p) for p in sorted(partitions)]
        consumer.assign(self._partitions)
        await consumer.seek_to_beginning(*self._partitions)
        await refresh_metadata(asker)  # it knows no topic yet
        await asker.end_offsets(self._asked_at_start(asker))
        self._assigned.set()
        return consumer

    def _asked_at_start(self, asker: AIOKafkaConsumer) -> list[TopicPartition]:
        """Return every partition whose end is asked here, to ask once before any record
        waits: an asker new to a topic (or to its leader) first waits out a metadata retry,
        about 0.1 s, which would otherwise land on the first consent fence and corrections
        round (benchmarks/RESULTS.md, findings behind the design)."""
        asked = list(self._partitions)
        for topic in self.also_asked:  # unknown yet (None): asked when first needed
            partitions = sorted(asker.partitions_for_topic(topic) or ())
            asked += [TopicPartition(topic, p) for p in partitions]
        return asked

    def _new(self, role: str) -> AIOKafkaConsumer:
        return AIOKafkaConsumer(
            **connection_of(self.broker).client_options(),
            client_id=f"learnstream-consent-{role}",
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            fetch_max_wait_ms=100,  # an idle long poll must not delay a fence
        )

    async def _close(self) -> None:
        consumers, self._consumer, self._asker = (self._consumer, self._asker), None, None
        for consumer in consumers:
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


def _corrections_ends(reader: ConsentReader, topic: str) -> Ask:
    async def ask(partitions: list[int]) -> dict[int, int]:
        ends = await reader.ends_of([TopicPartition(topic, p) for p in partitions])
        return {tp.partition: end for tp, end in ends.items()}

    return ask


def register(runtime: Runtime) -> None:
    """Start a consent reader with the app and register the dead-lettering agent."""
    topic = runtime.topics.consent.get_topic_name()
    broker = app_connection(runtime.app, runtime.settings.broker)
    corrections = runtime.join.watermark.topic
    reader = ConsentReader(
        broker, topic, runtime.consent, runtime.fence, runtime.metrics, (corrections,)
    )
    runtime.fence.end_offsets = reader.end_offsets
    runtime.join.watermark.ask = _corrections_ends(reader, corrections)
    runtime.app.add_dependency(reader)

    async def handle(event: EventT[bytes]) -> None:
        msg = event.message
        parse_consent(msg.key, msg.value)  # raises InvalidEvent: guarded dead-letters it

    @runtime.app.agent(runtime.topics.consent, name="learnstream.consent")
    async def consent(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("consent", event, handle)
