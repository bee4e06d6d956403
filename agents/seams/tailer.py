"""A worker's own reader of a whole topic: every partition, from the beginning, outside the group.

Both the consent reader (agents/consent_reader.py) and the stats changelog reader
(agents/learning/view.py) read this way, on every worker, so each worker holds what every
partition holds. :class:`TopicTailer` connects its consumer, waits until the topic exists,
assigns every partition from its first offset and reads until stopped, retrying after any
error with a warning; a subclass says what each record does (:meth:`TopicTailer._apply`)
and what the positions reached after each poll do (:meth:`TopicTailer._advance`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from mode import Service

from learnstream.agents.seams.faust_compat import refresh_metadata
from learnstream.agents.seams.own_reader import outside_group
from learnstream.streams.io.connection import Broker

__all__ = ["TopicTailer"]

log = logging.getLogger("learnstream")


class TopicTailer(Service):
    """Read every partition of ``topic`` from the beginning, outside the consumer group."""

    #: Who speaks in the log lines: "consent reader: fetch failed ...".
    #: (Not `label`: mode names its services with that.)
    reader_name = "topic reader"
    #: Client ids are ``f"{client_prefix}-{role}"``; the reading consumer's role is "reader".
    client_prefix = "learnstream-topic"

    def __init__(self, broker: Broker, topic: str) -> None:
        super().__init__()
        self.broker, self.topic = broker, topic
        self._consumer: AIOKafkaConsumer | None = None
        self._partitions: list[TopicPartition] = []

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        """Take one record of the topic. It must not raise: the rest of its batch would be
        skipped (logged), and the next poll's positions move past it."""
        raise NotImplementedError

    def _advance(self, positions: dict[TopicPartition, int]) -> None:
        """Take the positions (next offset to read, per partition) after a poll."""
        raise NotImplementedError

    async def _connected(self) -> None:
        """Run once the reading consumer has started, before the topic is waited for."""

    async def _assigned_all(self) -> None:
        """Run once every partition is assigned and sought to its beginning."""

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
                        self._apply(record.key, record.value)
                # After every poll, empty ones too: control records move positions alone.
                self._advance({tp: await consumer.position(tp) for tp in self._partitions})
            except Exception as exc:  # the subclass says what waits meanwhile; keep reading
                log.warning("%s: fetch failed (%s); retrying", self.reader_name, type(exc).__name__)
                await self.sleep(1.0)

    async def _assign(self) -> AIOKafkaConsumer:
        """Connect and assign every partition of the topic (waiting until it exists)."""
        while True:
            try:
                return await self._try_assign()
            except Exception as exc:
                log.warning("%s: cannot start (%s); retrying", self.reader_name, type(exc).__name__)
                await self._close()
                await self.sleep(1.0)

    async def _try_assign(self) -> AIOKafkaConsumer:
        self._consumer = consumer = self._new("reader")
        await consumer.start()
        await self._connected()
        self._partitions = await partitions_of(consumer, self.topic, self.sleep)
        consumer.assign(self._partitions)
        await consumer.seek_to_beginning(*self._partitions)
        await self._assigned_all()
        return consumer

    def _new(self, role: str) -> AIOKafkaConsumer:
        """Return a consumer outside the group (read_committed) named for ``role``."""
        return outside_group(
            self.broker,
            f"{self.client_prefix}-{role}",
            "read_committed",
            auto_offset_reset="earliest",
            fetch_max_wait_ms=100,  # an idle long poll must not delay a fence or an answer
        )

    async def _close(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            await consumer.stop()


async def partitions_of(
    consumer: AIOKafkaConsumer, topic: str, sleep: Callable[[float], Awaitable[None]]
) -> list[TopicPartition]:
    """Return every partition of ``topic``, waiting until it exists (the app may be creating
    it)."""
    partitions = consumer.partitions_for_topic(topic)
    while not partitions:
        await refresh_metadata(consumer)
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            await sleep(0.5)
    return [TopicPartition(topic, p) for p in sorted(partitions)]
