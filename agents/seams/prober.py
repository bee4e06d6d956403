"""Ask the broker itself what a partition holds from an offset on: the check behind every
hole ``Progress`` accepts.

``Progress`` (streams/offsets/progress.py) takes offsets a re-read keeps starting above as
not in the log: transaction markers, aborted or compacted records. But the consumer also
drops the first record after a seek, sometimes twice in a row under load, and a real record
taken for a marker is lost with every sample it carries. Before a hole is accepted, this
reads the partition from the hole's first offset on its own connection, with the worker's
isolation level, and says where the first record a reader sees is.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import TopicPartition

from learnstream.agents.seams.own_reader import OwnReader
from learnstream.streams.offsets.progress import Partition

__all__ = ["PROBE_WAIT_S", "Prober"]

log = logging.getLogger("learnstream")

#: How long one look may take before the prober says it cannot tell.
PROBE_WAIT_S = 10.0


class Prober(OwnReader):
    """Read single records from the broker, on a connection of its own (no group)."""

    client_id = "learnstream-prober"

    async def first_visible(self, tp: Partition, offset: int) -> int | None:
        """Return the offset of the first record at or after ``offset`` of ``tp`` a reader
        with the worker's isolation level sees; None if there is none up to the end.

        Raises when it cannot tell (no connection, no answer within ``PROBE_WAIT_S``).
        """
        async with self._lock:
            return await asyncio.wait_for(self._look(tp, offset), PROBE_WAIT_S)

    async def _look(self, tp: Partition, offset: int) -> int | None:
        reader = await self._connected()
        wanted = TopicPartition(tp.topic, tp.partition)
        reader.assign([wanted])
        end = (await reader.end_offsets([wanted]))[wanted]
        if offset >= end:
            return None
        reader.seek(wanted, offset)
        while True:
            batch = await reader.getmany(wanted, timeout_ms=200, max_records=1)
            records = batch.get(wanted)
            if records:
                return int(records[0].offset)
            if await reader.position(wanted) >= end:  # read past markers only
                return None
