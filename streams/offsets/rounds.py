"""End-offset rounds, shared by every caller (pure: the request is a callable).

Both the consent fence (streams/consent/fence.py) and the corrections watermark
(streams/join/watermark.py) must know what a partition held *after* a given moment: everything
written before a record came, or before an event was fetched. The end offset the consumer
last fetched does not say that (aiokafka leaves a partition with buffered records out of
its next fetch, so that end can be older than the moment), so they ask the broker: a
*round* is one ListOffsets request, and its answer counts for a moment only if the round
started after it.

Rounds are shared. At most one is in flight; a caller whose moment is older than its start
shares it, and every caller that comes later shares the one queued behind it. A burst of
records thus costs one or two requests, however many wait. A failed round is counted and
logged; the callers decide whether to ask again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Ask", "Rounds"]

log = logging.getLogger("learnstream")


class _Ordered(Protocol):
    def __lt__(self, other: Any, /) -> bool: ...


_P = TypeVar("_P", bound=Hashable)
_T = TypeVar("_T", bound=_Ordered)  # a moment: a monotonic reading, a datetime

#: Ask the broker for the end offsets of these partitions.
Ask = Callable[[list[_P]], Awaitable[Mapping[_P, int]]]


class Rounds(Generic[_P, _T]):
    """The newest answer, with the start of the round that gave it.

    Every round asks for every wanted partition, so the newest answer holds the newest end
    of each partition answered at all.
    """

    def __init__(self, ask: Ask[_P], clock: Callable[[], _T], name: str) -> None:
        self.ask, self.clock, self.name = ask, clock, name
        self.failures = 0  # rounds that failed
        self.wanted: set[_P] = set()  # the partitions each round asks for
        self._answer: tuple[_T, dict[_P, int]] | None = None
        self._flying: tuple[_T, asyncio.Task[bool]] | None = None
        self._queued: asyncio.Task[bool] | None = None

    def end(self, partition: _P, since: _T) -> int | None:
        """Return ``partition``'s end answered by a round started after ``since``, if any."""
        ends = self.answer(since)
        return None if ends is None else ends.get(partition)

    def answer(self, since: _T | None) -> Mapping[_P, int] | None:
        """Return the newest answer, every partition it named, if its round started after
        ``since`` (any answer when None)."""
        if self._answer is None:
            return None
        started, ends = self._answer
        return ends if since is None or since < started else None

    def after(self, since: _T) -> asyncio.Task[bool]:
        """Return a round that starts after ``since``: the one in flight if it did, else the
        one queued behind it (made if need be). It says whether the broker answered."""
        if self._flying is not None and since < self._flying[0]:
            return self._flying[1]
        if self._queued is None:  # a queued round starts later than now, so after ``since``
            if self._flying is None:
                return self._start()
            self._queued = asyncio.ensure_future(self._after(self._flying[1]))
        return self._queued

    def forget(self, partitions: Iterable[_P]) -> None:
        """Drop the ends of ``partitions`` and stop asking for them."""
        for partition in partitions:
            if self._answer is not None:
                self._answer[1].pop(partition, None)
            self.wanted.discard(partition)

    def _start(self) -> asyncio.Task[bool]:
        started = self.clock()
        task = asyncio.ensure_future(self._round(started))
        self._flying = (started, task)
        return task

    async def _after(self, flying: asyncio.Task[bool]) -> bool:
        await asyncio.wait([flying])
        self._queued = None
        return await self._start()

    async def _round(self, started: _T) -> bool:
        try:
            ends = await self.ask(sorted(self.wanted, key=repr))
        except Exception as exc:  # noqa: BLE001  (the callers wait, or ask again)
            self.failures += 1
            log.warning(
                "%s: end offsets unavailable (%s, %d failures)",
                self.name, type(exc).__name__, self.failures,
            )  # fmt: skip
            return False
        finally:
            self._flying = None
        self._answer = (started, dict(ends))  # one in flight at a time: the newest
        return True
