"""The worker's start-up summary: phases end where the next begins, and the process age."""

from __future__ import annotations

from learnstream.agents.seams.ready import startup_phases
from learnstream.streams.observe.startup import StartupPhases, process_age


def test_phases_follow_each_other_and_sum_to_the_total() -> None:
    phases = StartupPhases(100.0)
    phases.mark("imports", 102.0)
    phases.mark("topics", 102.5)
    phases.mark("group join and recovery", 107.25)
    assert phases.phases == [
        ("imports", 2.0),
        ("topics", 0.5),
        ("group join and recovery", 4.75),
    ]
    assert phases.total() == 7.25
    assert phases.summary() == (
        "ready in 7.2 s (imports 2.0 s, topics 0.5 s, group join and recovery 4.8 s)"
    )


def test_the_process_age_comes_from_its_start_time_in_ticks() -> None:
    # comm may hold spaces and parentheses: the fields start after the last ")"
    stat = "4242 (python (x) y) S " + " ".join(["0"] * 18) + " 12345 0 0"
    assert process_age(stat, "150.00 300.00", 100) == 150.0 - 123.45


def test_an_unreadable_stat_leaves_the_imports_out() -> None:
    assert process_age("garbage", "150.00 300.00", 100) is None
    assert process_age("1 (x) S 1", "150.00", 100) is None


def test_the_worker_counts_its_own_imports_on_linux() -> None:
    phases = startup_phases()
    assert [name for name, _ in phases.phases] == ["imports"]
    # the age of this test process, however long the run before this test took
    assert phases.total() == phases.phases[0][1] > 0.0


def test_the_startup_benchmark_reads_the_workers_summary_line() -> None:
    from benchmarks.startup import _phases

    phases = StartupPhases(0.0)
    phases.mark("imports", 1.75)
    phases.mark("wiring and warm-up", 2.25)
    phases.mark("group join and recovery", 7.0)
    log = f"[^Worker]: Ready\n[2026-01-01 00:00:00,000] [1] [INFO] worker {phases.summary()}\n"
    assert _phases(log) == {
        "imports": 1.8,
        "wiring and warm-up": 0.5,
        "group join and recovery": 4.8,
    }
    assert _phases("no summary yet") == {}
