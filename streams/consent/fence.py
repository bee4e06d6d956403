"""Wait until a reader has read everything written before a given moment (no Kafka here).

The consent fence of streams/consent/view.py: callers wait for a *round* (one end-offsets request,
shared: streams/offsets/rounds.py) that started after their ``since``, and for the reader's
positions to reach its answer. A caller whose ``since`` is older than the last answered
round needs no request of its own. A failed request is retried after ``retry`` seconds,
forever: waiting is the only safe answer to an unanswered broker.

A fetch sent after ``since`` answers as well as a round (streams/offsets/fetched.py): given
the ends fetches carried, a caller takes whichever answers first for every partition the
last round named.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping

from learnstream.streams.offsets.fetched import FetchedEnds
from learnstream.streams.offsets.rounds import Rounds

__all__ = ["EndOffsets", "Fence", "Offsets"]

Offsets = Mapping[Hashable, int]
#: Fetch the end offsets of every partition read (a fresh request per call).
EndOffsets = Callable[[], Awaitable[Offsets]]


class Fence:
    """Hold callers until the reader's positions reach end offsets asked for after them."""

    def __init__(
        self,
        end_offsets: EndOffsets,
        *,
        retry: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        fetched: FetchedEnds[Hashable] | None = None,
    ) -> None:
        self.end_offsets, self.retry, self.clock = end_offsets, retry, clock
        #: Ends the reader's fetches carried, stamped on ``clock``.
        self.fetched = fetched
        self.lag = 0  # records between the positions and the last answer
        self.rounds: Rounds[Hashable, float] = Rounds(self._ask, clock, "consent fence")
        self._positions: dict[Hashable, int] = {}
        self._changed: asyncio.Future[None] | None = None
        self._since: dict[object, float] = {}  # waiter -> when it started waiting

    @property
    def failures(self) -> int:
        """Return how many end-offset requests failed."""
        return self.rounds.failures

    async def wait(self, since: float | None = None) -> None:
        """Return once the reader has read everything written before ``since`` (default now).

        ``since`` comes from ``clock``; one in the future counts as now.
        """
        now = self.clock()
        since = now if since is None or since > now else since
        token = object()
        self._since[token] = now
        try:
            ends = self._answer(since)
            while ends is None:  # no round started after ``since`` answered yet: ask
                if not await self._asked(since):
                    await asyncio.sleep(self.retry)  # never a verdict without an answer
                self._count_lag()
                ends = self._answer(since)
            # Only this answer is waited for: newer ones, asked for later callers, may be
            # further ahead of the reader.
            while not self._reached(ends):
                await asyncio.shield(self._next_change())  # shared: one cancel must not end it
        finally:
            del self._since[token]

    def advance(self, positions: Offsets) -> None:
        """Take the reader's new positions (next offset to read, per partition)."""
        self._positions.update(positions)
        self._count_lag()
        self._notify()

    @property
    def waiting(self) -> int:
        """Return how many callers wait."""
        return len(self._since)

    def oldest_wait(self) -> float:
        """Return the seconds the longest waiting caller has waited (0 when none)."""
        return self.clock() - min(self._since.values()) if self._since else 0.0

    def _answer(self, since: float) -> Offsets | None:
        """Return ends asked for after ``since``: a round's, or else the fetches' for every
        partition the newest round named."""
        ends = self.rounds.answer(since)
        if ends is None and self.fetched is not None:
            named = self.rounds.answer(None)
            if named:
                ends = self.fetched.ends(list(named), since)
        return ends

    async def _asked(self, since: float) -> bool:
        """Wait for a round started after ``since`` (shared by all) or, sooner, for fetches
        sent after it; say False if the round failed first."""
        asked = self.rounds.after(since)
        named = self.rounds.answer(None)
        if self.fetched is None or not named:
            return await asyncio.shield(asked)
        return await self.fetched.or_round(asked, list(named), since)

    async def _ask(self, _partitions: list[Hashable]) -> Offsets:
        return await self.end_offsets()  # every partition the reader reads

    def _reached(self, ends: Offsets) -> bool:
        return all(self._positions.get(tp, 0) >= end for tp, end in ends.items())

    def _count_lag(self) -> None:
        last = self.rounds.answer(None) or {}
        self.lag = sum(max(end - self._positions.get(tp, 0), 0) for tp, end in last.items())

    def _next_change(self) -> asyncio.Future[None]:
        if self._changed is None:
            self._changed = asyncio.get_running_loop().create_future()
        return self._changed

    def _notify(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None and not changed.done():
            changed.set_result(None)
