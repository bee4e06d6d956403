"""Table recovery after kill -9: plan_state and the pending-join buffer come back."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_until
from learnstream.streams.sim.simulate import Simulator
from tests.reliability.harness import collect

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(900)]
PLANS = 200


async def test_tables_recover_after_kill_9(broker, start_worker, worker_env, namespace):
    """Half the plans are known before the kill, half the decisions are parked before it.

    After SIGKILL and a restart, decisions for known plans still join (plan_state
    recovered) and parked decisions complete when their plans come (pending recovered).
    On the embedded broker this relies on one record per batch (its end-offset gap).
    """
    topics = TopicSettings(prefix=namespace)
    app_id = worker_env["LEARNSTREAM_APP_ID"]
    sim, t0 = Simulator(seed=23, pii_ratio=0.0), datetime.now(UTC)
    known = [sim.plan(t0) for _ in range(PLANS // 2)]
    parked = [sim.plan(t0) for _ in range(PLANS // 2)]
    worker = start_worker(LEARNSTREAM_JOIN__GRACE="1h", LEARNSTREAM_SAMPLE_FORMAT="json")
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        for snap in known:
            pub.publish_plan(snap)
        for snap in parked:
            pub.publish_decision(sim.decision(snap, False, t0))
    await read_until(broker.bootstrap, f"{app_id}-plan_state-changelog", len(known))
    await read_until(broker.bootstrap, f"{app_id}-pending-changelog", len(parked))
    await asyncio.sleep(3.0)  # past a commit interval: the kill loses no input, only state
    worker.kill()
    restarted = time.monotonic()
    worker.start()
    recovered = time.monotonic() - restarted
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        for snap in known:
            pub.publish_decision(sim.decision(snap, True, t0))
        for snap in parked:
            pub.publish_plan(snap)
    want = {("intent_resolution", "good"): len(known), ("intent_resolution", "poor"): len(parked)}
    for _ in range(60):
        got = await collect(broker.bootstrap, topics)
        counts = {
            key: len(
                {
                    s["sample_id"]
                    for s in got.samples
                    if (s["sample_family"], s["feedback"]["quality_label"]) == key
                }
            )
            for key in want
        }
        if counts == want:
            break
        await asyncio.sleep(2.0)
    assert counts == want
    assert got.dlq_reasons == []
    print(
        f"\nrecovery on {broker.kind}: {PLANS} plans, 1 kill -9, worker ready again after "
        f"{recovered:.1f}s, {counts} joined, 0 dead letters"
    )
