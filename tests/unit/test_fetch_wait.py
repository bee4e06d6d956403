"""How long the broker may hold a fetch of the worker's consumer (seam 15,
agents/seams/faust_compat.py::FetchWait): short only while records the worker keeps up with
are being handed over, so their partitions' next records do not wait behind quiet ones."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from aiokafka import TopicPartition

from learnstream.agents.seams.faust_compat import FetchWait, _waiting

WAIT = FetchWait(idle_ms=100, keeping_up_ms=25, behind=1000)
BUSY, OTHER = TopicPartition("events", 0), TopicPartition("events", 1)


def _state(highwater: int | None, position: int | None, paused: bool = False) -> Any:
    return SimpleNamespace(
        highwater=highwater,
        position=position,
        has_valid_position=position is not None,
        paused=paused,
    )


def _assignment(**states: Any) -> Any:
    by_tp = {BUSY: states.get("busy"), OTHER: states.get("other")}
    return SimpleNamespace(state_value=by_tp.get)


def test_nothing_fetched_and_waiting_is_the_long_wait() -> None:
    """Every partition is in the fetch: the broker answers as soon as any gets a record."""
    assert WAIT.for_fetch({}, _assignment(busy=_state(10, 10))) == 100


def test_a_few_records_being_handed_over_make_the_wait_short() -> None:
    assignment = _assignment(busy=_state(40, 12), other=_state(7, 5))
    assert WAIT.for_fetch({BUSY: object(), OTHER: object()}, assignment) == 25


def test_a_backlog_on_the_partitions_left_out_is_the_long_wait() -> None:
    """They refill from the backlog for a while: empty fetches every 25 ms would only cost
    CPU (benchmarks/RESULTS.md, 30 Nov 07:33–08:00)."""
    assignment = _assignment(busy=_state(1_500, 900), other=_state(800, 300))
    assert WAIT.for_fetch({BUSY: object(), OTHER: object()}, assignment) == 100
    assert WAIT.for_fetch({BUSY: object()}, assignment) == 25  # 600 behind: keeping up


def test_paused_partitions_are_not_waited_for() -> None:
    """Faust does not hand a paused partition's records over until it resumes."""
    assignment = _assignment(busy=_state(40, 12, paused=True), other=_state(7, 5))
    assert WAIT.for_fetch({BUSY: object()}, assignment) == 100
    assert WAIT.for_fetch({BUSY: object(), OTHER: object()}, assignment) == 25


def test_a_partition_not_known_yet_is_the_long_wait() -> None:
    """No fetch answered for it yet, no position, or no longer assigned."""
    records = {BUSY: object()}
    assert WAIT.for_fetch(records, _assignment(busy=_state(None, 3))) == 100
    assert WAIT.for_fetch(records, _assignment(busy=_state(9, None))) == 100
    assert WAIT.for_fetch(records, _assignment()) == 100


def test_the_wrapped_fetcher_builds_each_fetch_with_the_wait_for_it() -> None:
    seen: list[int] = []
    fetcher = SimpleNamespace(_fetch_max_wait_ms=1500, _records={})

    def get_actions(assignment: Any) -> str:
        seen.append(fetcher._fetch_max_wait_ms)
        return "actions"

    actions = _waiting(fetcher, get_actions, WAIT)
    assignment = _assignment(busy=_state(40, 12))
    assert actions(assignment) == "actions"
    fetcher._records = {BUSY: object()}
    assert actions(assignment) == "actions"
    assert seen == [100, 25]
