"""Agent: A2E learn requests (``a2e.learn.requests``) -> samples, stats, rankings, responses.

Every request is answered on ``a2e.learn.responses`` keyed by its correlation id. Feedback
and experience writes are in agents/learning/samples.py, the skill stats in
agents/learning/stats.py, the HTTP views in agents/learning/http_views.py. An invalid
request goes to the DLQ (``runtime.guarded``) and, when its correlation id is readable, gets
an error response too; so does one whose strategy is unknown (that one is no DLQ matter).

Stats and adapt answer from every partition's stats (agents/learning/view.py), once the
worker's reader has caught up with the changelog. ``adapt`` ranks by the rolling success
rate as of the request's ``as_of``, else its record's Kafka timestamp (the wiring's clock
only for a record without one), with the request's seed or one derived from its correlation
id (streams/a2e/stats_view.py): two workers asked the same request weigh and draw alike,
and successive requests explore.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import orjson
from faust.types import EventT, StreamT

from learnstream.agents.learning import http_views as learn_http
from learnstream.agents.learning.samples import LearnWriter
from learnstream.agents.learning.stats import SkillTable
from learnstream.agents.runtime import Runtime
from learnstream.streams.a2e.messages import (
    RESPONSE_OF,
    AdaptResult,
    ExperienceResult,
    FeedbackResult,
    LearnAdaptRequest,
    LearnError,
    LearnExperienceRequest,
    LearnFeedbackRequest,
    LearnRequest,
    LearnResponse,
    StatsResult,
)
from learnstream.streams.a2e.stats_view import adapt_seed, rank_skills
from learnstream.streams.a2e.strategies import StrategyError
from learnstream.streams.a2e.wire import encode, parse_request
from learnstream.streams.config.settings import A2ESettings
from learnstream.streams.dlq.errors import InvalidEvent

__all__ = ["error_response", "register", "respond", "strategy_params"]

Payload = FeedbackResult | ExperienceResult | AdaptResult | StatsResult
Source = tuple[str, int]


def respond(
    kind: str, correlation_id: str, payload: Any = None, error: Any = None
) -> LearnResponse:
    """Return the response to a request of type ``kind``: its payload, or an error."""
    model = RESPONSE_OF.get(kind, RESPONSE_OF["learn/feedback/req"])
    if error is not None:
        return cast(LearnResponse, model(correlation_id=correlation_id, ok=False, error=error))
    return cast(LearnResponse, model(correlation_id=correlation_id, payload=payload))


def error_response(data: bytes | None, code: str, message: str) -> LearnResponse | None:
    """Return the error response to a raw request, or None without a readable id.

    An unknown type is answered as learn/feedback/resp: the id is what the caller waits on.
    """
    try:
        raw = orjson.loads(data or b"")
    except orjson.JSONDecodeError:
        return None
    cid = raw.get("correlation_id") if isinstance(raw, dict) else None
    if not isinstance(cid, str) or not cid:
        return None
    try:
        error = LearnError.model_validate({"code": code, "message": message[:2000]})
        return respond(str(raw.get("type")), cid, error=error)
    except ValueError:  # not an id a runtime may send
        return None


def strategy_params(strategy: str, a2e: A2ESettings, given: dict[str, float]) -> dict[str, float]:
    """Return the strategy's parameters: the settings', overridden by the request's.

    A fixed ``epsilon``/``temperature`` in the settings applies unless the request gives
    its own ``c`` (it asks for the decaying form) or its own fixed value.
    """
    fixed = {
        "epsilon_greedy": ("epsilon", a2e.epsilon),
        "softmax": ("temperature", a2e.temperature),
    }
    c = {"ucb1": a2e.ucb1_c, "epsilon_greedy": a2e.epsilon_c, "softmax": a2e.softmax_c}
    params = {"c": c[strategy]} if strategy in c else {}
    name, value = fixed.get(strategy, ("", None))
    if value is not None and "c" not in given:
        params[name] = value
    return params | given


class _Learn:
    """The learn agent's steps over the runtime, the writer and the skill stats."""

    def __init__(self, runtime: Runtime, stats: SkillTable, clock: Callable[[], float]) -> None:
        self.runtime, self.stats, self.metrics = runtime, stats, runtime.metrics
        self.clock = clock
        self.writer = LearnWriter(runtime, stats)

    async def handle(self, event: EventT[bytes]) -> None:
        """Answer one request; an invalid or failing one gets an error answer, then raises."""
        msg, source = event.message, (event.message.topic, event.message.partition)
        at = msg.timestamp if msg.timestamp else self.clock()
        try:
            request = parse_request(msg.value or b"")
        except InvalidEvent as exc:
            await self.answer_raw(msg.value, "invalid_request", exc.detail, source)
            raise
        try:
            response = respond(
                request.type, request.correlation_id, await self.dispatch(request, source, at)
            )
        except StrategyError as exc:
            error = LearnError(code="unknown_strategy", message=str(exc))
            response = respond(request.type, request.correlation_id, error=error)
        except Exception:
            await self.answer_raw(
                msg.value, "internal", "the worker failed on this request", source
            )
            raise
        await self.answer(response, source)

    async def answer_raw(self, data: bytes | None, code: str, text: str, source: Source) -> None:
        """Send an error response when the request's correlation id is readable."""
        response = error_response(data, code, text)
        if response is not None:
            await self.answer(response, source)

    async def answer(self, response: LearnResponse, source: Source) -> None:
        """Send ``response`` keyed by its correlation id, in the transaction of ``source``."""
        topic, key = self.runtime.topics.learn_responses, response.correlation_id.encode()
        await self.runtime.produce(topic, key, encode(response), source)
        kind, result = response.type.split("/")[1], "ok" if response.ok else "error"
        self.metrics.child(self.metrics.learn_requests, kind, result).inc()

    async def dispatch(self, request: LearnRequest, source: Source, at: float) -> Payload:
        """Do what ``request`` asks (received at ``at``); return its response's payload."""
        if isinstance(request, LearnFeedbackRequest):
            return await self.writer.feedback(request.payload.feedbacks, source)
        if isinstance(request, LearnExperienceRequest):
            key = request.correlation_id.encode()
            return await self.writer.experiences(request.payload.experiences, key, source)
        await self.stats.caught_up()
        if isinstance(request, LearnAdaptRequest):
            return self.adapt(request, at)
        return self.stats.result(request.payload)

    def adapt(self, request: LearnAdaptRequest, at: float) -> AdaptResult:
        """Rank the skills (plus the one named, as an untried arm, if unseen), seeded, as of
        the query's ``as_of``, else ``at``."""
        query, a2e = request.payload, self.runtime.settings.a2e
        params = strategy_params(query.strategy, a2e, dict(query.params))
        seed = adapt_seed(query, a2e.seed, request.correlation_id)
        now = query.as_of if query.as_of is not None else at
        ranked = rank_skills(self.stats.stats("skill"), query, params, seed, now)
        return AdaptResult(records=ranked)


def register(runtime: Runtime) -> None:
    """Register the learn agent (with the skill stats table) and the ``/learn/*`` views; the
    runtime's clock stands in for a request record without a timestamp."""
    steps = _Learn(runtime, runtime.skill_stats, lambda: runtime.clock().timestamp())

    @runtime.app.agent(runtime.topics.learn_requests, name="learnstream.learn")
    async def learn(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("learn", event, steps.handle)

    learn_http.register(runtime)
