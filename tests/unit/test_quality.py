"""Windowed quality metrics: window math (checked against Faust's), counts, gauges, /quality."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from faust.streams import current_event
from faust.types import TP
from faust.windows import HoppingWindow, TumblingWindow
from rich.console import Console

from learnstream.agents.cli.main import main
from learnstream.agents.quality_tables import QualityWindows
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings, WindowSettings
from learnstream.streams.io.app import create_app
from learnstream.streams.observe.lag import partition_lags
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.quality.window_counts import PendingCounts
from learnstream.streams.quality.windows import (
    QualityMetrics,
    WindowSpec,
    event_timestamp,
    expired_keys,
    parse_key,
    report_table,
    table_key,
    window_counts,
    window_label,
    window_report,
    window_specs,
)
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.sim.simulate import Simulator
from tests.support.apps import close_consumer_loop
from tests.support.offsets import FakeEnds
from tests.support.outputs import Feed, mock_outputs

FIVE_MIN = WindowSpec("5m", 300.0, 300.0, 7200.0)
HOUR = WindowSpec("1h", 3600.0, 3600.0, 7200.0)
HOPPING = WindowSpec("5m", 300.0, 60.0, 7200.0)
T = 1_795_000_000.0  # 2026-11-18T11:06:40Z: 100 s into a 5-minute window


# --- window math ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "label"), [(300, "5m"), (3600, "1h"), (90, "90s"), (7200, "2h"), (86400, "1d")]
)
def test_window_labels(seconds: int, label: str) -> None:
    assert window_label(timedelta(seconds=seconds)) == label


@pytest.mark.parametrize("ts", [T, T + 199.9, T + 200.0, T - 100.0, T + 3599.5, 1_000.0])
def test_ranges_are_fausts(ts: float) -> None:
    assert FIVE_MIN.ranges(ts) == list(TumblingWindow(300, 7200).ranges(ts))
    assert HOUR.ranges(ts) == list(TumblingWindow(3600, 7200).ranges(ts))
    assert HOPPING.ranges(ts) == list(HoppingWindow(300, 60, 7200).ranges(ts))


def test_tumbling_window_of_a_timestamp() -> None:
    assert FIVE_MIN.ranges(T) == [(T - 100, T + 199.9)]
    assert FIVE_MIN.start_of(T) == T - 100
    assert FIVE_MIN.start_of(T + 200) == T + 200  # the next window
    assert len(HOPPING.ranges(T)) == 5
    assert HOPPING.start_of(T) == T - 40 - 240  # the oldest of the five: the last 5 minutes


@pytest.mark.parametrize("spec", [FIVE_MIN, HOUR, HOPPING], ids=["5m", "1h", "hop"])
@pytest.mark.parametrize("age", [0, 60, 3600, 7000, 7200, 7299, 7300, 7500, 7700, 11000])
def test_late_is_what_faust_would_expire_at_once(spec: WindowSpec, age: float) -> None:
    faust_window = HoppingWindow(spec.size, spec.step, spec.expires)
    ts = T - age
    newest_end = max(end for _, end in faust_window.ranges(ts))
    assert spec.is_late(ts, T) == faust_window.stale(newest_end, T)


def test_late_boundary_of_the_five_minute_window() -> None:
    # now = T (window [T-100, T+200)); the horizon is the start of the window of T - 2h.
    horizon = T - 100 - 7200
    assert FIVE_MIN.horizon(T) == horizon
    assert FIVE_MIN.is_late(horizon - 0.5, T)  # its window ended at the horizon
    assert not FIVE_MIN.is_late(horizon, T)  # the first window still kept
    assert not FIVE_MIN.is_late(T - 3600, T)
    assert not HOUR.is_late(T - 7200, T)  # 1h windows: the window of T - 2h is kept


@pytest.mark.parametrize("spec", [FIVE_MIN, HOUR, HOPPING], ids=["5m", "1h", "hop"])
@pytest.mark.parametrize("ts", [T, T + 19.9, T + 20.0, T + 199.9, T - 100.0, T + 3599.5, 1_000.0])
def test_the_times_of_one_step_share_their_windows(spec: WindowSpec, ts: float) -> None:
    assert spec.bucket(ts) <= ts < spec.bucket(ts) + spec.step
    assert spec.ranges(spec.bucket(ts)) == spec.ranges(ts)


def test_pending_counts_are_summed_per_window_key() -> None:
    pending = PendingCounts([HOPPING, HOUR])
    times = (T, T + 10, T + 30)  # T is 40 s into its minute: two steps of the hopping window
    for ts in times:
        pending.add(2, "5m", "x|good|2", ts)
        pending.add(2, "1h", "x|good|2", ts)
    pending.add(3, "5m", "x|poor|3", T)
    assert sorted(pending.partitions()) == [2, 3]
    taken = pending.take(2)
    expected: Counter[Any] = Counter()
    for ts in times:
        expected.update(("x|good|2", r) for r in HoppingWindow(300, 60, 7200).ranges(ts))
    assert taken["5m"] == expected
    assert len(expected) == 6  # five windows each, four of them shared
    assert taken["1h"] == {("x|good|2", HOUR.ranges(T)[0]): 3}
    assert pending.take(2) == {}
    pending.drop([3])
    assert pending.partitions() == []


def test_window_specs_from_settings() -> None:
    assert window_specs(WindowSettings()) == (FIVE_MIN, HOUR)
    hopping = WindowSettings(sizes=(timedelta(minutes=5),), hopping=True, step=timedelta(minutes=1))
    assert window_specs(hopping) == (HOPPING,)
    with pytest.raises(ValueError, match="dividing the size"):
        window_specs(WindowSettings(hopping=True, step=timedelta(seconds=7)))
    with pytest.raises(ValueError, match="size <= expires"):
        window_specs(WindowSettings(expires=timedelta(minutes=30)))


def test_window_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_WINDOWS__HOPPING", "true")
    monkeypatch.setenv("LEARNSTREAM_WINDOWS__STEP", "30s")
    monkeypatch.setenv("LEARNSTREAM_WINDOWS__EXPIRES", "3h")
    windows = Settings().windows
    assert (windows.hopping, windows.step, windows.expires) == (
        True,
        timedelta(seconds=30),
        timedelta(hours=3),
    )
    assert [s.step for s in window_specs(windows)] == [30.0, 30.0]


# --- keys, counts, metrics --------------------------------------------------------------------


def test_keys_round_trip() -> None:
    assert table_key("error_correction", "acceptable", 3) == "error_correction|acceptable|3"
    assert parse_key("error_correction|acceptable|3") == ("error_correction", "acceptable", 3)


def test_event_timestamp_uses_the_event_time_else_the_fallback() -> None:
    fallback = datetime(2026, 1, 1, tzinfo=UTC)
    assert event_timestamp("2026-11-18T11:06:40Z", fallback) == T
    assert event_timestamp(None, fallback) == fallback.timestamp()


@pytest.mark.parametrize(
    ("good", "acceptable", "poor", "expected"),
    [
        (30, 10, 10, QualityMetrics(50, 0.6, 0.2, 0.2)),
        (0, 0, 0, QualityMetrics(0, 0.0, 0.0, 0.0)),
        (0, 4, 0, QualityMetrics(4, 0.0, 1.0, 0.0)),
    ],
)
def test_quality_metrics(good: int, acceptable: int, poor: int, expected: QualityMetrics) -> None:
    assert QualityMetrics.of({"good": good, "acceptable": acceptable, "poor": poor}) == expected


def _items() -> list[tuple[Any, int]]:
    now_w, old_w = (T - 100, T + 199.9), (T - 400, T - 100.1)
    return [
        (("intent_resolution|good|0", now_w), 3),
        (("intent_resolution|good|1", now_w), 4),
        (("intent_resolution|poor|2", now_w), 5),  # a partition this worker does not own
        (("intent_resolution|good|0", old_w), 100),  # the previous window
        (("error_correction|acceptable|1", now_w), 2),
    ]


def test_window_counts_sum_the_owned_partitions_of_one_window() -> None:
    counts = window_counts(_items(), T - 100, {0, 1})
    assert counts["intent_resolution"] == {"good": 7, "acceptable": 0, "poor": 0}
    assert counts["error_correction"] == {"good": 0, "acceptable": 2, "poor": 0}
    assert counts["pipeline_outcome"] == {"good": 0, "acceptable": 0, "poor": 0}
    assert window_counts(_items(), T - 400, {0, 1, 2})["intent_resolution"]["good"] == 100


def test_expired_keys() -> None:
    keys = [key for key, _ in _items()] + [("x|good|0", (T - 7600, T - 7300.1))]
    assert expired_keys(keys, FIVE_MIN, T) == [("x|good|0", (T - 7600, T - 7300.1))]


def test_window_report_and_its_table() -> None:
    counts = window_counts(_items(), T - 100, {0, 1, 2})
    report = {"partitions": [0, 1, 2], "windows": {"5m": window_report(FIVE_MIN, counts, T)}}
    window = report["windows"]["5m"]
    assert (window["start"], window["end"]) == ("2026-11-18T11:05:00Z", "2026-11-18T11:10:00Z")
    assert window["families"]["intent_resolution"] == {
        "total_samples": 12,
        "approval_rate": 7 / 12,
        "correction_rate": 0.0,
        "rejection_rate": 5 / 12,
        "counts": {"good": 7, "acceptable": 0, "poor": 5},
    }
    console = Console(record=True, width=120)
    console.print(report_table(json.loads(json.dumps(report))))
    text = console.export_text()
    assert "5m from 11:05Z" in text
    assert "58.3%" in text
    assert "41.7%" in text


def test_metrics_window_gauges_and_lag_label_sets() -> None:
    metrics = Metrics()
    metrics.track_windows(("5m", "1h"))
    value = metrics.registry.get_sample_value
    assert value("learnstream_late_events_total", {"window": "1h"}) == 0
    labels = {"family": "delta_impact", "quality": "poor", "window": "5m"}
    assert value("learnstream_window_samples", labels) == 0
    metrics.show_window("5m", {"delta_impact": {"poor": 4}})
    assert value("learnstream_window_samples", labels) == 4
    metrics.show_window("5m", {})  # the window rolled over
    assert value("learnstream_window_samples", labels) == 0
    metrics.show_lags({("mplp.plans", 0): 5, ("mplp.plans", 1): 0})
    metrics.show_lags({("mplp.plans", 1): 7})  # partition 0 was revoked
    assert value("learnstream_consumer_lag", {"topic": "mplp.plans", "partition": "0"}) is None
    assert value("learnstream_consumer_lag", {"topic": "mplp.plans", "partition": "1"}) == 7


def test_partition_lags() -> None:
    tps = [TP("in", 0), TP("in", 1), TP("in", 2), TP("in", 3), TP("changelog", 0)]
    highwater = {TP("in", 0): 10, TP("in", 1): 10, TP("in", 2): None, TP("in", 3): 3}.get
    committed = {TP("in", 0): 4, TP("in", 3): 5}.get
    lags = partition_lags(tps, frozenset({"in"}), highwater, committed)
    # p1: nothing committed -> all of it; p2: high watermark unknown; p3: never negative
    assert lags == {("in", 0): 6, ("in", 1): 10, ("in", 3): 0}


# --- through the agents (no broker) -----------------------------------------------------------


def _no_network(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("network access attempted")


Make = Callable[..., Awaitable[Any]]


@pytest.fixture
async def make_runtime(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Make]:
    """Return a maker of wired runtimes (``Settings`` overrides as keywords) whose output
    topics are mocked and whose quality windows read ``clock`` (seconds, settable)."""
    for name in list(os.environ):
        if name.startswith("LEARNSTREAM_"):
            monkeypatch.delenv(name)
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    made: list[Any] = []

    async def make(**overrides: Any) -> Any:
        settings = Settings(
            store="memory://", sample_format="json", data_dir=str(tmp_path), **overrides
        )
        app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
        runtime = wire(app, settings, ends=FakeEnds())
        mock_outputs(app, runtime)
        windows(runtime).clock = Seconds(100.0)
        made.append(app)
        return runtime

    yield make
    for app in made:
        close_consumer_loop(app)


@pytest.fixture
async def runtime(make_runtime: Make) -> Any:
    """Return the wired runtime of an app whose output topics are mocked."""
    return await make_runtime()


class Seconds:
    """A monotonic clock the test moves (``now``, in seconds)."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def windows(runtime: Any) -> QualityWindows:
    """Return the runtime's quality windows (its ``on_sample`` listener)."""
    found = next(f.__self__ for f in runtime.on_sample if hasattr(f, "__self__"))
    assert isinstance(found, QualityWindows)
    return found


async def tick(runtime: Any, feed: Feed, partition: int) -> None:
    """Deliver one sweeper tick to ``partition``."""
    name = runtime.topics.join_ticks.get_topic_name()
    await feed.put("sweeper", name, b"", key=b"tick", partition=partition)


async def _decide(runtime: Any, feed: Feed, approved: bool, when: datetime, partition: int) -> None:
    sim = Simulator(seed=int(when.timestamp()) % 1000 + partition, pii_ratio=0.0)
    snap = sim.plan(when)
    key = snap["plan"]["plan_id"].encode()
    topic = "plan_approved" if approved else "plan_rejected"
    for agent, field, value in (
        ("plans", "plans", snap),
        ("decisions", topic, sim.decision(snap, approved, when)),
    ):
        name = runtime.settings.topics.name(field)
        await feed.put(agent, name, orjson.dumps(value), key=key, partition=partition)


async def test_samples_are_counted_by_event_time_partition_and_lateness(
    runtime: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    feed = Feed(runtime.app)
    quality = windows(runtime)
    fresh = datetime.now(UTC) - timedelta(seconds=1)
    # The gauges show the window holding the clock's moment: pinned to the events' time, a
    # run that crosses a 5-minute boundary still reads the window the events are in.
    quality.wall = lambda: fresh
    await _decide(runtime, feed, True, fresh, partition=2)
    await _decide(runtime, feed, False, fresh, partition=3)
    await _decide(runtime, feed, True, fresh - timedelta(hours=3), partition=2)  # past expiry: late
    assert all(not table.data for table in quality.tables.values())  # counted in memory
    quality.flush_all()  # what a commit does first
    counts = quality.counts({2, 3}, fresh.timestamp())
    assert counts["5m"]["intent_resolution"] == {"good": 1, "acceptable": 0, "poor": 1}
    assert counts["1h"]["confirm_decision"] == {"good": 1, "acceptable": 0, "poor": 1}
    assert quality.counts({2}, fresh.timestamp())["5m"]["confirm_decision"]["poor"] == 0
    keys = {key for key, _window in quality.tables["5m"].data}
    families = ("intent_resolution", "confirm_decision")
    assert keys == {f"{f}|{q}|{p}" for f in families for q, p in (("good", 2), ("poor", 3))}
    value = runtime.metrics.registry.get_sample_value
    assert value("learnstream_late_events_total", {"window": "5m"}) == 2  # confirm + intent
    assert value("learnstream_late_events_total", {"window": "1h"}) == 2

    quality.refresh(partitions={2})
    gauge = {"family": "intent_resolution", "quality": "good", "window": "5m"}
    assert value("learnstream_window_samples", gauge) == 1
    assert value("learnstream_window_samples", {**gauge, "quality": "poor"}) == 0  # p3: not ours
    quality.refresh(partitions=set())  # revoked
    assert value("learnstream_window_samples", gauge) == 0
    report = quality.report()
    assert set(report["windows"]) == {"5m", "1h"}
    assert report["partitions"] == []  # never assigned: the app is not running
    assert report["app_id"] == quality.app.conf.id  # `learnstream quality` says whose it read


async def test_a_flush_writes_what_counting_each_sample_wrote_once_per_key(
    make_runtime: Make,
) -> None:
    """A scripted stream over four partitions and ten minutes of event time, in hopping
    windows (steps whose windows overlap): after the ticks, the tables hold what Faust's own
    windows give counting sample by sample, and each window key was written once."""
    hopping = WindowSettings(hopping=True, step=timedelta(minutes=1))
    # plan states written at once: only the windows decide what may be committed here
    runtime = await make_runtime(windows=hopping, join={"hold_in_memory": "0s"})
    quality, feed = windows(runtime), Feed(runtime.app)
    expected: dict[str, Counter[Any]] = {spec.label: Counter() for spec in quality.specs}

    def count_like_faust(sample: LearningSample) -> None:
        event = current_event()
        assert event is not None
        ts = event_timestamp(sample.meta.event_time, datetime.now(UTC))
        key = table_key(
            sample.sample_family, sample.feedback.quality_label, event.message.partition
        )
        for spec in quality.specs:
            window = HoppingWindow(spec.size, spec.step, spec.expires)
            expected[spec.label].update((key, r) for r in window.ranges(ts))

    runtime.on_sample.append(count_like_faust)
    writes: Counter[tuple[str, Any]] = Counter()
    for label, table in quality.tables.items():
        send = table.send_changelog

        def counted(partition: Any, key: Any, *args: Any, _l: str = label, _s: Any = send) -> Any:
            writes[(_l, key)] += 1
            return _s(partition, key, *args)

        table.send_changelog = counted  # what Table.on_key_set calls for every write

    start = datetime.now(UTC) - timedelta(minutes=10)
    for i in range(20):
        when = start + timedelta(seconds=29 * i)
        await _decide(runtime, feed, i % 3 != 0, when, partition=i % 4)
    assert writes == Counter()  # within the flush interval: nothing written yet
    processed = list(runtime.progress.partitions())
    assert {tp.partition for tp in processed} == {0, 1, 2, 3}
    assert all(runtime.progress.commit_offset(tp) is None for tp in processed)

    windows(runtime).clock.now += quality.flush_interval
    for partition in range(4):
        await tick(runtime, feed, partition)
    for label, table in quality.tables.items():
        assert dict(table.data.items()) == dict(expected[label])
    assert set(writes) == {(label, key) for label in expected for key in expected[label]}
    assert set(writes.values()) == {1}
    for tp in runtime.progress.partitions():  # the inputs', and each tick's own offset
        assert runtime.progress.commit_offset(tp) == runtime.progress.next_offset(tp)


async def test_an_idle_partition_is_flushed_by_its_tick_and_a_busy_one_by_its_records(
    runtime: Any,
) -> None:
    quality, feed = windows(runtime), Feed(runtime.app)
    half = quality.flush_interval / 2
    fresh = datetime.now(UTC) - timedelta(seconds=1)

    def written() -> dict[str, int]:
        return quality.counts({1, 2}, fresh.timestamp(), unwritten=False)["5m"]["intent_resolution"]

    await _decide(runtime, feed, True, fresh, partition=1)
    await tick(runtime, feed, 1)  # within the interval: still pending
    assert written()["good"] == 0
    windows(runtime).clock.now += half
    await _decide(runtime, feed, False, fresh, partition=2)
    windows(runtime).clock.now += half  # an interval since partition 1 was first seen, half for 2
    await tick(runtime, feed, 1)
    assert written() == {"good": 1, "acceptable": 0, "poor": 0}
    windows(runtime).clock.now += half
    # partition 2's next record (a plan snapshot) flushes its rejection; the approval that
    # follows it waits for the next flush
    await _decide(runtime, feed, True, fresh + timedelta(seconds=1), partition=2)
    assert written() == {"good": 1, "acceptable": 0, "poor": 1}
    assert quality.pending.partitions() == [2]
    # what the gauges and /quality show: the tables and what is in memory
    current = quality.counts({1, 2}, fresh.timestamp())["5m"]["intent_resolution"]
    assert current == {"good": 2, "acceptable": 0, "poor": 1}
    assert quality.counts({1}, fresh.timestamp())["5m"]["intent_resolution"]["good"] == 1


def _released(runtime: Any, partition: int) -> list[bool | None]:
    """Tell, for each processed topic partition ``partition``, whether a commit may take
    everything processed (up to a record the join holds in memory); None: nothing of it."""
    progress = runtime.progress
    tps = [tp for tp in progress.partitions() if tp.partition == partition]
    assert tps
    found: list[bool | None] = []
    for tp in tps:
        offset, processed, pinned = (
            progress.commit_offset(tp),
            progress.next_offset(tp),
            progress.pinned(tp),
        )
        upto = processed if pinned is None else min(processed, pinned)
        found.append(None if offset is None else offset == upto)
    return found


async def test_an_at_least_once_commit_flushes_only_the_partitions_that_are_due(
    runtime: Any,
) -> None:
    quality, feed = windows(runtime), Feed(runtime.app)
    fresh = datetime.now(UTC) - timedelta(seconds=1)
    await _decide(runtime, feed, True, fresh, partition=1)
    windows(runtime).clock.now += quality.flush_interval
    await _decide(runtime, feed, False, fresh, partition=2)  # flushes nothing: 2 just seen
    await tick(runtime, feed, 3)  # nothing counted on 3
    assert quality.pending.partitions() == [1, 2]
    value = runtime.metrics.registry.get_sample_value
    held = {"table": quality.tables["5m"].name}
    assert held["table"] == "quality_5m"
    # per partition, intent_resolution and confirm_decision: one window key each in 5m
    assert value("learnstream_held_writes", held) == 4

    runtime.progress.before_commit()  # what a commit runs first
    assert quality.pending.partitions() == [2]
    assert value("learnstream_held_writes", held) == 2
    written = quality.counts({1, 2}, fresh.timestamp(), unwritten=False)["5m"]
    assert written["intent_resolution"] == {"good": 1, "acceptable": 0, "poor": 0}
    assert _released(runtime, 1) == [True, True]
    assert _released(runtime, 3) == [True]  # nothing counted: released as it is
    assert _released(runtime, 2) == [None, None]

    runtime.app.rebalancing = True  # a rebalance's commit: everything goes out
    try:
        runtime.progress.before_commit()
    finally:
        runtime.app.rebalancing = False
    assert quality.pending.partitions() == []
    assert _released(runtime, 2) == [True, True]

    await _decide(runtime, feed, True, fresh, partition=2)
    assert quality.pending.partitions() == [2]
    runtime.app._stopped.set()  # the worker stops: its last commit flushes everything too
    try:
        runtime.progress.before_commit()
    finally:
        runtime.app._stopped.clear()
    assert quality.pending.partitions() == []


async def test_an_exactly_once_commit_flushes_every_partition(make_runtime: Make) -> None:
    runtime = await make_runtime(processing_guarantee="exactly_once")
    quality, feed = windows(runtime), Feed(runtime.app)
    fresh = datetime.now(UTC) - timedelta(seconds=1)
    await _decide(runtime, feed, True, fresh, partition=1)
    assert quality.pending.partitions() == [1]
    runtime.progress.before_commit()  # a transaction carries the counts of what it commits
    assert quality.pending.partitions() == []
    written = quality.counts({1}, fresh.timestamp(), unwritten=False)["5m"]
    assert written["intent_resolution"]["good"] == 1
    assert _released(runtime, 1) == [True, True]


async def test_revoked_partitions_forget_their_pending_counts(runtime: Any) -> None:
    quality, feed = windows(runtime), Feed(runtime.app)
    fresh = datetime.now(UTC) - timedelta(seconds=1)
    await _decide(runtime, feed, True, fresh, partition=1)
    await _decide(runtime, feed, True, fresh, partition=2)
    revoked = {tp for tp in runtime.progress.partitions() if tp.partition == 1}
    await runtime.app.on_partitions_revoked.send(revoked)
    assert quality.pending.partitions() == [2]  # the next owner of 1 replays and counts them
    assert all(runtime.progress.next_offset(tp) is None for tp in revoked)


# --- the CLI ----------------------------------------------------------------------------------

REPORT = {
    "partitions": [0, 1],
    "windows": {
        "5m": window_report(FIVE_MIN, window_counts(_items(), T - 100, {0, 1}), T),
    },
}


@pytest.fixture
def quality_url() -> Iterator[str]:
    """Serve REPORT at http://127.0.0.1:<port>/quality."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(REPORT).encode()
            self.send_response(200 if self.path == "/quality" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/quality"
    server.shutdown()
    server.server_close()


def test_cli_quality_prints_a_table_and_json(quality_url: str) -> None:
    runner = CliRunner()
    table = runner.invoke(main, ["quality", "--url", quality_url], terminal_width=120)
    assert table.exit_code == 0, table.output
    assert "intent_resolution" in table.output
    assert "100.0%" in table.output  # approval of intent_resolution: 7 good of 7
    raw = runner.invoke(main, ["quality", "--url", quality_url, "--json"])
    assert raw.exit_code == 0, raw.output
    assert json.loads(raw.output) == REPORT


def test_cli_quality_explains_an_unreachable_worker() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(main, ["quality", "--url", f"http://127.0.0.1:{port}/quality"])
    assert result.exit_code == 1
    assert "is a worker running?" in result.output
    bad = CliRunner().invoke(main, ["quality", "--url", "file:///etc/passwd"])
    assert bad.exit_code != 0
    assert "http(s)" in bad.output
