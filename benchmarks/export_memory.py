"""Peak memory (VmHWM) of ``learnstream export`` at 10k and 100k samples: flat or not.

Publishes ``--samples`` distinct Avro samples (1 ms of record time apart) to a fresh samples
topic on the embedded broker (or ``LEARNSTREAM_BROKER_URL``), then runs each export in its
own process, the CLI as a user runs it, and reads that process's peak RSS at its end. The
10k export reads the same topic with ``--until`` at the 10,000th record, so both read the
whole topic (the embedded broker cannot seek by time) and differ only in what they keep.

    .venv/bin/python -m benchmarks.export_memory            # ~1 min on 2 cores
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from benchmarks.load import _producer
from benchmarks.workers import rss_mb
from learnstream.streams.encoding.codecs import codec_for
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.sample import LearningSample

__all__ = ["main"]

BASE = datetime(2026, 11, 24, tzinfo=UTC)
RUNS = (
    ("sft", 10_000, "jsonl"),
    ("sft", 100_000, "jsonl"),
    ("sft", 10_000, "parquet"),  # pyarrow alone peaks at ~150 MiB: compare like with like
    ("sft", 100_000, "parquet"),
    ("training-dataset", 100_000, "json"),
)


def _sample(n: int) -> dict[str, Any]:
    text = f"Deploy release {n} of the checkout service after the {n % 97}th review"
    return {
        "sample_id": sample_id("intent_resolution", f"bench-{n}"),
        "sample_family": "intent_resolution",
        "created_at": (BASE + timedelta(milliseconds=n)).isoformat().replace("+00:00", "Z"),
        "input": {"intent_id": f"intent-{n}", "raw_request_summary": text, "intent_text": text},
        "output": {
            "final_intent_summary": text,
            "plan_title": f"Release {n}",
            "plan_structure": [
                {"description": f"step {i} of {n}", "status": "pending"} for i in range(4)
            ],
        },
        "feedback": {"source": "user", "type": "approval", "quality_label": "good"},
        "meta": {
            "source_event_ids": [sample_id("event", str(n))],
            "human_feedback_label": "approved",
            "producer": "benchmark",
        },
    }


async def _publish(bootstrap: str, topic: str, count: int, embedded: bool) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 4, 1)])
    finally:
        await admin.close()
    avro, producer = codec_for("avro"), _producer(bootstrap, embedded)
    await producer.start()
    try:
        pending = []
        for n in range(count):
            sample, ts = _sample(n), int((BASE + timedelta(milliseconds=n)).timestamp() * 1000)
            value = avro.encode(LearningSample.model_validate(sample).to_dict())
            pending.append(
                await producer.send(topic, value, key=sample["sample_id"].encode(), timestamp_ms=ts)
            )
            if len(pending) >= 5_000:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)
    finally:
        await producer.stop()


def _child(args: list[str]) -> None:
    """Run the CLI in this process, then print its peak and final RSS as JSON."""
    from learnstream.agents.cli.main import main as cli

    started = time.monotonic()
    cli.main(args, prog_name="learnstream", standalone_mode=False)
    pid = os.getpid()
    print(
        json.dumps(
            {
                "peak_mb": round(rss_mb(pid, "VmHWM"), 1),
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )


def _export(env: dict[str, str], fmt: str, count: int, out: Path) -> dict[str, Any]:
    until = (BASE + timedelta(milliseconds=count)).isoformat()
    args = [
        "export",
        "--format",
        fmt,
        "--since",
        BASE.isoformat(),
        "--until",
        until,
        "--out",
        str(out),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.export_memory", "--child", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1]) | {
        "format": fmt,
        "samples": count,
        "file": out.suffix,
    }


def main() -> None:
    """Publish the samples, run the exports, print one table row per export."""
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    options = parser.parse_args()
    with ExitStack() as stack:
        url = os.environ.get("LEARNSTREAM_BROKER_URL")
        if url is None:
            from learnstream.streams.io.embedded import EmbeddedBroker

            url = stack.enter_context(EmbeddedBroker()).url
        prefix = f"bench{uuid.uuid4().hex[:8]}."
        bootstrap = url.removeprefix("kafka://")
        started = time.monotonic()
        asyncio.run(
            _publish(
                bootstrap,
                f"{prefix}mplp.learning_samples",
                options.samples,
                "LEARNSTREAM_BROKER_URL" not in os.environ,
            )
        )
        print(f"published {options.samples:,} samples in {time.monotonic() - started:.0f} s")
        env = {"LEARNSTREAM_BROKER_URL": url, "LEARNSTREAM_TOPICS__PREFIX": prefix}
        out = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        print("| format | samples | file | peak RSS MiB | seconds |\n|---|---:|---|---:|---:|")
        for fmt, count, suffix in RUNS:
            row = _export(env, fmt, min(count, options.samples), out / f"{fmt}-{count}.{suffix}")
            cells = (
                row["format"],
                f"{row['samples']:,}",
                row["file"],
                row["peak_mb"],
                row["seconds"],
            )
            print("| " + " | ".join(map(str, cells)) + " |")


if __name__ == "__main__":
    main()
