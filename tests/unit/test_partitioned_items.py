"""Which partition holds a key of a RocksDB table (agents/seams/faust_compat.py seam 12)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from faust.types import TP

from learnstream.agents.seams.faust_compat import partitioned_items
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app
from learnstream.streams.join.expiry import ExpiryIndex, partition_of
from tests.support.apps import close_consumer_loop


def _runtime(tmp_path: Path, store: str) -> Any:
    settings = Settings(data_dir=str(tmp_path), store=store)
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    return wire(app, settings)


async def test_a_rocksdb_table_says_the_partition_of_each_key_of_its_active_partitions(
    tmp_path: Path, monkeypatch: Any
) -> None:
    runtime = _runtime(tmp_path, "rocksdb://")
    table = runtime.tables.plan_state
    store = table.data
    topic = table.changelog_topic.get_topic_name()
    held = {("a", 0): b'{"x":1}', ("b", 2): b'{"x":2}', ("c", 3): b'{"x":3}'}
    for (key, partition), value in held.items():  # as a write of a record of that partition
        store._db_for_partition(partition).put(store._encode_key(key), value)
    actives = {TP(topic, 0), TP(topic, 2)}  # partition 3 went to another worker
    monkeypatch.setattr(table.app.assignor, "assigned_actives", lambda: actives)
    try:
        found = sorted(partitioned_items(table))
        assert found == [("a", b'{"x":1}', 0), ("b", b'{"x":2}', 2)]
    finally:
        for db in store._dbs.values():
            db.close()
        close_consumer_loop(runtime.app)


async def test_a_memory_table_keeps_no_partitions(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, "memory://")
    table = runtime.tables.plan_state
    table.data["k"] = b"v"
    try:
        assert list(partitioned_items(table)) == [("k", b"v", None)]
    finally:
        close_consumer_loop(runtime.app)


def test_a_rebuild_puts_each_key_under_the_partition_that_holds_it() -> None:
    plan_id = "4a4d7e4c-8f5e-4f1b-9c41-1f0c3ad0b7a1"
    raw = b'{"terminal_since":"2026-03-01T12:00:00Z"}'
    other = (partition_of(plan_id, 4) + 1) % 4
    index = ExpiryIndex(4)
    index.rebuild([(plan_id, raw, other)])
    assert set(index._buckets) == {other}
    index.rebuild([(plan_id, raw)])  # no partition known: Kafka's default partitioner's
    assert set(index._buckets) == {partition_of(plan_id, 4)}


def test_a_window_index_is_rebuilt_a_step_a_tick(monkeypatch: Any) -> None:
    """A runs table can hold millions of states: a tick indexes ``SCAN_STEP`` of them."""
    import learnstream.agents.joins.window_store as window_store
    from learnstream.agents.joins.window_store import WindowStore
    from learnstream.streams.join.runs import RunState

    monkeypatch.setattr(window_store, "SCAN_STEP", 3)
    moment = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    table = {
        f"run:execution:{n}": RunState(
            kind="execution", run_id=str(n), record_key=str(n), touched_at=moment
        ).to_table()
        for n in range(7)
    }
    store = WindowStore(table, 1, timedelta(minutes=10), RunState.from_table)  # type: ignore[arg-type]
    later = moment + timedelta(hours=1)
    first = list(store.due(0, later))
    assert len(first) == 3  # what the first step indexed is due at once
    assert not store.quiet.built
    rest = list(store.due(0, later)) + list(store.due(0, later))
    assert store.quiet.built
    assert sorted(first + rest) == sorted(table)
