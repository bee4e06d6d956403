"""Each worker's own reader of the skill-stats changelog, so any worker answers for all.

Why a changelog reader and not a fan-out over HTTP: the table already writes every change
to its compacted changelog, so reading it on every worker (as agents/consent_reader.py reads the
consent topic: every partition from the beginning, outside the consumer group) adds no
record per feedback and no peer discovery; a fan-out would need every worker's address and
would fail, or answer partially, whenever one is slow or rebalancing. The cost is a read
of each change by every worker (one changelog record per skill or tool a feedback or
stage names, per worker) and, per stats or adapt answer, one end-offset request: the
answer waits until the reader holds what the changelog held when asked, at most
:data:`CATCH_UP_S`, then answers from what it has; it answers at once, from what it has,
while the reader holds no partitions yet (worker start, changelog not created) or when the
broker fails the end-offset request, and ``partial`` counts why. Two connections, as the
consent reader has: an end-offset request must not queue behind the reader's long poll.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError
from mode import Service

from agents.faust_compat import refresh_metadata
from streams.a2e.stats_view import StatsView, decode_entry
from streams.io.connection import Broker, connection_of

__all__ = ["CATCH_UP_S", "StatsReader"]

log = logging.getLogger("learnstream")

#: Longest an answer waits for the reader to reach the changelog's end offsets.
CATCH_UP_S = 2.0


class StatsReader(Service):
    """Read every partition of the stats changelog into the view; say when caught up."""

    def __init__(
        self,
        broker: Broker,
        topic: str,
        view: StatsView,
        partial: Callable[[str], None] = lambda _reason: None,
    ) -> None:
        super().__init__()
        self.broker, self.topic, self.view, self.partial = broker, topic, view, partial
        self._consumer: AIOKafkaConsumer | None = None
        self._asker: AIOKafkaConsumer | None = None
        self._partitions: list[TopicPartition] = []
        self._positions: dict[TopicPartition, int] = {}
        self._assigned, self._moved = asyncio.Event(), asyncio.Event()

    async def caught_up(self, within: float = CATCH_UP_S) -> bool:
        """Wait until the view holds what the changelog held now; False after ``within`` s,
        at once while no partition is assigned or when the broker fails the request, and
        when the reader does not run (as in unit tests: the worker's own table answers)."""
        if not self.started or self.should_stop:
            return False
        if not self._assigned.is_set() or self._asker is None:
            self.partial("unassigned")
            return False
        try:
            await self._reach(self._asker, time.monotonic() + within)
        except (TimeoutError, ValueError):  # ValueError: the deadline passed before the wait
            self.partial("timeout")
            return False
        except (KafkaError, ConnectionError, RuntimeError) as exc:  # RuntimeError: stopped
            log.warning("stats reader: end offsets failed (%s)", type(exc).__name__)
            self.partial("broker_error")
            return False
        return True

    async def _reach(self, asker: AIOKafkaConsumer, deadline: float) -> None:
        """Return once the reader's positions reach the changelog's current end offsets."""
        left = deadline - time.monotonic()
        ends = await asyncio.wait_for(asker.end_offsets(self._partitions), left)
        while any(self._positions.get(tp, 0) < end for tp, end in ends.items()):
            self._moved.clear()
            await asyncio.wait_for(self._moved.wait(), deadline - time.monotonic())

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
                self._positions = {tp: await consumer.position(tp) for tp in self._partitions}
                self._moved.set()
            except Exception as exc:  # answers wait at most CATCH_UP_S meanwhile
                log.warning("stats reader: fetch failed (%s); retrying", type(exc).__name__)
                await self.sleep(1.0)

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        try:
            self.view.apply(*decode_entry(key, value))
        except ValueError:  # the table writes these records: one unreadable is skipped
            log.warning("stats reader: skipped an unreadable record of %s", self.topic)

    async def _assign(self) -> AIOKafkaConsumer:
        while True:
            try:
                return await self._try_assign()
            except Exception as exc:
                log.warning("stats reader: cannot start (%s); retrying", type(exc).__name__)
                await self._close()
                await self.sleep(1.0)

    async def _try_assign(self) -> AIOKafkaConsumer:
        self._consumer, self._asker = consumer, asker = self._new("reader"), self._new("offsets")
        for client in (consumer, asker):
            await client.start()
        partitions = consumer.partitions_for_topic(self.topic)
        while not partitions:
            await refresh_metadata(consumer)  # Faust creates the changelog as the app starts
            partitions = consumer.partitions_for_topic(self.topic)
            if not partitions:
                await self.sleep(0.5)
        self._partitions = [TopicPartition(self.topic, p) for p in sorted(partitions)]
        consumer.assign(self._partitions)
        await consumer.seek_to_beginning(*self._partitions)
        await refresh_metadata(asker)
        await asker.end_offsets(self._partitions)  # its first request waits out metadata
        self._assigned.set()
        return consumer

    def _new(self, role: str) -> AIOKafkaConsumer:
        return AIOKafkaConsumer(
            **connection_of(self.broker).client_options(),
            client_id=f"learnstream-stats-{role}",
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            fetch_max_wait_ms=100,  # an idle long poll must not delay an answer
        )

    async def _close(self) -> None:
        consumers, self._consumer, self._asker = (self._consumer, self._asker), None, None
        for consumer in consumers:
            if consumer is not None:
                await consumer.stop()
