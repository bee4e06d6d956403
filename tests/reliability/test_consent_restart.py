"""kill -9 the worker while opted-out traffic is in flight: a restarted worker holds every
sample until it has read the consent topic, so not one opted-out sample ever comes out.

About five rounds a second, all through the kills, each publishing: the events of a fresh
project P the moment the broker acknowledged its opt-out; those of a project O that opted out
at the start; and those of a control project Q (consent on, or no record). The worker is
killed and restarted ``KILLS`` times. Every sample of Q must arrive, none of P or O.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from datetime import UTC, datetime

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.reader import read_topic
from learnstream.streams.sim.simulate import Simulator
from tests.integration.test_consent_race import Round, Runtime, leaked, samples_of, story
from tests.reliability.harness import log_digest

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(900)]
KILLS = 4
TAIL = 25  # rounds after the last restart
OLD_OPT_OUTS = 5


async def _publish(
    runtime: Runtime,
    sim: Simulator,
    old: list[str],
    out: list[Round],
    control: list[Round],
    killed: asyncio.Event,
) -> None:
    """Publish about five rounds a second until the kills are over, and ``TAIL`` more."""
    now, n, tail = datetime.now(UTC), 0, 0
    while tail < TAIL:
        n, tail = n + 1, tail + killed.is_set()
        p, q = story(sim, sim.uuid(), now), story(sim, sim.uuid(), now)
        o = story(sim, old[n % len(old)], now)
        await runtime.send(o.early + o.late)
        await runtime.round(p, q, control_consent=True if n % 2 else None)
        out += [p, o]
        control.append(q)
        await asyncio.sleep(0.2)


async def test_kill_9_with_opted_out_traffic_in_flight(broker, start_worker, namespace):
    topics = TopicSettings(prefix=namespace)
    sim, rng = Simulator(seed=47, pii_ratio=0.0), random.Random(9)
    worker = start_worker(LEARNSTREAM_SAMPLE_FORMAT="json", LEARNSTREAM_JOIN__GRACE="1h")
    runtime = Runtime(broker.bootstrap, topics, broker.embedded)
    await runtime.producer.start()
    old = [sim.uuid() for _ in range(OLD_OPT_OUTS)]
    out: list[Round] = []
    control: list[Round] = []
    try:
        for project in old:
            await runtime.consent(project, False)
        killed = asyncio.Event()
        publishing = asyncio.create_task(_publish(runtime, sim, old, out, control, killed))
        for _ in range(KILLS):
            await asyncio.sleep(rng.uniform(2.0, 5.0))
            worker.kill()
            await asyncio.to_thread(worker.start)
        killed.set()
        await publishing
    finally:
        await runtime.producer.stop()
    expected = set().union(*(q.sample_ids for q in control))
    samples = await samples_of(broker.bootstrap, topics, expected, max_wait=180)
    await asyncio.sleep(2.0)  # anything still on its way would show now
    samples = await samples_of(broker.bootstrap, topics, expected, max_wait=0)
    families = {k: v for q in control for k, v in q.sample_ids.items()}
    missing = Counter(families[i] for i in expected - {s["sample_id"] for s in samples})
    print(
        f"\n{broker.kind}: {len(control)} rounds, {KILLS} kills, {len(samples)} "
        f"samples read, {len(expected)} expected, missing {dict(missing)}, "
        f"{len(out)} opted-out stories"
    )
    assert leaked(samples, out) == []
    assert missing == Counter(), log_digest(worker.log())
    assert {s["sample_id"] for s in samples} == expected
    assert await read_topic(broker.bootstrap, topics.name("dlq")) == []
