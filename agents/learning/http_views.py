"""HTTP views of the A2E learn capability on the worker's web server.

``POST /learn/feedback`` (``{"feedbacks": [...]}`` or one feedback object),
``POST /learn/experience`` (``{"experiences": [...]}`` or a list), ``POST /learn/adapt``
(``{"strategy": ..., "params": {...}}``), ``GET /learn/stats?skill_name=&tool_name=``.
The body is the request's payload; the correlation id comes from the ``X-Correlation-Id``
header (else a fresh UUID). A view validates (400 naming the field, never a value), puts
the request on ``a2e.learn.requests`` and awaits its response, read by a
:class:`ResponseListener` of this worker: samples leave from inside the learn agent only.
The body answered is the learn/*/resp message; 504 when none came within
``a2e.response_timeout``. ``GET /learn/stats`` answers on the worker asked, without the
round trip (it sends nothing), from every partition's stats once its changelog reader has
caught up (agents/learning/view.py).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
from faust.web import Request, Response, View

from learnstream.agents.runtime import Runtime
from learnstream.streams.a2e.correlate import Correlator, LearnTimeout
from learnstream.streams.a2e.messages import (
    LearnRequest,
    LearnResponse,
    LearnStatsRequest,
    LearnStatsResponse,
)
from learnstream.streams.a2e.wire import encode, parse_request
from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.io.a2e_transport import ResponseListener
from learnstream.streams.io.connection import app_connection

__all__ = ["STATUS_OF", "Gateway", "register"]

#: HTTP status of an error response, by its code.
STATUS_OF = {"invalid_request": 400, "unknown_strategy": 400, "timeout": 504, "unavailable": 503}
_WRAP = {"learn/feedback/req": "feedbacks", "learn/experience/req": "experiences"}


class Gateway:
    """Put requests on the requests topic and await their responses (started on first use)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        timeout = runtime.settings.a2e.response_timeout.total_seconds()
        self.correlator = Correlator(timeout)
        broker = app_connection(runtime.app, runtime.settings.broker)  # TLS / SASL too
        topic = runtime.topics.learn_responses.get_topic_name()
        self.listener = ResponseListener(broker, topic, self.correlator)
        self._started: asyncio.Task[None] | None = None

    async def answer(self, request: LearnRequest) -> LearnResponse:
        """Return the response to ``request``: stats from this worker's view, the rest
        through the requests topic and the learn agent."""
        if isinstance(request, LearnStatsRequest):
            stats = self.runtime.skill_stats
            await stats.caught_up()
            result = stats.result(request.payload)
            return LearnStatsResponse(correlation_id=request.correlation_id, payload=result)
        return await self.exchange(request)

    async def exchange(self, request: LearnRequest) -> LearnResponse:
        """Send ``request``; return its response (LearnTimeout after the time-out)."""
        if self._started is None or (self._started.done() and self._started.exception()):
            self._started = asyncio.ensure_future(self.listener.start())  # (again) on first use
        await asyncio.shield(self._started)
        return await self.correlator.exchange(request, self._send)

    async def _send(self, request: LearnRequest) -> None:
        # A request, not data: outside any transaction, like the sweeper's ticks.
        topic = self.runtime.topics.learn_requests.get_topic_name()
        key = request.correlation_id.encode()
        ack = await self.runtime.app.producer.send(topic, key, encode(request), None, None, None)
        await ack

    async def stop(self, *_args: Any, **_kwargs: Any) -> None:
        """Stop the listener (the worker shuts down)."""
        if self._started is not None:
            await self.listener.stop()


def _request(kind: str, body: Any, correlation_id: str) -> LearnRequest:
    """Return the request of a view's body; raise InvalidEvent naming what is wrong."""
    wrap = _WRAP.get(kind)
    if wrap and isinstance(body, dict) and wrap not in body:
        body = {wrap: [body]}
    elif wrap and isinstance(body, list):
        body = {wrap: body}
    if not isinstance(body, dict):
        raise InvalidEvent("schema_violation", "the body must be a JSON object")
    return parse_request({"type": kind, "correlation_id": correlation_id, "payload": body})


def _view(gateway: Gateway, kind: str, method: str) -> type[View]:
    async def handle(self: View, request: Request) -> Response:
        correlation_id = request.headers.get("X-Correlation-Id") or str(uuid.uuid4())
        try:
            body = _query(request) if method == "get" else orjson.loads(await request.read())
            message = _request(kind, body, correlation_id)
        except orjson.JSONDecodeError:
            return self.error(400, "the body is not valid JSON")
        except InvalidEvent as exc:
            return self.error(400, exc.detail)
        try:
            response = await gateway.answer(message)
        except LearnTimeout as exc:
            return self.error(504, str(exc))
        except ValueError:  # the same correlation id is already in flight
            return self.error(409, "a request with this X-Correlation-Id is in flight")
        status = 200 if response.error is None else STATUS_OF.get(response.error.code, 500)
        return self.json(response.model_dump(mode="json"), status=status)

    return type(f"Learn{kind.split('/')[1].title()}", (View,), {method: handle})


def _query(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query.items() if k in ("skill_name", "tool_name")}


def register(runtime: Runtime) -> Gateway:
    """Mount the four ``/learn/*`` views; stop their listener when the worker stops."""
    gateway, app = Gateway(runtime), runtime.app
    for kind, method, path in (
        ("learn/feedback/req", "post", "/learn/feedback"),
        ("learn/experience/req", "post", "/learn/experience"),
        ("learn/adapt/req", "post", "/learn/adapt"),
        ("learn/stats/req", "get", "/learn/stats"),
    ):
        app.page(path)(_view(gateway, kind, method))
    app.on_before_shutdown.connect(gateway.stop)
    return gateway
