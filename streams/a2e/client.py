"""``LearnAPI``: the A2E learn client over any transport that answers a request.

A transport (Kafka, HTTP, in-memory) only has to provide ``async request(message) ->
response``; this class builds and validates the messages, gives each a fresh correlation
id, bounds the wait, and checks that the answer is the one asked for.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from learnstream.streams.a2e.correlate import LearnTimeout
from learnstream.streams.a2e.messages import (
    RESPONSE_OF,
    AdaptQuery,
    AdaptResult,
    ExperienceResult,
    FeedbackResult,
    LearnAdaptRequest,
    LearnExperienceRequest,
    LearnFeedbackRequest,
    LearnRequest,
    LearnResponse,
    LearnStatsRequest,
    StatsResult,
)
from learnstream.streams.a2e.models import Experience, Feedback, SkillPerformanceRecord
from learnstream.streams.a2e.wire import describe

__all__ = ["LearnAPI", "LearnFailed", "LearnProtocolError", "LearnTimeout", "Transport"]

M = TypeVar("M", bound=BaseModel)


class Transport(Protocol):
    """Send one learn/*/req and return its learn/*/resp."""

    async def request(self, message: LearnRequest) -> LearnResponse:
        """Return the response to ``message``."""
        ...


class LearnFailed(RuntimeError):
    """Raise when the host answered with an error (``code`` as in the response)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class LearnProtocolError(RuntimeError):
    """Raise when the answer is not the response to the request sent."""


class LearnAPI:
    """Submit feedback and experience, adapt, and read stats through ``client``."""

    def __init__(
        self,
        client: Transport,
        *,
        timeout: float = 10.0,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self._client, self._timeout, self._new_id = client, timeout, new_id

    async def send(self, message: LearnRequest) -> LearnResponse:
        """Send ``message``; return its successful response or raise (timeout, error)."""
        try:
            response = await asyncio.wait_for(self._client.request(message), self._timeout)
        except LearnTimeout:
            raise  # the transport's own time-out says which it was
        except TimeoutError:
            kind = message.type.removesuffix("/req")
            raise LearnTimeout(f"no {kind}/resp within {self._timeout:g} s") from None
        expected = RESPONSE_OF[message.type]
        if response.correlation_id != message.correlation_id or not isinstance(response, expected):
            raise LearnProtocolError(f"the answer to {message.type} is not its response")
        if response.error is not None:
            raise LearnFailed(response.error.code, response.error.message)
        return response

    async def feedback(self, **fields: Any) -> FeedbackResult:
        """Submit one feedback: Feedback's fields, with ``prompt``/``response`` for the turn.

        ``correlation_id`` (the request rated) defaults to this message's id.
        """
        message_id = self._new_id()
        turn = {k: fields.pop(k) for k in ("prompt", "response") if k in fields}
        fields.setdefault("correlation_id", message_id)
        if turn:
            fields["rated_turn"] = {"prompt": "", "response": ""} | turn
        return await self._feedbacks(message_id, _valid(Feedback, fields))

    async def reward(
        self, skill_name: str, value: float, correlation_id: str, **extra: Any
    ) -> FeedbackResult:
        """Send a scalar reward in [-1, 1] for ``skill_name`` (an ENV feedback of that score)."""
        polarity = "POSITIVE" if value > 0 else "NEGATIVE" if value < 0 else "NEUTRAL"
        fields = {"correlation_id": correlation_id, "polarity": polarity, "score": value}
        fields |= {"source": "ENV", "skill_name": skill_name} | extra
        return await self._feedbacks(self._new_id(), _valid(Feedback, fields))

    async def _feedbacks(self, message_id: str, *feedbacks: Feedback) -> FeedbackResult:
        request = LearnFeedbackRequest(
            correlation_id=message_id, payload={"feedbacks": list(feedbacks)}
        )
        return _payload(await self.send(request), FeedbackResult)

    async def experience(self, experiences: Iterable[Experience | Mapping[str, Any]]) -> int:
        """Store transitions for replay; return how many the host stored."""
        batch = [
            e if isinstance(e, Experience) else _valid(Experience, dict(e)) for e in experiences
        ]
        request = LearnExperienceRequest(
            correlation_id=self._new_id(), payload={"experiences": batch}
        )
        return _payload(await self.send(request), ExperienceResult).stored

    async def adapt(
        self,
        skill_name: str | None = None,
        strategy: str = "ucb1",
        params: Mapping[str, float] | None = None,
        custom: str | None = None,
        seed: int | None = None,
        as_of: float | None = None,
    ) -> list[SkillPerformanceRecord]:
        """Return the skills ranked by ``strategy``, best first (``seed``, ``as_of``: see
        AdaptQuery)."""
        query = {"skill_name": skill_name, "strategy": strategy, "params": dict(params or {})}
        payload = _valid(AdaptQuery, query | {"custom": custom, "seed": seed, "as_of": as_of})
        request = LearnAdaptRequest(correlation_id=self._new_id(), payload=payload)
        return _payload(await self.send(request), AdaptResult).records

    async def stats(
        self, skill_name: str | None = None, tool_name: str | None = None
    ) -> tuple[list[SkillPerformanceRecord], list[SkillPerformanceRecord]]:
        """Return (skill records, tool records), filtered by the names given."""
        request = LearnStatsRequest(
            correlation_id=self._new_id(),
            payload={"skill_name": skill_name, "tool_name": tool_name},
        )
        result = _payload(await self.send(request), StatsResult)
        return result.skills, result.tools


def _payload(response: LearnResponse, kind: type[M]) -> M:
    payload = response.payload
    if not isinstance(payload, kind):  # send checked the type; this tells mypy
        raise LearnProtocolError(f"{response.type} carries no {kind.__name__}")
    return payload


def _valid(model: type[M], data: dict[str, Any]) -> M:
    """Return ``model(**data)``; raise ValueError naming the bad fields, never their values."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"invalid {model.__name__}: {describe(exc)}") from None
