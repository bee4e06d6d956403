"""Each worker's own reader of the skill-stats changelog, so any worker answers for all.

Why a changelog reader and not a fan-out over HTTP: the table already writes every change to
its compacted changelog, so reading it on every worker (as agents/consent_reader.py reads
the consent topic: every partition from the beginning, outside the consumer group; both are
a TopicTailer, agents/seams/tailer.py) adds no record per feedback and no peer discovery; a
fan-out would need every worker's address and would fail, or answer partially, whenever one
is slow or rebalancing. The cost is a read of each change by every worker (one changelog
record per skill or tool a feedback or stage names, per worker) and, per stats or adapt
answer, one end-offset request: the answer waits until the reader holds what the changelog
held when asked, at most :data:`CATCH_UP_S`, then answers from what it has; it answers at
once, from what it has, while the reader holds no partitions yet (worker start, changelog
not created) or when the broker fails the end-offset request, and ``partial`` counts why.
Two connections, as the consent reader has: an end-offset request must not queue behind the
reader's long poll.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from learnstream.agents.seams.faust_compat import refresh_metadata
from learnstream.agents.seams.tailer import TopicTailer
from learnstream.streams.a2e.stats_view import StatsView, decode_entry
from learnstream.streams.io.connection import Broker

__all__ = ["CATCH_UP_S", "StatsReader"]

log = logging.getLogger("learnstream")

#: Longest an answer waits for the reader to reach the changelog's end offsets.
CATCH_UP_S = 2.0


class StatsReader(TopicTailer):
    """Read every partition of the stats changelog into the view; say when caught up.

    After every poll the positions are kept and the answers waiting in :meth:`caught_up` are
    woken; while a fetch fails, they wait at most :data:`CATCH_UP_S`.
    """

    reader_name, client_prefix = "stats reader", "learnstream-stats"

    def __init__(
        self,
        broker: Broker,
        topic: str,
        view: StatsView,
        partial: Callable[[str], None] = lambda _reason: None,
    ) -> None:
        super().__init__(broker, topic)
        self.view, self.partial = view, partial
        self._asker: AIOKafkaConsumer | None = None
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

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        try:
            self.view.apply(*decode_entry(key, value))
        except ValueError:  # the table writes these records: one unreadable is skipped
            log.warning("stats reader: skipped an unreadable record of %s", self.topic)

    def _advance(self, positions: dict[TopicPartition, int]) -> None:
        self._positions = positions
        self._moved.set()

    async def _connected(self) -> None:
        # Its own connection: an end-offset request must not queue behind the long poll.
        self._asker = asker = self._new("offsets")
        await asker.start()

    async def _assigned_all(self) -> None:
        asker = self._asker
        if asker is None:  # closed while starting (stopping): _assign retries, or is cancelled
            raise RuntimeError("the stats asker is closed")
        await refresh_metadata(asker)
        await asker.end_offsets(self._partitions)  # its first request waits out metadata
        self._assigned.set()

    async def _close(self) -> None:
        asker, self._asker = self._asker, None
        await super()._close()
        if asker is not None:
            await asker.stop()
