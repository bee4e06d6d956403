"""The baseline: one Python process doing raw aiokafka consume -> json.loads -> produce.

It reads the same input topics (same partitions) as the worker and writes every record,
unchanged, to one output topic: the practical ceiling of one Python process on this broker.
Run by the benchmark as ``python -m benchmarks.baseline``; SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

__all__ = ["main", "pass_through"]


def _options(embedded: bool) -> dict[str, Any]:
    # Same producer settings as the worker: acks=all, one record per batch on the embedded broker.
    return {"acks": "all", "max_batch_size": 1} if embedded else {"acks": "all"}


async def pass_through(
    bootstrap: str, inputs: list[str], output: str, group: str, embedded: bool
) -> None:
    """Copy every record of ``inputs`` to ``output`` after parsing it, until cancelled."""
    consumer = AIOKafkaConsumer(
        *inputs, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest"
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **_options(embedded))
    await consumer.start()
    await producer.start()
    try:
        while True:
            batches = await consumer.getmany(timeout_ms=500, max_records=1_000)
            for records in batches.values():
                for record in records:
                    json.loads(record.value)
                    await producer.send(output, record.value, key=record.key)
    finally:
        await producer.stop()
        await consumer.stop()


async def _run_until_signalled(args: argparse.Namespace) -> None:
    task = asyncio.create_task(
        pass_through(args.bootstrap, args.inputs, args.output, args.group, args.embedded)
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def pass_through_parser(description: str | None) -> argparse.ArgumentParser:
    """Return the command line of a pass-through process (this one, benchmarks.faust_floor)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--bootstrap", required=True, help="host:port of the broker")
    parser.add_argument("--inputs", required=True, nargs="+", help="topics to consume")
    parser.add_argument("--output", required=True, help="topic to produce to")
    parser.add_argument("--group", required=True, help="consumer group id")
    parser.add_argument("--embedded", action="store_true", help="one record per batch")
    return parser


def main() -> None:
    """Run the pass-through from the command line."""
    asyncio.run(_run_until_signalled(pass_through_parser(__doc__).parse_args()))


if __name__ == "__main__":
    main()
