"""``SyncLearnAPI``: the learn client for plain scripts, as seed 003's examples call it.

It runs :class:`~learnstream.streams.a2e.client.LearnAPI` on its own event loop in a background
thread, so a script without asyncio calls ``learn.feedback(...)`` and gets the answer back. The
transport is opened on that loop when the client is made and closed by :meth:`close` (or
the ``with`` block); ``learnstream.streams.io.a2e_transport.learn_over_http``/``learn_over_kafka``
build one.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import TracebackType
from typing import Any, TypeVar

from learnstream.streams.a2e.client import LearnAPI, Transport
from learnstream.streams.a2e.messages import FeedbackResult
from learnstream.streams.a2e.models import Experience, SkillPerformanceRecord

__all__ = ["SyncLearnAPI"]

T = TypeVar("T")
Records = list[SkillPerformanceRecord]


class SyncLearnAPI:
    """Submit feedback and experience, adapt and read stats, synchronously."""

    def __init__(
        self,
        open_transport: Callable[[], AbstractAsyncContextManager[Transport]],
        *,
        timeout: float = 10.0,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="learnstream-learn-api", daemon=True
        )
        self._thread.start()
        self._stack = AsyncExitStack()
        try:
            transport = self._run(self._stack.enter_async_context(open_transport()))
        except BaseException:
            self._stop_loop()
            raise
        self._api = LearnAPI(transport, timeout=timeout)
        self._closed = False

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def _call(self, work: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            work.close()
            raise RuntimeError("the learn client is closed")
        return self._run(work)

    def feedback(self, **fields: Any) -> FeedbackResult:
        """Submit one feedback (``LearnAPI.feedback``'s fields)."""
        return self._call(self._api.feedback(**fields))

    def reward(
        self, skill_name: str, value: float, correlation_id: str, **extra: Any
    ) -> FeedbackResult:
        """Send a scalar reward in [-1, 1] for ``skill_name``."""
        return self._call(self._api.reward(skill_name, value, correlation_id, **extra))

    def experience(self, experiences: Iterable[Experience | Mapping[str, Any]]) -> int:
        """Store transitions for replay; return how many the host stored."""
        return self._call(self._api.experience(list(experiences)))

    store_experience = experience

    def adapt(
        self,
        skill_name: str | None = None,
        strategy: str = "ucb1",
        params: Mapping[str, float] | None = None,
        custom: str | None = None,
        seed: int | None = None,
        as_of: float | None = None,
    ) -> Records:
        """Return the skills ranked by ``strategy``, best first."""
        return self._call(self._api.adapt(skill_name, strategy, params, custom, seed, as_of))

    def stats(
        self, skill_name: str | None = None, tool_name: str | None = None
    ) -> tuple[Records, Records]:
        """Return (skill records, tool records), filtered by the names given."""
        return self._call(self._api.stats(skill_name, tool_name))

    get_stats = stats

    def close(self) -> None:
        """Close the transport and stop the loop (again: nothing)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._run(self._stack.aclose())
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> SyncLearnAPI:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
