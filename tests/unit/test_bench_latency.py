"""The latency suite's loads: the fixed ones, and half of one worker's measured capacity."""

from __future__ import annotations

from typing import Any

from benchmarks.report import _latency
from benchmarks.suites import capacity, event_share, latency_rates


def test_the_capacity_is_the_pii_on_median_of_the_throughput_suite() -> None:
    throughput = {
        "pii-off": {"median": {"events_per_s": 700.0}},
        "pii-on": {"median": {"events_per_s": 577.4}},
    }
    assert capacity(throughput) == 577.4
    assert capacity({"pii-off": {"median": {"events_per_s": 700.0}}}) is None
    assert capacity({"pii-on": {"median": {}}}) is None  # every run failed
    assert capacity(None) is None  # the suite did not run


def test_half_of_the_capacity_joins_the_fixed_loads_in_order() -> None:
    assert latency_rates((100.0, 500.0, 1000.0), 577.4) == [
        (100.0, False),
        (289.0, True),
        (500.0, False),
        (1000.0, False),
    ]
    # 975 input events/s of which 60 % are not plans: the phases pace those, 292.5/s is half
    assert latency_rates((100.0,), 975.0, share=0.6) == [(100.0, False), (292.0, True)]
    assert latency_rates((100.0, 500.0), None) == [(100.0, False), (500.0, False)]


def _row(rate: float, half: bool, p99: float) -> dict[str, Any]:
    median = {"achieved_per_s": rate, "p50": 10.0, "p95": 50.0, "p99": p99, "max": 200.0}
    return {"median": median, "offered_per_s": rate, "half_capacity": half, "complete": "3/3"}


def test_the_report_judges_p99_at_500_per_s_and_at_half_the_capacity() -> None:
    section = {
        "config": "PII on",
        "capacity": 577.4,
        "rates": [_row(100.0, False, 120.0), _row(289.0, True, 95.0), _row(500.0, False, 2400.0)],
    }
    rows = [line for line in _latency(section) if line.startswith("| ") and "---" not in line]
    assert rows[1].startswith("| 100 |")
    assert rows[1].endswith("| 3/3 |  |")  # no target at 100/s
    assert rows[2].startswith("| 289 (half of one worker's capacity) |")
    assert rows[2].endswith("p99 ≤ 100 ms: met |")
    assert rows[3].endswith("p99 ≤ 100 ms: **missed** |")


def test_the_phases_pace_the_records_that_are_not_plans() -> None:
    share = event_share()
    assert 0.5 < share < 0.75  # the workload: one plan, then its decision, delta or stages


def test_the_report_puts_the_faust_peers_latency_beside_the_workers() -> None:
    row = _row(141.0, True, 120.0)
    peer = {"achieved_per_s": 141.0, "p50": 21.9, "p95": 43.8, "p99": 57.6, "max": 64.3}
    row["faust_peer"] = {"median": peer, "complete": "1/1"}
    older = _row(100.0, False, 90.0)  # a results file from before the peer was measured
    section = {"config": "PII on", "capacity": 455.0, "rates": [older, row]}
    rows = [line for line in _latency(section) if line.startswith("| ") and "---" not in line]
    assert "Faust peer p50 / p99 ms (the bound)" in rows[0]
    assert "| 200.0 | – / – | – / – (– / –) | 3/3 |" in rows[1]
    assert "| 200.0 | 21.9 / 57.6 | – / – (– / –) | 3/3 | p99 ≤ 100 ms: **missed** |" in rows[2]


def test_the_report_shows_what_the_paced_events_cost_worker_and_peer() -> None:
    """The CPU per paced event and the cores it keeps busy: the load a tail is read against."""
    row = _row(141.0, True, 180.0)
    row["median"] |= {"cpu_ms_per_event": 6.12, "cores": 0.83}
    peer = {"p50": 18.1, "p99": 58.0, "cpu_ms_per_event": 1.9, "cores": 0.27}
    row["faust_peer"] = {"median": peer, "complete": "3/3"}
    section = {"config": "PII on", "capacity": 455.0, "rates": [row]}
    rows = [line for line in _latency(section) if line.startswith("| ") and "---" not in line]
    assert "| CPU ms per paced event, worker / peer (cores busy) |" in rows[0]
    assert "| 18.1 / 58.0 | 6.12 / 1.90 (0.83 / 0.27) | 3/3 |" in rows[1]


def test_the_report_gives_the_half_capacity_p99_round_by_round_and_the_rounds_loads() -> None:
    row = _row(189.0, True, 141.7)
    row["runs"] = [{"p99": 154.6}, {"p99": 141.7}, {"p99": 86.9}]
    row["faust_peer"] = {"median": {"p99": 38.4}, "runs": [{"p99": 29.7}, {"p99": 38.4}]}
    busy = {"load": 1.83, "quiet": False, "limit": 1.0}
    starts = {
        "worker": [{"load": 0.9, "quiet": True, "limit": 1.0}, busy],
        "peer": [{"load": 0.95, "quiet": True, "limit": 1.0}, {**busy, "load": 0.7, "quiet": True}],
    }
    section = {"config": "PII on", "capacity": 611.0, "rates": [_row(100.0, False, 90.0), row]}
    text = _latency({**section, "rounds": starts})
    assert (
        "- p99 at half capacity, round by round: worker 154.6, 141.7, 86.9; Faust peer 29.7, 38.4."
        in text
    )
    assert (
        "- 1-minute load average as each round began, worker / Faust peer: 0.90 / 0.95, "
        "1.83 / 0.70; waited for at most 1.0 before each: 3 of 4 began quiet."
    ) in text
    older = _latency(section)  # recorded before the rounds' loads were kept
    assert not any(line.startswith("- 1-minute") for line in older)
    assert _latency({**section, "rates": [_row(189.0, True, 99.0)]})[-1] == ""  # no runs: no line
