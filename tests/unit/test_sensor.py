"""Faust's sensor off the per-event path (agents/seams/sensor.py), its series still exported."""

from __future__ import annotations

from typing import Any

import pytest
from faust.types import TP
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from learnstream.agents.seams.sensor import FAUST_SERIES, LeanMonitor
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app

TOPIC = TP("mplp.plan_approved", 1)


def _series(registry: CollectorRegistry) -> dict[str, float]:
    """Return {exposed sample name + labels: value} of every faust_* sample."""
    text = generate_latest(registry).decode()
    return {
        f"{sample.name}{sorted(sample.labels.items())}": sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith("faust_") and not sample.name.endswith("_created")
    }


class _Stream:
    shortlabel = "Stream: Topic: mplp.plan_approved"


class _Table:
    name = "plan_state"


@pytest.fixture
def monitor() -> tuple[LeanMonitor, CollectorRegistry]:
    registry = CollectorRegistry()
    return LeanMonitor(registry), registry


def test_a_wired_worker_uses_the_lean_monitor_and_exposes_the_contract(tmp_path: Any) -> None:
    settings = Settings(store="memory://", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings)
    assert isinstance(app.monitor, LeanMonitor)
    names = {key.partition("[")[0] for key in _series(runtime.metrics.registry)}
    assert names == set(FAUST_SERIES)
    assert "/metrics" in app.web.views


def test_per_event_calls_touch_no_series(monitor: tuple[LeanMonitor, CollectorRegistry]) -> None:
    lean, registry = monitor
    before = _series(registry)
    for offset in range(100):
        lean.on_message_in(TOPIC, offset, object())
        state = lean.on_stream_event_in(TOPIC, offset, _Stream(), object())  # type: ignore[arg-type]
        lean.on_table_get(_Table(), b"k")
        lean.on_table_set(_Table(), b"k", b"v")
        lean.on_table_del(_Table(), b"k")
        lean.on_stream_event_out(TOPIC, offset, _Stream(), object(), state)
        lean.on_message_out(TOPIC, offset, object())
    assert _series(registry) == before
    assert lean.messages_received_total == 0  # Faust's Monitor would have counted 100
    assert TOPIC in lean.stream_inbound_time  # Faust's stall warnings read it


def test_sends_commits_and_rebalances_are_exported(
    monitor: tuple[LeanMonitor, CollectorRegistry],
) -> None:
    lean, registry = monitor
    for _ in range(3):
        state = lean.on_send_initiated(None, "t", None, 1, 1)  # type: ignore[arg-type]
        lean.on_send_completed(None, state, None)  # type: ignore[arg-type]
    lean.on_send_error(None, RuntimeError(), None)  # type: ignore[arg-type]
    lean.on_commit_completed(None, lean.on_commit_initiated(None))  # type: ignore[arg-type]
    app: Any = type("App", (), {"rebalancing_count": 1})()
    rebalance = lean.on_rebalance_start(app)
    during = _series(registry)
    lean.on_rebalance_return(app, rebalance)
    recovering = _series(registry)
    lean.on_rebalance_end(app, rebalance)
    after = _series(registry)
    assert after["faust_total_sent_messages_total[]"] == 3
    assert after["faust_total_error_messages_sent_total[]"] == 1
    assert after["faust_consumer_commit_latency_count[]"] == 1
    assert (during["faust_total_rebalances[]"], during["faust_total_rebalances_recovering[]"]) == (
        1,
        0,
    )
    assert recovering["faust_total_rebalances[]"] == 0
    assert recovering["faust_total_rebalances_recovering[]"] == 1
    assert after["faust_total_rebalances_recovering[]"] == 0
