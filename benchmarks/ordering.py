"""How often a correction published just before its plan's execution reaches the broker after it.

The kill -9 test's workload (``tests/reliability/harness.py``: a corrected, executed plan
every ``--every`` records) is published by one ``RuntimePublisher`` at the test's rate to
topics that stamp each record with the broker's append time (``LogAppendTime``). Read back,
each corrected plan's correction and execution say which landed first. Kafka orders records
within a partition only; the worker counts a correction only if the broker held it when the
execution was read (docs/operations.md, "Delivery guarantees"). ``--flush`` awaits
``RuntimePublisher.flush()`` after each correction, as a runtime that needs the order does.

    .venv/bin/python -m benchmarks.ordering            # Apache Kafka, ~2 min on 2 cores
    .venv/bin/python -m benchmarks.ordering --flush
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from benchmarks.brokers import choose_kind, open_broker
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.sim.workload import build_workload
from tests.reliability.harness import add_corrected_runs, publish_paced

INPUTS = ("plans", "plan_approved", "plan_rejected", "delta_intents", "pipeline_stage")


async def measure(
    bootstrap: str, embedded: bool, events: int, every: int, rate: float, flush: bool
) -> dict:
    """Publish, read back, and count the corrected plans whose execution landed first."""
    topics = TopicSettings(prefix=f"ordering{int(time.time())}.")
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        config = {"message.timestamp.type": "LogAppendTime"}
        await admin.create_topics(
            [NewTopic(topics.name(t), topics.partitions, 1, topic_configs=config) for t in INPUTS]
        )
    finally:
        await admin.close()
    workload = build_workload(events, seed=17)
    corrections = add_corrected_runs(workload, every=every)
    plans = {workload.records[i].key for i in corrections}
    await publish_paced(
        bootstrap, topics, workload.records, rate, embedded, corrections if flush else ()
    )
    landed = await _append_times(bootstrap, topics, plans)
    late = [
        delta - execute
        for delta, execute in landed.values()
        if delta is not None and execute is not None and delta > execute
    ]
    return {
        "pairs": len(plans),
        "correction_after_execution": len(late),
        "max_gap_ms": max(late, default=0),
        "flush": flush,
    }


async def _append_times(
    bootstrap: str, topics: TopicSettings, plans: set[bytes]
) -> dict[bytes, tuple[int | None, int | None]]:
    """Return plan key -> (correction's append time, last stage record's append time)."""
    consumer = AIOKafkaConsumer(
        topics.name("delta_intents"),
        topics.name("pipeline_stage"),
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    delta: dict[bytes, int] = {}
    stage: dict[bytes, int] = {}
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=2000)
            if not batch:
                break
            for tp, records in batch.items():
                into = delta if tp.topic == topics.name("delta_intents") else stage
                for record in records:
                    if record.key in plans:  # a plan's stages share a partition: last wins
                        into[record.key] = record.timestamp
    finally:
        await consumer.stop()
    return {plan: (delta.get(plan), stage.get(plan)) for plan in plans}


def main() -> None:
    """Run the probe and print what it found."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", choices=["auto", "kafka", "embedded"], default="kafka")
    parser.add_argument("--events", type=int, default=20_000, help="workload records")
    parser.add_argument("--every", type=int, default=10, help="a corrected plan every N")
    parser.add_argument("--rate", type=float, default=400.0, help="records per second")
    parser.add_argument("--flush", action="store_true", help="flush after each correction")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as workdir,
        open_broker(choose_kind(args.broker), Path(workdir)) as broker,
    ):
        found = asyncio.run(
            measure(
                broker.bootstrap, broker.embedded, args.events, args.every, args.rate, args.flush
            )
        )
    print(
        f"{broker.version}: {found['correction_after_execution']} of {found['pairs']} "
        f"corrections landed after their execution (max {found['max_gap_ms']} ms), "
        f"flush after each correction: {found['flush']}"
    )


if __name__ == "__main__":
    main()
