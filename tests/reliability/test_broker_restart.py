"""Restart the broker (gracefully) mid-stream: worker and publisher carry on by themselves.

Apache Kafka only: the embedded broker (Tansu) keeps its storage in memory, so a restart
would lose every topic. A worker processes a paced workload; part-way through,
``broker.server.restart()`` stops Kafka (SIGTERM, controlled shutdown) and starts it again on
the same port and log dir. Nobody touches the worker or the publisher: the worker process must
still be the one started at the beginning, the publisher (aiokafka, retried until
``request_timeout_ms``) must have sent every record, every expected sample must come out
(duplicates only as identical ids) and nothing may land in the DLQ.

Time to recover, from the samples' create times: the first sample made after the broker was
ready again (``restart()`` returned, which includes its admin probe, so the worker may beat
it: 0.0 s), and the longest pause in sample output around the restart (the worker's outage).

Sizes: ``LEARNSTREAM_BROKER_RESTART_EVENTS`` (default 9,000) at
``LEARNSTREAM_BROKER_RESTART_RATE`` (default 300/s), the restart at a quarter of the stream.
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.reader import read_topic
from learnstream.streams.sim.workload import build_workload
from tests.reliability.harness import identical_but_created_at, publish_paced, wait_delivered

pytestmark = [pytest.mark.reliability, pytest.mark.kafka, pytest.mark.timeout(900)]
EVENTS = int(os.environ.get("LEARNSTREAM_BROKER_RESTART_EVENTS", "9000"))
RATE = float(os.environ.get("LEARNSTREAM_BROKER_RESTART_RATE", "300"))


async def test_graceful_broker_restart_mid_stream(broker, start_worker, namespace):
    assert not broker.embedded, (
        "a broker restart needs Apache Kafka (the embedded broker's storage is in memory and "
        "a restart would lose everything): run with `make test-kafka`"
    )
    assert broker.server is not None, "KAFKA_BOOTSTRAP_SERVERS: not our broker to restart"
    topics = TopicSettings(prefix=namespace)
    workload = build_workload(EVENTS, seed=31)
    worker = start_worker(LEARNSTREAM_JOIN__GRACE="1h", LEARNSTREAM_SAMPLE_FORMAT="avro")
    publishing = asyncio.create_task(
        publish_paced(broker.bootstrap, topics, workload.records, RATE, broker.embedded)
    )
    await asyncio.sleep(max(3.0, 0.25 * EVENTS / RATE))
    down = time.time()
    await asyncio.to_thread(broker.server.restart)
    ready = time.time()
    await publishing
    verdict, got, waited = await wait_delivered(
        broker.bootstrap, topics, workload.expected, max_wait=300
    )
    stamps = sorted(
        r.timestamp / 1000 for r in await read_topic(broker.bootstrap, topics.name("samples"))
    )
    after = [t for t in stamps if t >= ready]
    recovered = after[0] - ready if after else float("nan")
    during = sum(down <= t < ready for t in stamps)
    around = [t for t in stamps if down - 5 <= t <= ready + 60]
    pause = max((b - a for a, b in zip(around, around[1:], strict=False)), default=float("nan"))
    print(
        f"\nbroker restart on {broker.kind}: {len(workload.records)} events, 1 graceful broker "
        f"restart ({ready - down:.1f}s down to ready, {during} samples made meanwhile), "
        f"longest pause in sample output {pause:.1f}s, first sample {recovered:.1f}s after the "
        f"broker was ready, drained {waited:.1f}s after the last record: {verdict.report()}"
    )
    assert worker.proc is not None
    assert worker.proc.poll() is None, f"the worker died:\n{worker.log()[-4000:]}"
    assert worker.starts == 1
    assert verdict.delivered, verdict.report()
    assert identical_but_created_at(got.raw) == []
    assert got.dlq_reasons == []
    assert after, "no sample was produced after the restart"
