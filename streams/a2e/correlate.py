"""Match learn/* responses to the requests waiting for them, by correlation id.

Every caller's responses arrive on one shared stream (``a2e.learn.responses``); a transport
registers each request it sends here and feeds every response it reads to
:meth:`Correlator.deliver`. A response nobody waits for (late, or another process's) is
dropped and counted; a request with no response within the time-out fails explicitly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from learnstream.streams.a2e.messages import LearnRequest, LearnResponse

__all__ = ["Correlator", "LearnTimeout"]


class LearnTimeout(TimeoutError):
    """Raise when no response came within the time-out (the message names no value)."""


class Correlator:
    """Futures of the requests in flight, by correlation id."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._waiting: dict[str, asyncio.Future[LearnResponse]] = {}
        self.unmatched = 0

    @property
    def in_flight(self) -> int:
        """Return how many requests await their response."""
        return len(self._waiting)

    def deliver(self, response: LearnResponse) -> bool:
        """Hand ``response`` to its waiting request; False when none waits for it."""
        future = self._waiting.pop(response.correlation_id, None)
        if future is None or future.done():
            self.unmatched += 1
            return False
        future.set_result(response)
        return True

    async def exchange(
        self, request: LearnRequest, send: Callable[[LearnRequest], Awaitable[None]]
    ) -> LearnResponse:
        """Send ``request`` and return its response; raise LearnTimeout after the time-out."""
        key = request.correlation_id
        if key in self._waiting:
            raise ValueError("a request with this correlation id is already in flight")
        future: asyncio.Future[LearnResponse] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        try:
            await send(request)
            return await asyncio.wait_for(future, self.timeout)
        except TimeoutError:
            raise LearnTimeout(f"no {_reply_type(request)} within {self.timeout:g} s") from None
        finally:
            self._waiting.pop(key, None)


def _reply_type(request: LearnRequest) -> str:
    return request.type.removesuffix("/req") + "/resp"
