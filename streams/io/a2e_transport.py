"""Transports for :class:`learnstream.streams.a2e.client.LearnAPI`: Kafka and HTTP.

- :class:`KafkaTransport` produces each request to ``a2e.learn.requests`` (keyed by its
  correlation id) and reads every partition of ``a2e.learn.responses`` from its end, without
  a consumer group, handing each response to a :class:`Correlator`.
- :class:`HttpTransport` posts to a worker's ``/learn/*`` views.

:class:`ResponseListener` is the responses reader both the Kafka transport and the worker's
HTTP views use: whichever worker answers a request, every listener sees the response.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType
from typing import Any

import aiohttp
import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from learnstream.streams.a2e.correlate import Correlator, LearnTimeout
from learnstream.streams.a2e.messages import LearnRequest, LearnResponse
from learnstream.streams.a2e.sync_client import SyncLearnAPI
from learnstream.streams.a2e.wire import encode, parse_response
from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.io.connection import Broker, connection_of
from learnstream.streams.io.reader import consumer_at_end

__all__ = [
    "PATHS",
    "HttpTransport",
    "KafkaTransport",
    "ResponseListener",
    "learn_over_http",
    "learn_over_kafka",
]

log = logging.getLogger("learnstream")

#: The HTTP view of each request type.
PATHS = {
    "learn/feedback/req": ("POST", "/learn/feedback"),
    "learn/experience/req": ("POST", "/learn/experience"),
    "learn/adapt/req": ("POST", "/learn/adapt"),
    "learn/stats/req": ("GET", "/learn/stats"),
}


class ResponseListener:
    """Read every partition of the responses topic from its end; deliver to a correlator."""

    def __init__(self, broker: Broker, topic: str, correlator: Correlator) -> None:
        self.broker, self.topic, self.correlator = broker, topic, correlator
        self.invalid = 0
        self._consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Assign every partition at its end (resolved now: nothing sent after is missed)."""
        consumer = await consumer_at_end(self.broker, self.topic)
        self._consumer = consumer
        self._task = asyncio.create_task(self._run(consumer))

    async def _run(self, consumer: AIOKafkaConsumer) -> None:
        while True:
            batches = await consumer.getmany(timeout_ms=500)
            for records in batches.values():
                for record in records:
                    self._deliver(record.value)

    def _deliver(self, value: bytes | None) -> None:
        try:
            response = parse_response(value or b"")
        except InvalidEvent:
            self.invalid += 1  # not ours to judge: the DLQ is the worker's
            return
        self.correlator.deliver(response)

    async def stop(self) -> None:
        """Stop reading."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._consumer is not None:
            await self._consumer.stop()
        self._task = self._consumer = None


class KafkaTransport:
    """LearnAPI over Kafka: ``async with KafkaTransport(broker, requests, responses)``."""

    def __init__(
        self, broker: Broker, requests: str, responses: str, *, timeout: float = 10.0
    ) -> None:
        self.broker, self.requests = broker, requests
        self.correlator = Correlator(timeout)
        self.listener = ResponseListener(broker, responses, self.correlator)
        self._producer: AIOKafkaProducer | None = None

    async def __aenter__(self) -> KafkaTransport:
        await self.listener.start()
        self._producer = AIOKafkaProducer(**connection_of(self.broker).client_options())
        await self._producer.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._producer is not None:
            await self._producer.stop()
        await self.listener.stop()

    async def request(self, message: LearnRequest) -> LearnResponse:
        """Send ``message`` and return its response (LearnTimeout after the time-out)."""
        return await self.correlator.exchange(message, self._send)

    async def _send(self, message: LearnRequest) -> None:
        if self._producer is None:
            raise RuntimeError("use KafkaTransport in `async with`")
        key = message.correlation_id.encode()
        await self._producer.send_and_wait(self.requests, encode(message), key=key)


class HttpTransport:
    """LearnAPI over a worker's HTTP views: ``async with HttpTransport("http://host:6066")``.

    ``token`` is the worker's ``LEARNSTREAM_WEB__TOKEN``, sent as a bearer token.
    """

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        self.base_url, self.timeout = base_url.rstrip("/"), timeout
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> HttpTransport:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._session is not None:
            await self._session.close()

    async def request(self, message: LearnRequest) -> LearnResponse:
        """Send ``message`` to its view; return the response (LearnTimeout on a 504)."""
        if self._session is None:
            raise RuntimeError("use HttpTransport in `async with`")
        method, path = PATHS[message.type]
        headers = {"X-Correlation-Id": message.correlation_id, **self._auth}
        payload = message.payload.model_dump(mode="json", exclude_none=True)
        options: dict[str, Any] = {"headers": headers}
        if method == "GET":
            options["params"] = {k: str(v) for k, v in payload.items()}
        else:
            options["json"] = payload
        async with self._session.request(method, self.base_url + path, **options) as answer:
            body = await answer.read()
            if answer.status == 504:
                raise LearnTimeout(_error_text(body))
            if "correlation_id" not in body.decode(errors="replace"):
                raise RuntimeError(f"HTTP {answer.status}: {_error_text(body)}")
            return parse_response(body)


def _error_text(body: bytes) -> str:
    try:
        return str(orjson.loads(body).get("error", ""))
    except (orjson.JSONDecodeError, AttributeError):
        return body.decode(errors="replace")[:200]


def learn_over_http(
    base_url: str, token: str | None = None, *, timeout: float = 10.0
) -> SyncLearnAPI:
    """Return a synchronous learn client of the worker at ``base_url``."""
    return SyncLearnAPI(lambda: HttpTransport(base_url, token, timeout=timeout), timeout=timeout)


def learn_over_kafka(
    broker: Broker,
    requests: str = "a2e.learn.requests",
    responses: str = "a2e.learn.responses",
    *,
    timeout: float = 10.0,
) -> SyncLearnAPI:
    """Return a synchronous learn client over the requests and responses topics."""
    return SyncLearnAPI(
        lambda: KafkaTransport(broker, requests, responses, timeout=timeout), timeout=timeout
    )
