"""A restarted worker recovers plan_state from its changelog: every decision still joins."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from learnstream.streams.config.settings import RocksDbSettings, TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.sim.simulate import Simulator

pytestmark = pytest.mark.integration
PLANS = 100


@pytest.mark.parametrize("store", ["memory://", "rocksdb://"])
async def test_plan_state_complete_after_restart(
    broker, start_worker, worker_env, namespace, store
):
    """On the embedded broker this only holds with one record per producer batch (its gap).

    With ``rocksdb://`` the restarted worker reopens its local databases (and reads the
    changelog from where they stopped), opened with learnstream's memory bounds.
    """
    topics = TopicSettings(prefix=namespace)
    changelog = f"{worker_env['LEARNSTREAM_APP_ID']}-plan_state-changelog"
    sim, t0 = Simulator(seed=3, pii_ratio=0.0), datetime.now(UTC)
    snaps = [sim.plan(t0) for _ in range(PLANS)]

    worker = start_worker(
        LEARNSTREAM_JOIN__GRACE="20", LEARNSTREAM_SAMPLE_FORMAT="json", LEARNSTREAM_STORE=store
    )
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        for snap in snaps:
            pub.publish_plan(snap)
    stored = await read_until(broker.bootstrap, changelog, PLANS, max_wait=60)
    assert len({r.key for r in stored}) == PLANS
    assert worker.stop() == 0
    if store == "rocksdb://":
        _assert_rocksdb_bounded(Path(worker_env["LEARNSTREAM_DATA_DIR"]))

    worker.start()
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        for snap in snaps:
            pub.publish_decision(sim.decision(snap, True, t0))
    records = await read_until(broker.bootstrap, topics.name("samples"), 2 * PLANS, max_wait=90)
    families = Counter(decode_any(r.value)["sample_family"] for r in records)
    assert families == {"confirm_decision": PLANS, "intent_resolution": PLANS}
    await asyncio.sleep(1.0)
    assert await read_topic(broker.bootstrap, topics.name("dlq")) == []


def _assert_rocksdb_bounded(data_dir: Path) -> None:
    """Every plan_state database was opened with the RocksDbSettings defaults."""
    options = sorted(data_dir.glob("**/plan_state-*.db/OPTIONS-*"))
    assert options, f"no RocksDB plan_state database under {data_dir}"
    bounds = RocksDbSettings()
    for path in options:
        text = path.read_text()
        assert f"write_buffer_size={bounds.write_buffer_mib * 1024 * 1024}" in text
        assert f"max_write_buffer_number={bounds.max_write_buffers}" in text
