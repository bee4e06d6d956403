"""What ``create_app`` and ``wire`` tell Faust: producer batching, table store options."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import (
    FETCH_MAX_WAIT_MS,
    FETCH_MIN_BYTES,
    PREFETCH_BACKOFF_MS,
    BrokerSettings,
    RocksDbSettings,
    Settings,
)
from learnstream.streams.io.app import create_app
from learnstream.streams.io.topics import MAX_MESSAGE_BYTES


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("LEARNSTREAM_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize(("embedded", "batch"), [(True, 1), (False, 1024 * 1024)])
async def test_producer_batches_unless_the_broker_needs_one_record_per_batch(
    tmp_path: Path, embedded: bool, batch: int
) -> None:
    settings = Settings(data_dir=str(tmp_path), broker=BrokerSettings(linger_ms=7))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=embedded)
    assert app.conf.producer_max_batch_size == batch
    assert app.conf.producer_linger == pytest.approx(0.007)
    assert app.conf.producer_acks == -1


async def test_a_poll_hands_over_a_bounded_number_of_records_and_fetches_the_largest(
    tmp_path: Path,
) -> None:
    """The poll bound keeps a restore's memory down; the fetch size must still hold the
    largest input record, since aiokafka skips a record larger than it."""
    app = create_app(Settings(data_dir=str(tmp_path)), "kafka://127.0.0.1:9", embedded=False)
    assert app.conf.broker_max_poll_records == 1000
    assert app.conf.consumer_max_fetch_size >= MAX_MESSAGE_BYTES
    settings = Settings(data_dir=str(tmp_path), broker=BrokerSettings(max_poll_records=50))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    assert app.conf.broker_max_poll_records == 50


async def test_rocksdb_tables_get_the_memory_bounds(tmp_path: Path) -> None:
    bounds = RocksDbSettings(write_buffer_mib=4, max_write_buffers=3, block_cache_mib=8)
    settings = Settings(data_dir=str(tmp_path), store="rocksdb://", rocksdb=bounds)
    runtime = wire(create_app(settings, "kafka://127.0.0.1:9", embedded=False), settings)
    expected = {
        "write_buffer_size": 4 * 1024 * 1024,
        "max_write_buffer_number": 3,
        "block_cache_size": 8 * 1024 * 1024,
        "block_cache_compressed_size": 8 * 1024 * 1024,
    }
    tables = [runtime.tables.plan_state, runtime.tables.pending]
    assert [t.options for t in tables] == [expected] * 2
    assert all(t.options == expected for t in runtime.app.tables.values())


async def test_memory_store_gets_no_rocksdb_options(tmp_path: Path) -> None:
    settings = Settings(data_dir=str(tmp_path))
    runtime = wire(create_app(settings, "kafka://127.0.0.1:9", embedded=False), settings)
    assert all(t.options is None for t in runtime.app.tables.values())


def test_start_up_objects_are_frozen_out_of_the_collector() -> None:
    import gc

    from learnstream.agents.worker import freeze_startup_objects

    marker = [object()]  # a container: tracked by the collector until frozen
    try:
        frozen = freeze_startup_objects()
        # Frozen objects can still be freed (another thread of the test process may drop
        # some between the two counts), and nothing else freezes: the count can only fall.
        assert 0 < gc.get_freeze_count() <= frozen
        assert not any(o is marker for o in gc.get_objects())  # no longer scanned
    finally:
        gc.unfreeze()
    assert any(o is marker for o in gc.get_objects())


def test_exactly_once_on_the_embedded_broker_is_refused_with_a_reason() -> None:
    from learnstream.agents.worker import guarantee_problem
    from learnstream.streams.config.settings import Settings

    eos = Settings(processing_guarantee="exactly_once")
    problem = guarantee_problem(eos, embedded=True)
    assert problem is not None
    assert "LEARNSTREAM_BROKER_URL" in problem
    assert "transactions" in problem
    assert guarantee_problem(eos, embedded=False) is None
    assert guarantee_problem(Settings(), embedded=True) is None


@pytest.mark.parametrize(
    ("asked", "libraries"),
    [
        ("debug", "INFO"),
        ("DEBUG", "INFO"),
        ("notset", "INFO"),
        ("info", "INFO"),
        ("warning", "WARNING"),
    ],
)
def test_debug_is_learnstreams_own_never_the_libraries(asked: str, libraries: str) -> None:
    """Faust's, aiokafka's and Presidio's debug lines print raw records and analysed text."""
    from learnstream.agents.worker import library_log_level

    assert library_log_level(asked) == libraries


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ({}, (FETCH_MAX_WAIT_MS, FETCH_MIN_BYTES)),
        ({"fetch_max_wait_ms": 25, "fetch_min_bytes": 1}, (25, 1)),
    ],
)
async def test_the_workers_consumer_asks_for_fetches_answered_within_the_wait(
    tmp_path: Path, setting: dict[str, int], expected: tuple[int, int]
) -> None:
    """Faust writes a 1500-ms fetch wait into its aiokafka consumer, and aiokafka asks for a
    byte; the settings replace both (seam 15): records of busy partitions wait behind a fetch
    of quiet ones that long, and a fetch answered at its first byte carries one record."""
    from aiokafka import AIOKafkaConsumer

    from tests.support.apps import close_consumer_loop

    settings = Settings(data_dir=str(tmp_path), broker=BrokerSettings(**setting))
    runtime = wire(create_app(settings, "kafka://127.0.0.1:9", embedded=False), settings)
    thread = runtime.app.consumer._thread
    try:
        built = thread._create_worker_consumer(thread.transport)
        assert isinstance(built, AIOKafkaConsumer)
        assert (built._fetch_max_wait_ms, built._fetch_min_bytes) == expected
        await built.stop()  # never started: closes its client
    finally:
        close_consumer_loop(runtime.app)


@pytest.mark.parametrize(
    ("setting", "expected"), [({}, PREFETCH_BACKOFF_MS / 1000), ({"prefetch_backoff_ms": 0}, 0.0)]
)
async def test_the_workers_fetcher_holds_a_fetch_back_briefly_for_records_not_handed_over(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    setting: dict[str, int],
    expected: float,
) -> None:
    """aiokafka's fetcher keeps a broker's next fetch back 100 ms while a batch it buffered
    waits to be handed over, and Faust never hands over a partition it paused; the setting
    replaces that wait on the fetcher ``start()`` makes (seam 18). Started here without a
    broker: ``start()`` is replaced by one that makes the fetcher as aiokafka's does."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka.consumer.fetcher import Fetcher

    from tests.support.apps import close_consumer_loop

    async def start(self: AIOKafkaConsumer) -> None:
        self._fetcher = Fetcher(self._client, self._subscription)

    settings = Settings(data_dir=str(tmp_path), broker=BrokerSettings(**setting))
    runtime = wire(create_app(settings, "kafka://127.0.0.1:9", embedded=False), settings)
    monkeypatch.setattr(AIOKafkaConsumer, "start", start)  # after wire()'s seam check
    thread = runtime.app.consumer._thread
    try:
        built = thread._create_worker_consumer(thread.transport)
        await built.start()
        assert built._fetcher._prefetch_backoff == expected
        await built._fetcher.close()
        await built.stop()
    finally:
        close_consumer_loop(runtime.app)


def test_a_fetch_wait_out_of_range_is_refused() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="fetch_max_wait_ms"):
        BrokerSettings(fetch_max_wait_ms=0)
    with pytest.raises(ValidationError, match="fetch_min_bytes"):
        BrokerSettings(fetch_min_bytes=0)
    with pytest.raises(ValidationError, match="prefetch_backoff_ms"):
        BrokerSettings(prefetch_backoff_ms=-1)
