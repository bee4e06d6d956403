"""Faust's built-in web pages are off on a real worker; /metrics and /quality still answer.

The ``/table/pending/<plan_id>/`` page would serve a parked event's raw, un-anonymized bytes
to anyone on the port: the test parks one (a rejection with PII, whose plan never comes) and
then asks every built-in page for it.
"""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.sim.simulate import PII_SAMPLES, Simulator

pytestmark = pytest.mark.integration

#: Every page Faust 0.15 can mount by itself (tables, router, stats, graph, performance).
BUILTIN_PAGES = (
    "/table/",
    "/table/pending/",
    "/router/",
    "/router/topics",
    "/router/pending/",
    "/assignment/",
    "/graph/",
    "/performance/",
)


def _get(port: int, path: str) -> tuple[int, str]:
    """Return (status, body) of GET ``path`` on the worker's web port."""
    url = f"http://127.0.0.1:{port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our worker
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def _wait_parked(port: int, timeout: float = 60.0) -> None:
    """Wait until the worker's /metrics shows one event parked for its plan."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, body = _get(port, "/metrics")
        if "learnstream_pending_joins 1.0" in body:
            return
        time.sleep(0.5)
    raise AssertionError("the rejection was never parked in the pending table")


async def test_builtin_pages_are_gone_and_ours_answer(broker, start_worker, namespace):
    worker = start_worker(LEARNSTREAM_JOIN__GRACE="600")
    sim = Simulator(seed=5, pii_ratio=1.0)
    snap = sim.plan(datetime.now(UTC))
    plan_id = snap["plan"]["plan_id"]
    rejection = sim.decision(snap, False, datetime.now(UTC))
    async with RuntimePublisher(
        broker.bootstrap, TopicSettings(prefix=namespace), one_record_per_batch=broker.embedded
    ) as pub:
        pub.publish_decision(rejection)  # its plan never comes: it stays parked
    await asyncio.to_thread(_wait_parked, worker.web_port)

    pages = (*BUILTIN_PAGES, f"/table/pending/{plan_id}/", f"/router/pending/{plan_id}/")
    answers = {path: _get(worker.web_port, path) for path in pages}
    assert {path: status for path, (status, _) in answers.items()} == dict.fromkeys(pages, 404)
    for path, (_, body) in answers.items():
        assert plan_id not in body, path
        assert not any(value in body for value in PII_SAMPLES.values()), path

    status, metrics = _get(worker.web_port, "/metrics")
    assert status == 200
    assert "learnstream_pending_joins 1.0" in metrics
    status, quality = _get(worker.web_port, "/quality")
    assert status == 200
    assert '"total_samples"' in quality
    assert _get(worker.web_port, "/") == (200, '{"status":"OK"}')
