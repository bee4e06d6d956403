"""No input value leaves through an error: logs, DLQ headers, exception messages, metrics.

PII (an email, a phone number, a card number, an AWS key) is planted in invalid records of
every input topic kind: in every field of a valid record in turn, as a key, as JSON that does
not parse, as bytes that are not UTF-8. The records go through the decoders and through the
worker's dead-letter path (agents with a recording producer, as tests/unit/test_agents.py
does). The DLQ *value* keeps the runtime's original bytes (docs/architecture.md §6): it is
not checked.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from unittest.mock import AsyncMock

import faust
import orjson
import pytest
from prometheus_client import generate_latest

import learnstream.streams.join.routes
from learnstream.agents.runtime import Runtime
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.io.app import create_app
from learnstream.streams.mplp.decode import (
    RecordOrigin,
    decode_consent,
    decode_decision,
    decode_delta,
    decode_plan,
    decode_stage,
)
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.sim.simulate import Simulator
from tests.support.apps import close_consumer_loop
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.offsets import FakeEnds
from tests.support.outputs import AGENT_OF, Feed, mock_outputs

PLANTED = {
    "email": "dana.leak@example.org",
    "phone": "+1 415-555-0177",
    "card": "4111 1111 1111 1111",
    "aws_key": "AKIA" + "QLEAKQLEAKQLEAK7",
}
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ORIGIN = RecordOrigin("mplp.x", 0, 7, WHEN)


def _templates() -> dict[str, dict[str, Any]]:
    """Return one valid record of every input topic kind."""
    sim = Simulator(seed=4, pii_ratio=0.0)
    snap = sim.plan(WHEN, sim.uuid())
    return {
        "plans": snap,
        "plan_approved": sim.decision(snap, True, WHEN),
        "plan_rejected": sim.decision(snap, False, WHEN),
        "delta_intents": sim.delta(snap, WHEN, impact=True),
        "pipeline_stage": sim.stage(snap, "completed", WHEN),
        "consent": {"project_id": sim.uuid(), "enabled": False},
    }


DECODERS: dict[str, Callable[[bytes | None], Any]] = {
    "plans": decode_plan,
    "plan_approved": lambda data: decode_decision(data, "plan_approved", origin=ORIGIN),
    "plan_rejected": lambda data: decode_decision(data, "plan_rejected", origin=ORIGIN),
    "delta_intents": lambda data: decode_delta(data, origin=ORIGIN),
    "pipeline_stage": lambda data: decode_stage(data, origin=ORIGIN),
    "consent": decode_consent,
}


def _paths(obj: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Yield the path of every node below obj (dict keys and list indexes)."""
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    for key, child in items:
        yield (*at, key)
        yield from _paths(child, (*at, key))


def _replaced(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    """Return a copy of obj with the node at path set to value."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, dict):
        return {**obj, head: _replaced(obj[head], rest, value)}
    return [_replaced(c, rest, value) if i == head else c for i, c in enumerate(obj)]


def _with_key(obj: Any, path: tuple[Any, ...], key: str) -> Any:
    """Return a copy of obj with an extra ``key`` in the dict at path (if it is one)."""
    node = obj
    for step in path:
        node = node[step]
    if not isinstance(node, dict):
        return obj
    return _replaced(obj, path, {**node, key: 1})


def bad_records(kind: str) -> Iterator[tuple[str, bytes]]:
    """Yield (how, bytes) of records of ``kind`` carrying a planted value, mostly invalid."""
    template = _templates()[kind]
    for name, value in PLANTED.items():
        yield f"{name} not utf-8", value.encode() + b"\xff\xfe"
        yield f"{name} bad json", b'{"note": "' + value.encode() + b'", '
        yield f"{name} bare string", orjson.dumps(value)
        yield f"{name} as root key", orjson.dumps({value: template})
        for path in [(), *_paths(template)]:
            where = ".".join(map(str, path)) or "<root>"
            yield f"{name} as key in {where}", orjson.dumps(_with_key(template, path, value))
            if path:
                yield f"{name} at {where}", orjson.dumps(_replaced(template, path, value))
                nested = {"x": [value]}
                yield f"{name} nested at {where}", orjson.dumps(_replaced(template, path, nested))
                number = int("".join(ch for ch in value if ch.isdigit()) or "7")
                yield f"{name} digits at {where}", orjson.dumps(_replaced(template, path, number))


def planted_in(text: str) -> list[str]:
    """Return the planted values (or their digits) that occur in text."""
    found = [v for v in PLANTED.values() if v in text]
    digits = ["".join(ch for ch in v if ch.isdigit()) for v in PLANTED.values()]
    return found + [d for d in digits if len(d) >= 8 and d in text]


# --- the decoders -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(DECODERS))
def test_decoder_errors_and_logs_carry_no_input_value(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    leaks = []
    for how, data in bad_records(kind):
        try:
            DECODERS[kind](data)
        except InvalidEvent as exc:
            shown = f"{exc} | {exc.detail} | {exc.reason} | {exc!r} | {exc.args}"
            if planted_in(shown):
                leaks.append(f"{how}: {shown[:300]}")
    assert not leaks, f"{len(leaks)} {kind} decoder errors carry input values:\n" + "\n".join(
        leaks[:15]
    )
    assert not planted_in(caplog.text)


# --- the worker's dead-letter path -----------------------------------------------------------


@dataclass
class Worker:
    """Every agent wired, the producer recording what each output topic gets."""

    app: faust.App
    runtime: Runtime
    dlq: AsyncMock
    feed: Feed

    async def put(self, kind: str, value: bytes, key: bytes = b"k") -> None:
        topic = self.runtime.settings.topics.name(kind)
        await self.feed.put(AGENT_OF[kind], topic, value, key=key)

    def headers(self) -> list[tuple[str, bytes]]:
        return [h for call in self.dlq.await_args_list for h in call.kwargs["headers"]]


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[Worker]:
    settings = Settings(store="memory://", sample_format="json", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings, ends=FakeEnds())
    mocks = mock_outputs(app, runtime)
    yield Worker(app, runtime, mocks["dlq"], Feed(app))
    close_consumer_loop(app)


def _visible(worker: Worker, caplog: pytest.LogCaptureFixture) -> dict[str, str]:
    """Return everything an operator sees: logs (with tracebacks), DLQ headers, metrics."""
    formatter = logging.Formatter()
    logs = "\n".join(
        f"{r.getMessage()} {formatter.formatException(r.exc_info) if r.exc_info else ''}"
        for r in caplog.records
    )
    headers = "\n".join(f"{k}={v.decode('utf-8', 'replace')}" for k, v in worker.headers())
    metrics = generate_latest(worker.runtime.metrics.registry).decode()
    return {"logs": logs, "DLQ headers": headers, "metrics": metrics}


def _sample_of_each_way(kind: str) -> list[tuple[str, bytes]]:
    """Return a spread of bad records of kind: every way, for a few fields."""
    keep = ("utf-8", "json", "bare", "root key", "<root>", "event_id", "plan_id", "timestamp")
    records = [(how, data) for how, data in bad_records(kind) if any(k in how for k in keep)]
    return records[:: max(1, len(records) // 40)]


@pytest.mark.parametrize("kind", list(AGENT_OF))
async def test_dead_letters_show_no_input_value(
    kind: str, worker: Worker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    records = _sample_of_each_way(kind)
    for _, data in records:
        await worker.put(kind, data)
    assert worker.dlq.await_count >= len(records) // 2  # most of them are invalid
    for where, text in _visible(worker, caplog).items():
        assert not planted_in(text), f"{kind}: planted values in {where}: {planted_in(text)}"


async def test_a_builder_failure_shows_no_input_value(
    worker: Worker, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A builder bug that raises pydantic's error, whose text holds ``input_value=...``."""

    def broken_builder(*_args: Any, **_kwargs: Any) -> Any:
        LearningSample.model_validate({"sample_id": PLANTED["email"], "input": PLANTED["card"]})

    monkeypatch.setattr(learnstream.streams.join.routes, "on_decision", broken_builder)
    caplog.set_level(logging.DEBUG)
    await worker.put("plan_approved", orjson.dumps(_templates()["plan_approved"]))
    worker.dlq.assert_awaited_once()
    assert dict(worker.headers())["reason"] == b"builder_error"
    for where, text in _visible(worker, caplog).items():
        assert not planted_in(text), f"builder failure: planted values in {where}"
