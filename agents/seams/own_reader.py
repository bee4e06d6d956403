"""A consumer of the worker's own, outside the consumer group, opened at its first use.

What reads a partition on the side, one look at a time (the prober, agents/seams/prober.py;
the pairs miner's restore, agents/joins/rekey_replay.py), holds its consumer here: opened
when first needed, so a worker that never needs it opens no connection, and closed with
the app. ``_lock`` keeps looks one at a time: each assigns the partitions it reads.
:func:`outside_group` makes every consumer of the worker's own (these, the topic tailers,
the end-offset asker).
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka import AIOKafkaConsumer
from mode import Service

from learnstream.streams.io.connection import Broker, connection_of

__all__ = ["OwnReader", "outside_group"]


def outside_group(
    broker: Broker, client_id: str, isolation_level: str, **options: Any
) -> AIOKafkaConsumer:
    """Return a consumer (not started) that reads outside any consumer group: it assigns
    its partitions itself and commits nothing."""
    return AIOKafkaConsumer(
        **connection_of(broker).client_options(),
        client_id=client_id,
        group_id=None,
        enable_auto_commit=False,
        isolation_level=isolation_level,
        **options,
    )


class OwnReader(Service):
    """A consumer outside the group with the worker's isolation level, opened lazily."""

    #: The consumer's client id (what the broker's logs and quotas see).
    client_id = "learnstream-reader"
    #: Where a seek out of the log's range goes ("earliest": a seek below the log start
    #: reads from it; "latest", aiokafka's default: to the end).
    offset_reset = "latest"

    def __init__(self, broker: Broker, isolation_level: str) -> None:
        super().__init__()
        self.broker, self.isolation_level = broker, isolation_level
        self._reader: AIOKafkaConsumer | None = None
        self._lock = asyncio.Lock()

    async def _connected(self) -> AIOKafkaConsumer:
        """Return the consumer, opening it first if need be."""
        if self._reader is None:
            reader = outside_group(
                self.broker,
                self.client_id,
                self.isolation_level,
                auto_offset_reset=self.offset_reset,
            )
            await reader.start()
            self._reader = reader
        return self._reader

    async def on_stop(self) -> None:
        """Close the consumer, if it was opened."""
        reader, self._reader = self._reader, None
        if reader is not None:
            await reader.stop()
