"""``learnstream demo``: embedded broker + worker + simulated runtime + a live view.

Ctrl-C or SIGTERM ends the live view; the demo then stops the worker and the broker (in
that order: neither sees the terminal's Ctrl-C, so nothing logs a lost connection), prints
a summary and removes its temporary folder. If the demo itself is killed, the kernel kills
the worker and the broker with it (``learnstream.streams.io.embedded.die_with_parent``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import tempfile
import time
from collections import Counter, deque
from pathlib import Path
from types import FrameType
from typing import Any

from aiokafka import AIOKafkaConsumer
from rich.console import Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table

from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import UserError
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.admin import create_topics
from learnstream.streams.io.demo_runtime import simulate_feedback, simulate_runtime
from learnstream.streams.io.embedded import EmbeddedBroker, free_port
from learnstream.streams.io.preflight import check_port_free
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.worker_process import WorkerProcess
from learnstream.streams.samples.sample import FAMILIES, QUALITIES

__all__ = ["DEFAULT_WEB_PORT", "DemoView", "choose_web_port", "run_demo"]

DEFAULT_WEB_PORT = 6066


def choose_web_port(settings: Settings, web_port: int | None) -> tuple[int, str]:
    """Return the worker's web port and a line saying where it came from.

    An explicit choice (``--web-port``, ``LEARNSTREAM_WEB_PORT``) must be free; without
    one, 6066 is used if free, else any free port: a busy machine still runs the demo.
    """
    host = settings.web_host
    if web_port is not None or "web_port" in settings.model_fields_set:
        port, option = (
            (web_port, "--web-port")
            if web_port is not None
            else (
                settings.web_port,
                "LEARNSTREAM_WEB_PORT",
            )
        )
        check_port_free(host, port, option)
        return port, f"(port from {option})"
    try:
        check_port_free(host, DEFAULT_WEB_PORT, "LEARNSTREAM_WEB_PORT")
    except UserError:
        return free_port(), f"(port {DEFAULT_WEB_PORT} is busy; LEARNSTREAM_WEB_PORT picks one)"
    return DEFAULT_WEB_PORT, "(LEARNSTREAM_WEB_PORT changes the port)"


class DemoView:
    """Counts what comes out of the pipeline and renders it."""

    def __init__(self, pub: RuntimePublisher, metrics_url: str) -> None:
        self.pub, self.metrics_url = pub, metrics_url
        self.samples: Counter[tuple[str, str]] = Counter()
        self.dlq: Counter[str] = Counter()
        self.pairs: Counter[str] = Counter()
        self.last_sample: dict[str, Any] | None = None
        self._history: deque[tuple[float, int, int]] = deque(maxlen=50)

    def record(self, topic_kind: str, value: bytes | None, headers: dict[str, bytes]) -> None:
        """Count one output record."""
        if topic_kind == "dlq":
            self.dlq[headers.get("reason", b"?").decode()] += 1
        elif topic_kind == "pairs":
            if value is not None:
                self.pairs[str(json.loads(value).get("kind", "?"))] += 1
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
        # Shares of feedback.quality_label; "approval" would be wrong for delta_impact.
        table = Table(title="samples by family and quality label", expand=True)
        for column in ("family", *QUALITIES, "good %", "poor %"):
            table.add_column(column, justify="left" if column == "family" else "right")
        # Every family the worker emits has a row, 0 until its first sample: a family that
        # never comes shows as missing instead of being absent.
        for family in (*FAMILIES, *sorted({f for f, _ in self.samples} - set(FAMILIES))):
            counts = [self.samples[(family, q)] for q in QUALITIES]
            total = sum(counts) or 1
            table.add_row(
                family, *map(str, counts), f"{counts[0] / total:.0%}", f"{counts[-1] / total:.0%}"
            )
        head = (
            f"events in: {self.pub.stats.sent} ({events_rate:.1f}/s)   samples out: "
            f"{sum(self.samples.values())} ({samples_rate:.1f}/s)   preference pairs: "
            f"{sum(self.pairs.values())} {dict(self.pairs)}   dead letters: "
            f"{sum(self.dlq.values())} {dict(self.dlq)}   metrics: {self.metrics_url}"
        )
        last = json.dumps(self.last_sample, indent=1)[:1500] if self.last_sample else "(waiting)"
        return Group(
            Panel(head, title="learnstream demo — Ctrl-C to stop"),
            table,
            Panel(last, title="last sample (anonymized)"),
        )

    def summary(self, seconds: float) -> list[str]:
        """Return the exit summary: events in, samples by family, dead letters by reason."""
        families: Counter[str] = Counter()
        for (family, _), count in self.samples.items():
            families[family] += count
        return [
            f"learnstream demo ran {seconds:.0f} s",
            f"  events in     {self.pub.stats.sent}",
            f"  samples out   {families.total()}{_by(families)}",
            f"  dead letters  {self.dlq.total()}{_by(self.dlq)}"
            + ("  (sent on purpose: README, 'The demo's dead letters')" if self.dlq else ""),
        ]


def _by(counts: Counter[str]) -> str:
    return ": " + ", ".join(f"{k} {v}" for k, v in counts.most_common()) if counts else ""


class _StopRequest:
    """SIGINT / SIGTERM: end the live view at its next tick (interrupt start-up before it)."""

    def __init__(self) -> None:
        self.requested = False
        self.live = False

    def __call__(self, _signum: int, _frame: FrameType | None) -> None:
        self.requested = True
        if not self.live:
            raise KeyboardInterrupt


async def _watch(bootstrap: str, settings: Settings, view: DemoView) -> None:
    names = {
        settings.topics.name("samples"): "samples",
        settings.topics.name("dlq"): "dlq",
        settings.topics.name("preference_pairs"): "pairs",
    }
    consumer = AIOKafkaConsumer(
        *names, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    try:
        async for record in consumer:
            view.record(names[record.topic], record.value, dict(record.headers))
    finally:
        await consumer.stop()


async def _live(
    settings: Settings, bootstrap: str, rate: float, duration: float, stop: _StopRequest
) -> DemoView:
    metrics_url = f"http://{_client_host(settings)}:{settings.web_port}/metrics"
    async with RuntimePublisher(bootstrap, settings.topics, one_record_per_batch=True) as pub:
        view = DemoView(pub, metrics_url)
        tasks = [
            asyncio.create_task(simulate_runtime(pub, rate)),
            asyncio.create_task(simulate_feedback(bootstrap, settings.topics)),
            asyncio.create_task(_watch(bootstrap, settings, view)),
        ]
        try:
            with Live(view.render(), refresh_per_second=2) as live:
                deadline = time.monotonic() + duration if duration else float("inf")
                while time.monotonic() < deadline and not stop.requested:
                    await asyncio.sleep(0.25)
                    live.update(view.render())
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return view


def _client_host(settings: Settings) -> str:
    return "127.0.0.1" if settings.web_host in ("0.0.0.0", "::") else settings.web_host  # noqa: S104


def _start_worker(broker: EmbeddedBroker, settings: Settings, workdir: Path) -> WorkerProcess:
    env = {
        "LEARNSTREAM_BROKER_URL": broker.url,
        "LEARNSTREAM_BROKER__ONE_RECORD_PER_BATCH": "true",
        "LEARNSTREAM_WEB_PORT": str(settings.web_port),
        "LEARNSTREAM_JOIN__GRACE": "20",
        "LEARNSTREAM_DATA_DIR": str(workdir / "data"),
    }
    worker = WorkerProcess(env, workdir / "worker.log", stop_with_parent=True)
    try:
        return worker.start()
    except (RuntimeError, TimeoutError) as exc:
        worker.stop()
        print("\n".join(worker.log().splitlines()[-15:]), flush=True)
        raise UserError("the demo's worker did not start (its last log lines are above)") from exc
    except BaseException:  # Ctrl-C while it starts
        worker.stop()
        raise


def _run(settings: Settings, workdir: Path, rate: float, duration: float) -> list[str]:
    stop, began = _StopRequest(), time.monotonic()
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    with EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        print(f"embedded broker at {broker.url} (in memory; it stops with the demo)", flush=True)
        asyncio.run(create_topics(broker.bootstrap, settings.topics))
        print("starting the worker (it joins its consumer group in a few seconds)...", flush=True)
        worker = _start_worker(broker, settings, workdir)
        print(f"worker ready: simulating {rate:g} plans/s; Ctrl-C stops the demo", flush=True)
        try:
            stop.live = True
            view = asyncio.run(_live(settings, broker.bootstrap, rate, duration, stop))
            print("stopping the worker and the embedded broker...", flush=True)
        finally:
            stop.live = True  # a second Ctrl-C must not cut the clean-up short
            worker.stop()
    return view.summary(time.monotonic() - began)


def run_demo(settings: Settings, *, rate: float, duration: float, web_port: int | None) -> int:
    """Run the demo until Ctrl-C / SIGTERM (or ``duration`` seconds); return an exit code."""
    port, origin = choose_web_port(settings, web_port)
    settings = settings.model_copy(update={"web_port": port})
    print(f"metrics: http://{_client_host(settings)}:{port}/metrics {origin}", flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="learnstream-demo-"))
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        summary = _run(settings, workdir, rate, duration)
    except KeyboardInterrupt:
        summary = ["learnstream demo stopped before the worker was ready"]
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
        shutil.rmtree(workdir, ignore_errors=True)
    print(
        "\n".join([*summary, "  left behind   nothing (worker, broker, temp folder removed)"]),
        flush=True,
    )
    return 0
