"""The memory suite's changelog preload: the records a worker would have written (issue 31)."""

from __future__ import annotations

from datetime import UTC, datetime
from statistics import mean
from typing import Any

import orjson
import pytest
from aiokafka.partitioner import DefaultPartitioner

from benchmarks.memory import plan_records, restore_remaining
from benchmarks.preload import changelog_record, changelog_topic, templates_of, varied_records
from benchmarks.readback import changelog_table
from benchmarks.report import _memory
from learnstream.agents.joins.planstore import PlanStore
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app
from learnstream.streams.io.tables import Tables
from learnstream.streams.join.expiry import ExpiryIndex, partition_of, stored_plan_id
from learnstream.streams.join.rules import plan_key
from learnstream.streams.mplp.decode import decode_plan
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.state.plan import PlanState, merge_snapshot

AT = datetime(2026, 11, 26, 3, 0, 0, 123_456, tzinfo=UTC)  # no whole second: same length
PARTITIONS = 4


@pytest.fixture(scope="module")
def plan_state_table() -> Any:
    """The worker's own plan_state table (no broker is contacted)."""
    settings = Settings(app_id="bench-memory-rocksdb-preload-1a2b3c")
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    return Tables.declare(app, settings).plan_state


def test_the_topic_is_the_changelog_faust_declares_for_the_worker_table(
    plan_state_table: Any,
) -> None:
    app_id = "bench-memory-rocksdb-preload-1a2b3c"
    assert changelog_topic(app_id) == plan_state_table.changelog_topic_name
    assert changelog_table(changelog_topic(app_id), app_id) == "plan_state"
    assert plan_state_table.changelog_topic.partitions == Settings().topics.partitions


def test_a_record_holds_what_plan_store_stores_under_the_bytes_faust_sends(
    plan_state_table: Any,
) -> None:
    topic = plan_state_table.changelog_topic
    for record in plan_records(6, seed=3):
        table: dict[str, Any] = {}
        store = PlanStore(table, ExpiryIndex(PARTITIONS))  # type: ignore[arg-type]
        snapshot = decode_plan(record.value, InputNotes())
        key = plan_key(snapshot.plan.plan_id)
        state = merge_snapshot(None, snapshot, AT)
        assert state is not None
        store.store(key, state)
        got = changelog_record(record, AT, PARTITIONS)
        assert got.key == topic.prepare_key(key, None)[0]
        assert got.value == topic.prepare_value(table[key], None)[0] == table[key]


def test_a_record_goes_to_the_partition_of_the_plan_input_record() -> None:
    """Faust writes a changelog record to the partition of the record being processed: the
    runtime's producer placed the plan there by its key (Kafka's default partitioner)."""
    for record in plan_records(40, seed=4):
        got = changelog_record(record, AT, PARTITIONS)
        expected = DefaultPartitioner()(record.key, list(range(PARTITIONS)), [])
        assert got.partition == expected
        assert got.partition == partition_of(stored_plan_id(got.value) or "", PARTITIONS)


def test_half_the_plans_are_terminal_as_in_plan_records() -> None:
    states = [PlanState.from_table(changelog_record(r, AT, 4).value) for r in plan_records(10, 5)]
    assert [s.terminal_since is not None for s in states] == [False, True] * 5


def test_varied_records_are_new_plans_the_size_of_their_templates() -> None:
    templates = templates_of(plan_records(20, seed=6), AT, PARTITIONS)
    records = list(varied_records(templates, 100, seed=6, start=AT, partitions=PARTITIONS))
    assert len({r.key for r in records}) == 100
    for i, record in enumerate(records):
        state = PlanState.from_table(record.value)  # a valid stored state
        plan_id = state.snapshot.plan.plan_id
        assert record.key == orjson.dumps(plan_key(plan_id))
        assert record.partition == DefaultPartitioner()(plan_id.encode(), [0, 1, 2, 3], [])
        assert len(record.value) == templates[i % 20].size
        assert (state.terminal_since is not None) == (i % 2 == 1)
    assert mean(len(r.value) for r in records) == mean(t.size for t in templates)


def test_varied_records_change_every_id_and_text_tag() -> None:
    templates = templates_of(plan_records(2, seed=7), AT, PARTITIONS)
    # plans 0 and 2 come from the same template
    first, _, again = varied_records(templates, 3, seed=7, start=AT, partitions=PARTITIONS)
    a, b = orjson.loads(first.value)["snapshot"], orjson.loads(again.value)["snapshot"]
    assert a["plan"]["plan_id"] != b["plan"]["plan_id"]
    assert a["plan"]["context_id"] != b["plan"]["context_id"]
    assert a["intent"]["intent_id"] != b["intent"]["intent_id"]
    assert a["plan"]["title"] != b["plan"]["title"]
    assert a["plan"]["title"].rsplit(" (ref ", 1)[0] == b["plan"]["title"].rsplit(" (ref ", 1)[0]


def test_the_expiry_index_rebuilt_from_the_preloaded_table_holds_half() -> None:
    templates = templates_of(plan_records(10, seed=8), AT, PARTITIONS)
    records = list(varied_records(templates, 200, seed=8, start=AT, partitions=PARTITIONS))
    index = ExpiryIndex(PARTITIONS)
    index.rebuild((orjson.loads(r.key), r.value) for r in records)
    assert len(index) == 100


def test_the_restore_progress_is_read_from_faust_s_last_log_line() -> None:
    log = (
        "Still fetching changelog topics for recovery, estimated time remaining 0:01:00 "
        "(total remaining=5000):\n...\nStill fetching changelog topics for recovery, "
        "estimated time remaining 0:00:10 (total remaining=120):\n"
    )
    assert restore_remaining(log) == 120
    assert restore_remaining("[^Worker]: Ready") is None


def test_a_preloaded_row_says_so_in_the_table() -> None:
    median = {
        "plans": 10_000_000, "rss_ready_mb": 200.0, "rss_loaded_mb": 900.0, "rss_peak_mb": 950.0,
        "mb_per_100k_plans": 7.0, "marginal_mb_per_100k": 6.0, "rss_1m_plans_mb": None,
        "plans_per_s": 20_000.0,
    }  # fmt: skip
    row = {"label": "rocksdb://", "preload": "changelog", "median": median, "complete": "1/1"}
    text = "\n".join(_memory({"rocksdb": row | {"runs": []}}))
    assert "preloaded through the plan_state changelog" in text
    assert "≤ 1 GiB at 10M (issue 31): met" in text
