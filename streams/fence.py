"""Wait until a reader has read everything written before a given moment (no Kafka here).

The consent fence of streams/consent.py: callers wait for a *round* (one end-offsets request)
that started after their ``since`` and for the reader's positions to reach its answer. One
request is in flight at a time and every waiter shares it; a caller already covered by a
reached round returns at once. A failed request is retried after ``retry`` seconds, forever:
waiting is the only safe answer to an unanswered broker.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping

__all__ = ["EndOffsets", "Fence", "Offsets", "caught_up"]

log = logging.getLogger("learnstream")

Offsets = Mapping[Hashable, int]
#: Fetch the end offsets of every partition read (a fresh request per call).
EndOffsets = Callable[[], Awaitable[Offsets]]


async def caught_up() -> Offsets:
    """Answer as a reader that has read everything: no partition to wait for (unit tests)."""
    return {}


async def _unwired() -> Offsets:
    raise RuntimeError("no consent reader is wired to the fence")


class Fence:
    """Hold callers until the reader's positions reach end offsets asked for after them."""

    def __init__(
        self,
        end_offsets: EndOffsets = _unwired,
        *,
        retry: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.end_offsets, self.retry, self.clock = end_offsets, retry, clock
        self.failures = 0  # end-offset requests that failed
        self.lag = 0  # records between the positions and the last answer not reached yet
        self._positions: dict[Hashable, int] = {}
        self._rounds: list[tuple[float, dict[Hashable, int]]] = []  # answered, not reached
        self._covered = -math.inf  # start of the latest round the positions reached
        self._answered = -math.inf  # start of the latest round the broker answered
        self._asking: asyncio.Task[None] | None = None
        self._changed: asyncio.Future[None] | None = None
        self._since: dict[object, float] = {}  # waiter -> when it started waiting

    async def wait(self, since: float | None = None) -> None:
        """Return once the reader has read everything written before ``since`` (default now).

        ``since`` comes from ``clock``; one in the future counts as now.
        """
        now = self.clock()
        since = now if since is None or since > now else since
        if self._covered > since:
            return
        token = object()
        self._since[token] = now
        try:
            while self._covered <= since:
                if self._answered <= since and self._asking is None:
                    self._asking = asyncio.ensure_future(self._ask())
                await asyncio.shield(self._next_change())  # shared: one cancel must not end it
        finally:
            del self._since[token]

    def advance(self, positions: Offsets) -> None:
        """Take the reader's new positions (next offset to read, per partition)."""
        self._positions.update(positions)
        self._settle()

    @property
    def waiting(self) -> int:
        """Return how many callers wait."""
        return len(self._since)

    def oldest_wait(self) -> float:
        """Return the seconds the longest waiting caller has waited (0 when none)."""
        return self.clock() - min(self._since.values()) if self._since else 0.0

    async def _ask(self) -> None:
        started = self.clock()
        try:
            ends = dict(await self.end_offsets())
        except Exception as exc:  # never a verdict without an answer: wait and ask again
            self.failures += 1
            log.warning(
                "consent fence: end offsets unavailable (%s, %d failures); samples wait",
                type(exc).__name__,
                self.failures,
            )
            await asyncio.sleep(self.retry)
        else:
            self._answered = started
            self._rounds.append((started, ends))
            self._settle()
        finally:
            self._asking = None
            self._notify()

    def _settle(self) -> None:
        """Mark the rounds the positions reached; recompute the lag."""
        left = []
        for started, ends in self._rounds:
            if all(self._positions.get(tp, 0) >= end for tp, end in ends.items()):
                self._covered = max(self._covered, started)
            else:
                left.append((started, ends))
        if len(left) != len(self._rounds):
            self._rounds = left
            self._notify()
        last = left[-1][1] if left else {}
        self.lag = sum(max(end - self._positions.get(tp, 0), 0) for tp, end in last.items())

    def _next_change(self) -> asyncio.Future[None]:
        if self._changed is None:
            self._changed = asyncio.get_running_loop().create_future()
        return self._changed

    def _notify(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None and not changed.done():
            changed.set_result(None)
