"""Ends this process's own fetch responses carried, by when each fetch was sent (pure).

A fetch response names, for every partition it asked for, the partition's last stable
offset: the end a ListOffsets request with read_committed would answer at that moment. A
fetch *sent* after a moment therefore answers "what did the partition hold after then?" as a
ListOffsets round started after it does (streams/offsets/rounds.py), at no cost: the
consumer fetches anyway, and a quiet partition (the corrections, the consent topic) is in
every fetch to its broker. The corrections watermark and the consent fence take whichever
answers first, a round or a fetch (benchmarks/RESULTS.md, 30 Nov 16:05: at 141 paced events/s
a decision's wait for its corrections end fell from a mean of 20.5 ms to 9.8, p99 112 to 34).

``note`` may be called from any thread (Faust's consumer runs on a thread of its own); a
waiter is woken on its own event loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

__all__ = ["FetchedEnds"]

_P = TypeVar("_P", bound=Hashable)


class _Waiter(NamedTuple):
    partitions: tuple[Hashable, ...]
    since: float
    future: asyncio.Future[None]


class FetchedEnds(Generic[_P]):
    """Per partition, the end the newest fetch response gave and when that fetch was sent.

    ``topics`` are the topics whose ends are kept (the fetch hook reads no other);
    ``clock`` stamps the sending, on the clock callers give their ``since`` on.
    """

    def __init__(self, topics: Iterable[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.topics = frozenset(topics)
        self.clock = clock
        self._ends: dict[Hashable, tuple[float, int]] = {}
        self._waiters: list[_Waiter] = []
        self._lock = threading.Lock()

    def note(self, sent: float, ends: Mapping[_P, int]) -> None:
        """Take the ends a fetch sent at ``sent`` (on ``clock``) answered; wake whom they
        answer. Any thread."""
        with self._lock:
            for partition, end in ends.items():
                known = self._ends.get(partition)
                if known is None or known[0] < sent:
                    self._ends[partition] = (sent, end)
            if not self._waiters:
                return
            woken: list[_Waiter] = []
            waiting: list[_Waiter] = []
            for waiter in self._waiters:
                answered = self._answer(waiter.partitions, waiter.since) is not None
                (woken if answered else waiting).append(waiter)
            self._waiters = waiting
        for waiter in woken:
            waiter.future.get_loop().call_soon_threadsafe(_resolve, waiter.future)

    def ends(self, partitions: Collection[_P], since: float) -> dict[_P, int] | None:
        """Return each partition's end from a fetch sent after ``since``, if every one of
        ``partitions`` has one (None otherwise, and for no partitions)."""
        with self._lock:
            return self._answer(tuple(partitions), since)

    def after(self, partitions: Collection[_P], since: float) -> asyncio.Future[None]:
        """Return a future, of the running loop, done once ``ends(partitions, since)``
        answers. Cancel it when no longer wanted: that forgets the waiter."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        wanted = tuple(partitions)
        with self._lock:
            if wanted and self._answer(wanted, since) is not None:
                future.set_result(None)
                return future
            waiter = _Waiter(wanted, since, future)
            self._waiters.append(waiter)
        future.add_done_callback(lambda _: self._forget(waiter))
        return future

    async def or_round(
        self, asked: asyncio.Future[bool], partitions: Collection[_P], since: float
    ) -> bool:
        """Wait for the round ``asked`` (streams/offsets/rounds.py) or for fetches sent after
        ``since`` to answer for ``partitions``, whichever comes first; cancel neither the
        round (shared) nor the caller's wait. Return False if the round failed first."""
        fetch = self.after(partitions, since)
        either: list[asyncio.Future[Any]] = [asked, fetch]
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            fetched = fetch.done() and not fetch.cancelled()
            fetch.cancel()
        return fetched or asked.result()  # not fetched: the round is done

    def _answer(self, partitions: tuple[Hashable, ...], since: float) -> dict[_P, int] | None:
        if not partitions:
            return None
        answer: dict[_P, int] = {}
        for partition in partitions:
            known = self._ends.get(partition)
            if known is None or not since < known[0]:
                return None
            answer[partition] = known[1]  # type: ignore[index]
        return answer

    def _forget(self, waiter: _Waiter) -> None:
        with self._lock:
            self._waiters = [w for w in self._waiters if w.future is not waiter.future]


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
