"""Read back one partition of the pairs miner's re-key topic: how its intents are restored.

The pairs miner (agents/joins/pair_miner.py) keeps what each intent holds in memory and
writes no changelog: an intent is a fold of the re-keyed records of its partition, so a
worker given the partition folds them again, from ``pairs.ttl`` ago up to the first record
its agent is handed (Kafka Streams restores a table from its source topic the same way).
That first record sits at the group's committed offset, or above it only by offsets no
reader sees (transaction markers, aborted records), so what is read back is exactly what
earlier owners folded.

:class:`RekeyReplay` reads with a consumer of its own, outside the group, started at the
first restore and stopped with the app; it reads what the worker's own consumer would
(committed records only under exactly_once).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Protocol

from aiokafka import TopicPartition

from learnstream.agents.seams.own_reader import OwnReader
from learnstream.streams.io.connection import Broker

__all__ = ["Rekeyed", "RekeyReplay", "Replay"]

#: Seconds a read may go without a record before it fails (the restore retries it).
STALL_S = 30.0

#: One re-keyed record read back: (offset, timestamp in ms, value; b"" for a tick).
Rekeyed = tuple[int, int, bytes]


class Replay(Protocol):
    """Where a restore reads a partition's re-keyed records from (tests pass their own)."""

    def read(self, partition: int, since_ms: int, until: int) -> AsyncIterator[Rekeyed]:
        """Yield the records of ``partition`` written at or after ``since_ms`` (CreateTime)
        and below offset ``until``, in offset order."""
        ...


class RekeyReplay(OwnReader):
    """Read ranges of the re-key topic with one consumer, one partition at a time."""

    client_id = "learnstream-pair-intents-replay"
    offset_reset = "earliest"  # records gone by retention: read from the log start

    def __init__(self, broker: Broker, topic: str, isolation_level: str) -> None:
        super().__init__(broker, isolation_level)
        self.topic = topic

    async def read(self, partition: int, since_ms: int, until: int) -> AsyncIterator[Rekeyed]:
        """Yield the records of ``partition`` with a timestamp at or after ``since_ms`` below
        offset ``until``. Raises TimeoutError when nothing comes for ``STALL_S`` seconds."""
        async with self._lock:
            consumer = await self._connected()
            tp = TopicPartition(self.topic, partition)
            consumer.assign([tp])
            found = (await consumer.offsets_for_times({tp: since_ms})).get(tp)
            if found is None or found.offset >= until:  # nothing written since ``since_ms``
                return
            # Some brokers (the embedded Tansu) answer every lookup with 0: the timestamp
            # filter below is what keeps the range then.
            consumer.seek(tp, found.offset)
            quiet_since = time.monotonic()
            while await consumer.position(tp) < until:
                batch = await consumer.getmany(tp, timeout_ms=500)
                for record in batch.get(tp, ()):
                    quiet_since = time.monotonic()
                    if record.offset >= until:
                        return
                    if record.timestamp >= since_ms:
                        yield record.offset, record.timestamp, record.value or b""
                if time.monotonic() - quiet_since > STALL_S:
                    raise TimeoutError(
                        f"{self.topic}[{partition}]: nothing read for {STALL_S:.0f}s at "
                        f"offset {await consumer.position(tp)} of {until}"
                    )
