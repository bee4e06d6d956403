"""The throughput benchmark's changelog records per input event (issue 31)."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.machine import wait_quiet
from benchmarks.readback import changelog_table
from benchmarks.report import CHANGELOG_NOTE, _above_peer, _paired, _throughput
from benchmarks.suites import changelog_summary, paired_ratios
from benchmarks.throughput import WORKER_COUNTERS, worker_counters


def test_a_changelog_topic_names_its_table_only_for_its_own_app() -> None:
    app = "bench-pii-off-1a2b3c"
    assert changelog_table(f"{app}-plan_state-changelog", app) == "plan_state"
    assert changelog_table(f"{app}-quality_1h-changelog", app) == "quality_1h"
    assert changelog_table(f"{app}-__assignor-__leader", app) is None
    assert changelog_table("bench-pii-on-1a2b3c-pending-changelog", app) is None
    assert changelog_table(f"bench.{app[6:]}.samples", app) is None


def _run(events: int, complete: bool = True, **tables: tuple[int, int, int]) -> dict[str, Any]:
    counts = {t: {"records": r, "tombstones": d, "offsets": o} for t, (r, d, o) in tables.items()}
    return {"events": events, "complete": complete, "changelog": counts}


def test_the_summary_is_the_median_per_input_event_of_the_complete_runs() -> None:
    runs = [
        _run(100, plan_state=(100, 0, 100), pending=(50, 20, 50)),
        _run(100, plan_state=(120, 0, 130), pending=(70, 30, 70)),
        _run(200, plan_state=(220, 0, 220)),  # wrote no pending record: 0 for that table
        _run(100, complete=False, plan_state=(900, 0, 900)),
    ]
    summary = changelog_summary(runs)
    assert summary is not None
    assert summary["tables"] == {"pending": 0.5, "plan_state": 1.1}
    assert summary["total"] == 1.5  # median of 1.5, 1.9 and 1.1
    assert summary["tombstones"] == 0.2
    assert summary["offsets"] == 1.5


def test_values_held_at_the_stop_count_as_the_records_they_become() -> None:
    run = _run(100, plan_state=(30, 0, 30), pair_intents=(10, 0, 10))
    run["changelog"]["plan_state"]["held"] = 5
    run["changelog"]["pair_intents"]["held"] = 3
    summary = changelog_summary([run])
    assert summary is not None
    assert summary["tables"] == pytest.approx({"pair_intents": 0.13, "plan_state": 0.35})
    assert summary["total"] == pytest.approx(0.48)
    assert summary["held"] == pytest.approx(0.08)
    assert summary["offsets"] == 0.4  # what the broker holds: no held value in it


def test_distinct_keys_give_the_floor_of_writing_each_key_once() -> None:
    runs = [
        _run(100, plan_state=(30, 0, 30), pair_intents=(10, 0, 10)),
        _run(100, plan_state=(40, 0, 40), pair_intents=(10, 0, 10)),
    ]
    for run, keys in zip(runs, ((25, 10), (25, 5)), strict=True):
        run["changelog"]["plan_state"]["keys"], run["changelog"]["pair_intents"]["keys"] = keys
    summary = changelog_summary(runs)
    assert summary is not None
    assert summary["keys"] == pytest.approx(0.325)  # median of 0.35 and 0.30
    assert summary["total"] == pytest.approx(0.45)
    worker = {**summary, "tables": {"plan_state": 0.35, "pair_intents": 0.10}}
    text = "\n".join(_throughput(_section(**{"pii-on": _row("PII on", worker)}), 1000))
    assert "| PII on | 0.100 | 0.350 | **0.450** | 0.000 | 0.000 | 0.450 | 0.325 |" in text


def test_runs_recorded_before_keys_were_counted_give_no_floor() -> None:
    run = _run(100, plan_state=(30, 0, 30))
    summary = changelog_summary([run])
    assert summary is not None
    assert summary["keys"] is None


def test_no_summary_without_a_complete_counted_run() -> None:
    assert changelog_summary([_run(100, complete=False, plan_state=(1, 0, 1))]) is None
    assert changelog_summary([{"events": 100, "complete": True}]) is None


def _row(label: str, changelog: dict[str, Any] | None) -> dict[str, Any]:
    median = {"events_per_s": 100.0, "outputs_per_s": 80.0, "cpu_s": 1.0, "events": 1000}
    return {"label": label, "median": median, "complete": "1/1", "changelog": changelog}


def _section(**rows: dict[str, Any]) -> dict[str, Any]:
    baseline = {"median": {"events_per_s": 1000.0, "cpu_s": 0.1, "events": 4000}, "complete": "1/1"}
    return {"baseline": baseline, **rows}


def test_the_report_gives_the_total_per_row_and_the_worker_tables_with_what_is_counted() -> None:
    worker = {
        "tables": {"pending": 0.8, "plan_state": 1.2},
        "total": 2.4,
        "tombstones": 0.4,
        "offsets": 2.4,
    }
    none = {"tables": {}, "total": 0.0, "tombstones": 0.0, "offsets": 0.0}
    section = _section(
        **{"fpeer:pii-off": _row("Faust peer", none), "pii-off": _row("PII off", worker)}
    )
    text = "\n".join(_throughput(section, 1000))
    assert "| changelog records/event |" in text
    assert "| Faust peer | 100 | 80 |" in text
    assert "| 0.00 | 1/1 |" in text
    assert "| 2.40 | 1/1 |" in text
    assert (
        "| configuration | `pending` | `plan_state` | total | of which held at stop "
        "| of which tombstones | end offsets | distinct keys |" in text
    )
    assert "| PII off | 0.800 | 1.200 | **2.400** | 0.000 | 0.400 | 2.400 | – |" in text
    assert "| Faust peer | 0.000" not in text  # no tables: no breakdown line
    assert CHANGELOG_NOTE in text


def test_results_recorded_before_the_count_render_without_it() -> None:
    text = "\n".join(_throughput(_section(**{"pii-off": _row("PII off", None)}), 1000))
    assert "| – | 1/1 |" in text
    assert CHANGELOG_NOTE not in text


def test_the_worker_is_paired_with_the_faust_peer_round_by_round() -> None:
    ours = [
        {"complete": True, "events_per_s": 300.0},
        {"complete": False, "events_per_s": 900.0},  # a round that did not complete: out
        {"complete": True, "events_per_s": 450.0},
    ]
    theirs = [{"complete": True, "events_per_s": 600.0}] * 2 + [
        {"complete": True, "events_per_s": 500.0}
    ]
    assert paired_ratios(ours, theirs) == [0.5, 0.9]
    section = {
        "baseline": {
            "label": "baseline",
            "rounds": [
                {"load": 0.4, "quiet": True, "limit": 1.0},
                {"load": 1.7, "quiet": False, "limit": 1.0},
            ],
        },
        "pii-on": {"label": "PII on", "fpeer_rounds": [0.5, 0.9, 0.7]},
    }
    assert _paired(section) == [
        "- PII on, × Faust peer paired round by round: median 0.70, spread 0.50–0.90 "
        "(0.50, 0.90, 0.70).",
        "- 1-minute load average as each round began: 0.40, 1.70; waited for at most 1.0 "
        "before each: 1 of 2 rounds began quiet.",
        "",
    ]


async def test_the_quiet_check_waits_for_the_load_to_fall_or_gives_up() -> None:
    loads, slept = iter([3.0, 2.0, 0.8, 0.5]), []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    assert await wait_quiet(1.0, 60, load=lambda: next(loads), sleep=sleep) == (0.8, True)
    assert slept == [5.0, 5.0]
    busy = await wait_quiet(1.0, 10, load=lambda: 4.0, sleep=sleep)
    assert busy == (4.0, False)


def test_the_profile_puts_the_worker_beside_the_faust_peer_per_event() -> None:
    def packages(**self_s: float) -> list[dict[str, Any]]:
        return [{"package": name, "self_s": s, "self_pct": 0.0} for name, s in self_s.items()]

    section = {
        "run": {"events": 1000, "events_per_s": 100.0},
        "packages": packages(faust=3.0, streams=2.0, aiokafka=1.0),
        "faust_peer": {
            "run": {"events": 2000, "events_per_s": 250.0},
            "packages": packages(faust=2.0, streams=2.0, presidio=1.0),
        },
    }
    lines = _above_peer(section)
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| package")]
    assert rows == [
        "| faust | 3.000 | 1.000 | +2.000 |",
        "| aiokafka | 1.000 | – | +1.000 |",
        "| streams | 2.000 | 1.000 | +1.000 |",
        "| presidio | – | 0.500 | -0.500 |",
        "| **total (these packages)** | 6.000 | 2.500 | +3.500 |",
    ]
    assert _above_peer({"run": {"events": 1}, "packages": []}) == []


def test_a_run_reads_the_worker_counters_that_show_work_beyond_its_input() -> None:
    class _Fleet:
        def metric(self, name: str) -> float:
            return {"learnstream_events_total": 28081.0, "learnstream_rebalances_total": 1.0}.get(
                name, 0.0
            )

    counters = worker_counters(_Fleet())  # type: ignore[arg-type]
    assert set(counters) == set(WORKER_COUNTERS)
    assert counters["events"] == 28081.0
    assert counters["rebalances"] == 1.0
    assert counters["redelivered"] == 0.0
