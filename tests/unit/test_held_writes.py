"""Table writes held in memory with their records pinned (agents/joins/held.py)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from faust.types import TP

import learnstream.agents.joins.held
from learnstream.agents.joins.held import FLUSH_STEP, HeldWrites

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
HOLD = timedelta(seconds=10)
PLANS, STAGES = TP("plans", 1), TP("stages", 1)


class Table(dict[str, Any]):
    """A dict that counts its writes and deletes as a changelog would."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, Any]] = []

    def __setitem__(self, key: str, value: Any) -> None:
        self.log.append((key, value))
        super().__setitem__(key, value)

    def pop(self, key: str, default: Any = None) -> Any:
        if key in self:
            self.log.append((key, None))
        return super().pop(key, default)


class FakePins:
    def __init__(self) -> None:
        self.held: Counter[tuple[TP, int]] = Counter()

    def pin(self, tp: TP, offset: int) -> None:
        self.held[tp, offset] += 1

    def unpin(self, tp: TP, offset: int) -> None:
        self.held[tp, offset] -= 1
        if not self.held[tp, offset]:
            del self.held[tp, offset]


@pytest.fixture
def on_partition(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The partition of the record under way (settable; None: no record)."""
    now: list[int | None] = [1]
    monkeypatch.setattr(learnstream.agents.joins.held, "current_partition", lambda: now[0])
    return now


def build(hold: timedelta = HOLD) -> tuple[HeldWrites, Table, FakePins]:
    table, pins = Table(), FakePins()
    return HeldWrites(table, pins, hold), table, pins  # type: ignore[arg-type]


def test_a_key_changed_three_times_within_the_hold_is_written_once(
    on_partition: list[int | None],
) -> None:
    writes, table, pins = build()
    assert writes.put("p", "v1", [(PLANS, 4)], T0) == 1
    writes.put("p", "v2", [(STAGES, 9)], T0 + timedelta(seconds=3))
    writes.put("p", "v3", [(PLANS, 5)], T0 + timedelta(seconds=6))
    assert writes.get("p") == "v3"
    assert "p" not in table
    assert pins.held == Counter({(PLANS, 4): 1, (STAGES, 9): 1, (PLANS, 5): 1})
    assert writes.flush(1, T0 + timedelta(seconds=9)) == 0  # the first change is 9 s old
    assert writes.flush(1, T0 + HOLD) == 1
    assert table.log == [("p", "v3")]
    assert pins.held == Counter()
    assert writes.count() == 0


def test_flush_goes_by_partition_and_age(on_partition: list[int | None]) -> None:
    writes, table, _ = build()
    writes.put("a", "A", [(PLANS, 1)], T0)
    on_partition[0] = 2
    writes.put("b", "B", [(TP("plans", 2), 1)], T0)
    on_partition[0] = 1
    writes.put("c", "C", [(PLANS, 2)], T0 + timedelta(seconds=5))
    assert writes.flush(1, T0 + HOLD) == 1
    assert table.log == [("a", "A")]
    assert (writes.count(1), writes.count(2)) == (1, 1)
    assert writes.flush(2, T0 + HOLD) == 1
    assert writes.flush(1, T0 + 2 * HOLD) == 1
    assert [key for key, _ in table.log] == ["a", "b", "c"]


def test_a_key_written_at_once_takes_what_was_held_with_it(
    on_partition: list[int | None],
) -> None:
    writes, table, pins = build()
    writes.put("p", "v1", [(PLANS, 4)], T0)
    writes.write("p", "v2")  # a change that may not wait
    assert table.log == [("p", "v2")]
    assert pins.held == Counter()
    writes.put("p", "v3", [(PLANS, 6)], T0 + timedelta(seconds=8))  # held again, from now
    assert writes.flush(1, T0 + HOLD) == 0
    assert writes.flush(1, T0 + timedelta(seconds=18)) == 1
    assert table.log == [("p", "v2"), ("p", "v3")]


def test_a_change_that_cannot_wait_is_written(on_partition: list[int | None]) -> None:
    writes, table, _ = build()
    assert writes.put("p", "no records", [], T0) is None
    on_partition[0] = None  # no record under way: no changelog partition to hold it for
    assert writes.put("q", "no record", [(PLANS, 1)], T0) is None
    assert table.log == [("p", "no records"), ("q", "no record")]
    exact, exact_table, _ = build(timedelta(0))  # a hold of 0 s, or exactly_once
    assert not exact.holds
    on_partition[0] = 1
    exact.put("p", "v", [(PLANS, 1)], T0)
    assert exact_table.log == [("p", "v")]


def test_deleting_a_key_only_held_sends_no_tombstone(on_partition: list[int | None]) -> None:
    writes, table, pins = build()
    writes.put("p", "v1", [(PLANS, 4)], T0)
    writes.delete("p")
    assert writes.get("p") is None
    assert table.log == []
    assert pins.held == Counter()
    assert writes.flush(1, T0 + HOLD) == 0
    table["q"] = "stored"
    writes.put("q", "changed", [(PLANS, 5)], T0)
    writes.delete("q")
    assert table.log == [("q", "stored"), ("q", None)]


def test_a_rebalance_drops_what_is_held_but_leaves_the_pins(
    on_partition: list[int | None],
) -> None:
    writes, table, pins = build()
    table["p"] = "written before"
    writes.put("p", "held", [(PLANS, 4)], T0)
    on_partition[0] = 2
    writes.put("r", "other partition", [(TP("plans", 2), 3)], T0)
    assert writes.drop({1}) == ["p"]
    assert writes.get("p") == "written before"
    assert writes.get("r") == "other partition"
    assert pins.held[PLANS, 4] == 1  # Progress drops them at the next assignment
    assert writes.flush(1, T0 + HOLD) == 0
    assert sorted(writes.items(), key=str) == [
        ("p", "written before", None),
        ("r", "other partition", 2),
    ]


def test_a_put_writes_what_its_partition_held_long_enough(on_partition: list[int | None]) -> None:
    writes, table, pins = build()
    writes.put("a", "A", [(PLANS, 1)], T0)
    writes.put("b", "B", [(PLANS, 2)], T0 + timedelta(seconds=4))
    writes.put("c", "C", [(PLANS, 3)], T0 + HOLD)  # a busy partition: no tick needed
    assert table.log == [("a", "A")]
    assert set(pins.held) == {(PLANS, 2), (PLANS, 3)}


def test_a_burst_come_due_is_written_a_step_at_a_time_oldest_first(
    on_partition: list[int | None],
) -> None:
    """Values held together come due together: a put writes at most FLUSH_STEP of them, so
    no one record pays for writing the whole burst; the rest stay pinned for the next."""
    writes, table, pins = build()
    burst = 3 * FLUSH_STEP + 5
    for i in range(burst):
        writes.put(f"k{i:03d}", i, [(PLANS, i)], T0)
    writes.put("late", "L", [(PLANS, burst)], T0 + HOLD)
    assert [key for key, _ in table.log] == [f"k{i:03d}" for i in range(FLUSH_STEP)]
    assert min(offset for _, offset in pins.held) == FLUSH_STEP  # the rest still pinned
    assert writes.flush(1, T0 + HOLD, FLUSH_STEP) == FLUSH_STEP  # a tick: one step too
    assert writes.flush(1, T0 + HOLD) == burst - 2 * FLUSH_STEP  # no limit: the rest
    assert [key for key, _ in table.log] == [f"k{i:03d}" for i in range(burst)]
    assert set(pins.held) == {(PLANS, burst)}
