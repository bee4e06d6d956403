"""``learnstream demo``: embedded broker + worker + simulated runtime + a live view."""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer
from rich.console import Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table

from streams.admin import create_topics
from streams.codecs import decode_any
from streams.demo_runtime import simulate_runtime
from streams.embedded import EmbeddedBroker
from streams.publisher import RuntimePublisher
from streams.settings import Settings
from streams.worker_process import WorkerProcess

__all__ = ["DemoView", "run_demo"]


class DemoView:
    """Counts what comes out of the pipeline and renders it."""

    def __init__(self, pub: RuntimePublisher, web_port: int) -> None:
        self.pub, self.web_port = pub, web_port
        self.samples: Counter[tuple[str, str]] = Counter()
        self.dlq: Counter[str] = Counter()
        self.last_sample: dict[str, Any] | None = None
        self._history: deque[tuple[float, int, int]] = deque(maxlen=50)

    def record(self, topic_kind: str, value: bytes | None, headers: dict[str, bytes]) -> None:
        """Count one output record."""
        if topic_kind == "dlq":
            self.dlq[headers.get("reason", b"?").decode()] += 1
        elif value is not None:
            sample = decode_any(value)
            self.samples[(sample["sample_family"], sample["feedback"]["quality_label"])] += 1
            self.last_sample = sample

    def _rates(self) -> tuple[float, float]:
        now, sent, out = time.monotonic(), self.pub.stats.sent, sum(self.samples.values())
        self._history.append((now, sent, out))
        t0, s0, o0 = self._history[0]
        span = max(now - t0, 1e-6)
        return (sent - s0) / span, (out - o0) / span

    def render(self) -> Group:
        """Return the live view."""
        events_rate, samples_rate = self._rates()
        table = Table(title="samples by family and quality", expand=True)
        for column in ("family", "good", "acceptable", "poor", "approval", "rejection"):
            table.add_column(column, justify="left" if column == "family" else "right")
        for family in sorted({f for f, _ in self.samples}):
            counts = [self.samples[(family, q)] for q in ("good", "acceptable", "poor")]
            total = sum(counts) or 1
            table.add_row(
                family, *map(str, counts), f"{counts[0] / total:.0%}", f"{counts[2] / total:.0%}"
            )
        head = (
            f"events in: {self.pub.stats.sent} ({events_rate:.1f}/s)   samples out: "
            f"{sum(self.samples.values())} ({samples_rate:.1f}/s)   DLQ: "
            f"{sum(self.dlq.values())} {dict(self.dlq)}   metrics: "
            f"http://127.0.0.1:{self.web_port}/metrics"
        )
        last = json.dumps(self.last_sample, indent=1)[:1500] if self.last_sample else "(waiting)"
        return Group(
            Panel(head, title="learnstream demo — Ctrl-C to stop"),
            table,
            Panel(last, title="last sample (anonymized)"),
        )


async def _watch(bootstrap: str, settings: Settings, view: DemoView) -> None:
    names = {settings.topics.name("samples"): "samples", settings.topics.name("dlq"): "dlq"}
    consumer = AIOKafkaConsumer(
        *names, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    try:
        async for record in consumer:
            view.record(names[record.topic], record.value, dict(record.headers))
    finally:
        await consumer.stop()


async def _run(
    settings: Settings, bootstrap: str, rate: float, duration: float, worker: WorkerProcess
) -> DemoView:
    async with RuntimePublisher(bootstrap, settings.topics, one_record_per_batch=True) as pub:
        view = DemoView(pub, worker.web_port)
        tasks = [
            asyncio.create_task(simulate_runtime(pub, rate)),
            asyncio.create_task(_watch(bootstrap, settings, view)),
        ]
        try:
            with Live(view.render(), refresh_per_second=2) as live:
                deadline = time.monotonic() + duration if duration else float("inf")
                while time.monotonic() < deadline:
                    await asyncio.sleep(0.5)
                    live.update(view.render())
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.sleep(0)
    return view


def run_demo(settings: Settings, *, rate: float, duration: float, web_port: int) -> int:
    """Run the demo until Ctrl-C (or ``duration`` seconds); return an exit code."""
    workdir = Path(tempfile.mkdtemp(prefix="learnstream-demo-"))
    with EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        print(f"embedded broker at {broker.url} (in memory); logs in {workdir}")
        asyncio.run(create_topics(broker.bootstrap, settings.topics))
        worker = WorkerProcess(
            {
                "LEARNSTREAM_BROKER_URL": broker.url,
                "LEARNSTREAM_BROKER__ONE_RECORD_PER_BATCH": "true",
                "LEARNSTREAM_WEB_PORT": str(web_port),
                "LEARNSTREAM_JOIN__GRACE": "20",
                "LEARNSTREAM_DATA_DIR": str(workdir / "data"),
            },
            workdir / "worker.log",
        )
        print("starting the worker (joins its consumer group in a few seconds)...")
        try:
            worker.start()
            view = asyncio.run(_run(settings, broker.bootstrap, rate, duration, worker))
            print(
                f"samples: {dict(view.samples)}\ndlq: {dict(view.dlq)}\n"
                f"events published: {view.pub.stats.sent}"
            )
        except KeyboardInterrupt:
            print("stopping...")
        finally:
            with contextlib.suppress(Exception):
                worker.stop()
    return 0
