"""A real Prometheus scraping real workers: every dashboard query answers, with exact figures.

The scenario is 50 human plan reviews: 30 approvals, 10 corrections (delta intents), 10
rejections, every plan published first. It yields 90 samples: confirm_decision and
intent_resolution 30 good + 10 poor each, error_correction 10 acceptable. The *plan review*
panels (intent_resolution + error_correction: one sample per review) read 0.6 / 0.2 / 0.2.
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.embedded import free_port
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_until
from learnstream.streams.io.topics import INPUTS
from learnstream.streams.samples.sample import FAMILIES, QUALITIES
from learnstream.streams.sim.simulate import Simulator
from tests.support.prometheus_bin import HOW, prometheus_tool

# 8 minutes, not the 4 of other integration tests: a test here may wait 76 s for a window
# boundary, then for Prometheus to settle.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(480)]

DASHBOARD = Path(__file__).resolve().parents[2] / "ops/grafana/dashboards/learnstream.json"
EXPECTED = {
    ("confirm_decision", "good"): 30,
    ("confirm_decision", "poor"): 10,
    ("intent_resolution", "good"): 30,
    ("intent_resolution", "poor"): 10,
    ("error_correction", "acceptable"): 10,
}
TOTAL = sum(EXPECTED.values())  # 90
REVIEWS = ("intent_resolution", "error_correction")
RATE_QUALITY = {"Approval": "good", "Correction": "acceptable", "Rejection": "poor"}


@dataclass
class Prometheus:
    """A Prometheus server of this test, and its HTTP query API."""

    url: str

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """Return the instant vector of ``expr`` (at ``at``, default now)."""
        params = {"query": expr, **({"time": f"{at:.3f}"} if at else {})}
        url = f"{self.url}/api/v1/query?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our server
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]["result"]

    def by(self, expr: str, label: str, at: float | None = None) -> dict[str, float]:
        """Return {value of ``label``: value} of ``expr``."""
        return {r["metric"].get(label, ""): float(r["value"][1]) for r in self.query(expr, at)}

    def scalar(self, expr: str) -> float | None:
        """Return the single value of ``expr`` (None when it has no data)."""
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None

    def wait(self, what: str, check: Callable[[], bool], timeout: float = 90.0) -> None:
        """Wait until ``check()`` holds for three seconds in a row."""
        deadline, held = time.monotonic() + timeout, 0
        while held < 3:
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            held = held + 1 if check() else 0
            time.sleep(1.0)


@contextmanager
def prometheus(targets: list[str], tmp_path: Path) -> Iterator[Prometheus]:
    """Run Prometheus on 127.0.0.1 scraping ``targets`` (job learnstream) every second."""
    binary = prometheus_tool("prometheus")
    if binary is None:
        pytest.fail(f"the `prometheus` server binary is not found: {HOW}")
    port, config = free_port(), tmp_path / "prometheus.yml"
    job = {
        "job_name": "learnstream",  # what the dashboard and the alerts select on
        "scrape_interval": "1s",
        "scrape_timeout": "1s",
        "static_configs": [{"targets": targets}],
    }
    config.write_text(yaml.safe_dump({"scrape_configs": [job]}))
    log = (tmp_path / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        server = Prometheus(f"http://127.0.0.1:{port}")
        _wait_ready(server, proc, tmp_path / "prometheus.log")
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _wait_ready(server: Prometheus, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"prometheus exited:\n{log.read_text()[-3000:]}"
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as response:  # noqa: S310
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"prometheus not ready:\n{log.read_text()[-3000:]}")


def _clear_of_window_boundary(margin: float = 45.0) -> None:
    """Sleep past the next 5-minute boundary if fewer than ``margin`` seconds remain before it.

    The window gauges show the *current* tumbling window: a scenario straddling a boundary
    would be split between two windows (the 1h boundaries are 5m boundaries too). From
    here to the last assertion took 9 s alone; each whole test, worker starts included,
    33-41 s under ``make test``. Every second of margin is one this test may sleep.
    """
    left = 300 - time.time() % 300
    if left < margin:
        time.sleep(left + 1)


async def _publish_reviews(bootstrap: str, topics: TopicSettings, embedded: bool) -> None:
    sim, t0 = Simulator(seed=17, pii_ratio=0.0), datetime.now(UTC)
    snaps = [sim.plan(t0) for _ in range(50)]
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        for snap in snaps:
            pub.publish_plan(snap)
        await asyncio.sleep(1.0)  # plans first: every review finds its plan
        for snap in snaps[:30]:
            pub.publish_decision(sim.decision(snap, True, t0))
        for snap in snaps[30:40]:
            pub.publish_decision(sim.decision(snap, False, t0))
        for snap in snaps[40:]:
            pub.publish_delta(sim.delta(snap, t0))
    assert (pub.stats.accepted, pub.stats.dropped, pub.stats.failed) == (100, 0, 0)


def _by_family_quality(prom: Prometheus, expr: str) -> dict[tuple[str, str], float]:
    return {
        (r["metric"]["family"], r["metric"]["quality"]): float(r["value"][1])
        for r in prom.query(f"sum by (family, quality) ({expr})")
    }


def _settled(prom: Prometheus, topics: TopicSettings) -> bool:
    """Return True once Prometheus holds the scenario's final figures."""
    want = {(f, q): float(EXPECTED.get((f, q), 0)) for f in FAMILIES for q in QUALITIES}
    plans = topics.name("plans")
    return (
        _by_family_quality(prom, "learnstream_samples_total") == want
        and _by_family_quality(prom, 'learnstream_window_samples{window="5m"}') == want
        and _by_family_quality(prom, 'learnstream_window_samples{window="1h"}') == want
        and prom.scalar("sum(learnstream_consumer_lag)") == 0
        and prom.scalar(f'count(learnstream_consumer_lag{{topic="{plans}"}})') == 4
    )


def _dashboard_queries() -> list[tuple[str, str, str]]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [(p["title"], t["refId"], t["expr"]) for p in panels for t in p.get("targets", [])]


def _expected_rates(title: str, expr: str) -> dict[str, float] | None:
    """Return what a quality-rate query must give ({family or "": ratio}), None for others."""
    kind = next((k for k in RATE_QUALITY if title.startswith(f"{k} rate")), None)
    if kind is None:
        return None
    families = REVIEWS if "family=~" in expr else FAMILIES

    def ratio(selected: tuple[str, ...]) -> float:
        total = sum(EXPECTED.get((f, q), 0) for f in selected for q in QUALITIES)
        hits = sum(EXPECTED.get((f, RATE_QUALITY[kind]), 0) for f in selected)
        return hits / total if total else math.nan

    if "by (family)" in expr:
        return {family: ratio((family,)) for family in families}
    return {"": ratio(families)}


def _check_dashboard(prom: Prometheus, tolerance: Callable[[str], float]) -> dict[str, Any]:
    """Evaluate every dashboard query at one instant; return what the rate panels read."""
    at, seen = time.time(), {}
    for title, ref, expr in _dashboard_queries():
        result = prom.query(expr, at)
        assert result, f"{title}/{ref} returned no data: {expr}"
        expected = _expected_rates(title, expr)
        if expected is None:
            continue
        got = {r["metric"].get("family", ""): float(r["value"][1]) for r in result}
        assert set(got) == set(expected), f"{title}/{ref}: {got}"
        for key, want in expected.items():
            where = f"{title}/{ref} {key}: got {got[key]}, expected {want} ({expr})"
            if math.isnan(want):
                assert math.isnan(got[key]), where
            else:
                assert abs(got[key] - want) <= tolerance(expr), where
        seen[f"{title}/{ref}"] = got
    return seen


def test_dashboard_on_one_worker(broker, start_worker, namespace, tmp_path):
    topics = TopicSettings(prefix=namespace)
    worker = start_worker()
    with prometheus([f"127.0.0.1:{worker.web_port}"], tmp_path) as prom:
        # The first scrape must see every counter at 0, so increase() starts from 0.
        prom.wait("the first scrapes", lambda: bool(prom.query("learnstream_samples_total")))
        _clear_of_window_boundary()
        asyncio.run(_publish_reviews(broker.bootstrap, topics, broker.embedded))
        assert len(asyncio.run(read_until(broker.bootstrap, topics.name("samples"), TOTAL))) == 90
        prom.wait("the final figures", lambda: _settled(prom, topics))

        # One target: every series has the same scrape times and starts at 0, so increase()
        # extrapolates them all alike and the ratios are exact, like the gauges'.
        rates = _check_dashboard(prom, lambda _expr: 1e-6)
        reviews = {k: v[""] for k, v in rates.items() if "plan reviews" in k}
        assert len(reviews) == 12  # 3 panels x (rolling 5m, rolling 1h, tumbling 5m, 1h)
        for name, value in reviews.items():
            want = 0.6 if name.startswith("Approval") else 0.2
            assert value == pytest.approx(want, abs=1e-6), name
        assert rates["Rejection rate (1h)/A"][""] == pytest.approx(20 / 90, abs=1e-6)
        assert prom.scalar('sum(up{job="learnstream"})') == 1
        assert prom.scalar("sum(learnstream_rebalances_total)") >= 1
        lagged = (len(INPUTS) + 1) * TopicSettings().partitions  # every input, consent too
        assert prom.scalar("count(learnstream_consumer_lag)") == lagged
        assert prom.by("sum by (window) (learnstream_late_events_total)", "window") == {
            "5m": 0.0,
            "1h": 0.0,
        }
        print("values read back:", json.dumps(rates, ensure_ascii=False))
        _check_quality_page(worker.web_port)


def _check_quality_page(port: int) -> None:
    """``learnstream quality --json`` shows the worker's GET /quality: the scenario's window."""
    url = f"http://127.0.0.1:{port}/quality"
    done = subprocess.run(
        [sys.executable, "-m", "learnstream", "quality", "--url", url, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["partitions"] == [0, 1, 2, 3]
    for window in ("5m", "1h"):
        families = report["windows"][window]["families"]
        assert families["intent_resolution"] == {
            "total_samples": 40,
            "approval_rate": 0.75,
            "correction_rate": 0.0,
            "rejection_rate": 0.25,
            "counts": {"good": 30, "acceptable": 0, "poor": 10},
        }
        assert families["error_correction"]["counts"] == {"good": 0, "acceptable": 10, "poor": 0}
        assert families["delta_impact"]["total_samples"] == 0


def test_two_workers_sum_to_the_scenario(broker, start_worker, namespace, tmp_path):
    topics = TopicSettings(prefix=namespace)
    workers = [
        start_worker(LEARNSTREAM_DATA_DIR=str(tmp_path / f"data{i}")) for i in range(2)
    ]  # same LEARNSTREAM_APP_ID: one consumer group, 4 partitions shared
    targets = [f"127.0.0.1:{w.web_port}" for w in workers]
    plans = topics.name("plans")
    lag_of_plans = f'learnstream_consumer_lag{{topic="{plans}"}}'
    with prometheus(targets, tmp_path) as prom:

        def split_in_two() -> bool:
            owners = prom.by(f"count by (instance) ({lag_of_plans})", "instance")
            partitions = prom.by(f"count by (partition) ({lag_of_plans})", "partition")
            return (
                len(owners) == 2
                and sorted(partitions) == ["0", "1", "2", "3"]
                and all(n == 1 for n in partitions.values())
            )

        prom.wait("both workers to own partitions", split_in_two, timeout=120)
        _clear_of_window_boundary()
        asyncio.run(_publish_reviews(broker.bootstrap, topics, broker.embedded))
        assert len(asyncio.run(read_until(broker.bootstrap, topics.name("samples"), TOTAL))) == 90
        prom.wait("the final figures", lambda: _settled(prom, topics))

        for expr in ("learnstream_samples_total", 'learnstream_window_samples{window="5m"}'):
            per_worker = prom.by(f"sum by (instance) ({expr})", "instance")
            assert set(per_worker) == set(targets)
            assert sum(per_worker.values()) == TOTAL
            assert all(0 < n < TOTAL for n in per_worker.values()), per_worker  # each alone: less
        assert prom.scalar("sum(learnstream_rebalances_total)") >= 3  # A twice, B once
        # Gauges are exact across workers; increase() extrapolates each target's series from
        # its own scrape times, so the summed rolling ratios are only close (see ops/README.md).
        rates = _check_dashboard(prom, lambda expr: 0.01 if "increase(" in expr else 1e-6)
        reviews = {k: v[""] for k, v in rates.items() if "plan reviews" in k}
        assert len(reviews) == 12
        for name, value in reviews.items():  # tumbling: exact; rolling: within 0.01
            want = 0.6 if name.startswith("Approval") else 0.2
            assert value == pytest.approx(want, abs=0.01 if name[-1] in "AB" else 1e-6), name
        print("values read back (2 workers):", json.dumps(rates, ensure_ascii=False))
        print("per worker:", prom.by("sum by (instance) (learnstream_samples_total)", "instance"))
