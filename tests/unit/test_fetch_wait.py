"""The worker's consumer waits briefly in a fetch on the embedded broker (seam 14).

The embedded broker holds a fetch until its wait ends, records or not, so Faust's 1.5 s
wait was the latency of every record read there; Apache Kafka answers as records arrive
and keeps Faust's wait unless ``LEARNSTREAM_BROKER__FETCH_MAX_WAIT_MS`` says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator

import faust
import pytest
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

from agents.faust_compat import fetch_wait
from streams.config.settings import Settings
from streams.io.app import EMBEDDED_FETCH_WAIT_MS, fetch_wait_ms


@pytest.fixture
def restore_faust() -> Iterator[None]:
    original = AIOKafkaConsumerThread._create_worker_consumer
    yield
    AIOKafkaConsumerThread._create_worker_consumer = original  # type: ignore[method-assign]


def _worker_consumer_wait() -> int:
    app = faust.App("fetch-wait-test", broker="kafka://127.0.0.1:9", autodiscover=False)
    consumer = app.consumer._thread._create_worker_consumer(app.transport)  # type: ignore[attr-defined]
    return int(consumer._fetch_max_wait_ms)


@pytest.mark.parametrize(
    ("configured", "embedded", "wait"),
    [(None, True, EMBEDDED_FETCH_WAIT_MS), (None, False, None), (250, True, 250), (40, False, 40)],
)
def test_the_wait_by_broker_and_setting(configured: int | None, embedded: bool, wait: int | None):
    settings = Settings.model_validate({"broker": {"fetch_max_wait_ms": configured}})
    assert fetch_wait_ms(settings, embedded) == wait


async def test_the_consumer_faust_builds_next_waits_as_told(restore_faust: None) -> None:
    assert _worker_consumer_wait() == 1500  # Faust's own
    fetch_wait(120)
    assert _worker_consumer_wait() == 120
    fetch_wait(80)  # a second call replaces the first, it does not wrap it
    assert _worker_consumer_wait() == 80
    assert AIOKafkaConsumerThread._create_worker_consumer.__wrapped__.__qualname__ == (
        "AIOKafkaConsumerThread._create_worker_consumer"
    )
