"""The sweeper's index of terminal plans (streams/join/expiry.py)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from learnstream.streams.join.expiry import (
    EXPIRY_BUCKET,
    SCAN_SLICE,
    ExpiryIndex,
    partition_of,
    stored_plan_id,
    terminal_entry,
    terminal_since,
)
from learnstream.streams.samples.ids import canonical_id

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TTL = timedelta(hours=1)


def ids(n: int) -> list[str]:
    return [str(uuid.UUID(int=i, version=4)) for i in range(1, n + 1)]


def test_partition_of_spreads_plan_ids_over_every_partition() -> None:
    assert {partition_of(k, 4) for k in ids(200)} == {0, 1, 2, 3}


def test_due_yields_a_partitions_plans_in_expiry_order_once() -> None:
    index = ExpiryIndex(4)
    plans = ids(40)
    for i, plan_id in enumerate(plans):
        index.note(plan_id, T0 + timedelta(minutes=i))
    p = partition_of(plans[0], 4)
    mine = [plan_id for plan_id in plans if partition_of(plan_id, 4) == p]
    moment = T0 + TTL + timedelta(minutes=21)  # plans 0..20 have outlived their minute
    due = list(index.due(p, moment, TTL))
    assert due == [plan_id for plan_id in mine if plans.index(plan_id) <= 20]
    assert list(index.due(p, moment, TTL)) == []  # popped: not yielded twice
    assert len(index) == 40 - len(due)


def test_a_plan_noted_again_comes_out_at_each_time_and_none_is_ignored() -> None:
    index = ExpiryIndex(1)
    [plan_id] = ids(1)
    index.note(plan_id, T0)
    index.note(plan_id, T0 + timedelta(hours=5))  # re-opened and terminal again later
    index.note(plan_id, None)  # not terminal: ignored
    assert len(index) == 2
    # due once its whole minute has outlived the ttl: up to a minute late, never early
    assert list(index.due(0, T0 + TTL + timedelta(seconds=59), TTL)) == []
    assert list(index.due(0, T0 + TTL + EXPIRY_BUCKET, TTL)) == [plan_id]  # the table decides
    assert list(index.due(0, T0 + timedelta(hours=6, minutes=1), TTL)) == [plan_id]
    assert len(index) == 0


def test_no_plan_comes_out_before_its_ttl_whatever_its_second() -> None:
    index = ExpiryIndex(1)
    plans = ids(120)
    for i, plan_id in enumerate(plans):
        index.note(plan_id, T0 + timedelta(seconds=i))
    for step in range(0, 300, 7):
        moment = T0 + TTL + timedelta(seconds=step)
        for plan_id in index.due(0, moment, TTL):
            since = T0 + timedelta(seconds=plans.index(plan_id))
            assert moment - since >= TTL
            assert moment - since < TTL + 2 * EXPIRY_BUCKET
    assert len(index) == 0


def test_ids_that_are_no_canonical_uuid_are_kept_as_they_are() -> None:
    index = ExpiryIndex(1)
    upper = str(uuid.UUID(int=0xABCDEF, version=4)).upper()
    for plan_id in ("plan-123", upper, ids(1)[0]):
        index.note(plan_id, T0)
    assert list(index.due(0, T0 + TTL + EXPIRY_BUCKET, TTL)) == [ids(1)[0], "plan-123", upper]


def test_rebuild_indexes_the_terminal_plans_of_a_table_scan() -> None:
    index = ExpiryIndex(2)
    a, b, c = ids(3)
    index.note(c, T0)  # forgotten by the rebuild: the table no longer says so
    table = {a: {"terminal_since": "2026-03-01T12:00:00Z"}, b: {"updated_at": "x"}, c: None}
    index.rebuild(table.items())
    assert index.built
    assert len(index) == 1
    late = T0 + TTL + EXPIRY_BUCKET
    assert [p for part in range(2) for p in index.due(part, late, TTL)] == [a]
    index.invalidate()
    assert not index.built
    assert len(index) == 0


def test_terminal_since_reads_the_stored_form() -> None:
    assert terminal_since({"terminal_since": "2026-03-01T12:00:00Z"}) == T0
    assert terminal_since({"terminal_since": None}) is None
    assert terminal_since(None) is None
    assert terminal_since(b'{"terminal_since":"2026-03-01T12:00:00Z"}') == T0
    assert terminal_since(b'{"updated_at":"2026-03-01T12:00:00Z"}') is None


def test_a_stand_in_key_is_swept_on_the_partition_of_the_runtime_id() -> None:
    # The table key of "plan-123" is a UUID stand-in; its changelog records went to the
    # partition of the input records' key, the runtime's own spelling.
    runtime_id = "plan-123"
    key = canonical_id(runtime_id)
    assert partition_of(key, 4) != partition_of(runtime_id, 4)  # else the test proves nothing
    stored = {
        "terminal_since": "2026-03-01T12:00:00Z",
        "snapshot": {"plan": {"plan_id": runtime_id}},
    }
    assert stored_plan_id(stored) == runtime_id
    assert stored_plan_id(b'{"snapshot":{"plan":{"plan_id":"plan-123"}}}') == runtime_id
    assert stored_plan_id({"snapshot": {}}) is None
    index = ExpiryIndex(4)
    index.rebuild([(key, stored)])
    later = T0 + timedelta(days=2)
    assert list(index.due(partition_of(key, 4), later, timedelta(hours=24))) == []
    assert list(index.due(partition_of(runtime_id, 4), later, timedelta(hours=24))) == [key]


# --- the rebuild in slices: the event loop is handed back between them --------------------


def terminal_table(n: int) -> dict[str, bytes]:
    return {
        plan_id: b'{"terminal_since":"2026-03-01T12:00:00Z","snapshot":{"plan":{"plan_id":"%s"}}}'
        % plan_id.encode()
        for plan_id in ids(n)
    }


async def test_a_scan_hands_the_loop_back_between_slices_and_stops_at_its_budget() -> None:
    table = terminal_table(5 * SCAN_SLICE + 3)
    index, ran = ExpiryIndex(2), []
    index.start(table.items())
    ticks = iter(range(100))

    async def other_agent() -> None:
        for _ in range(3):
            ran.append(len(index))  # what the index held when the loop came back to us
            await asyncio.sleep(0)

    beside = asyncio.create_task(other_agent())
    # a clock that moves one second a read: the budget of 2.5 s allows three slices
    assert not await index.scan(2.5, clock=lambda: float(next(ticks)))
    await beside
    assert len(index) == 3 * SCAN_SLICE
    assert ran[:2] == [SCAN_SLICE, 2 * SCAN_SLICE]  # the other task ran between slices
    assert index.scanning
    assert await index.scan(60.0)  # the next tick finishes it
    assert len(index) == len(table)
    assert not index.scanning
    late = T0 + TTL + EXPIRY_BUCKET
    assert sorted(p for part in range(2) for p in index.due(part, late, TTL)) == sorted(table)


async def test_a_rebalance_during_a_scan_stops_it_and_reads_no_further() -> None:
    table, read = terminal_table(3 * SCAN_SLICE), []

    def items() -> Iterator[tuple[str, bytes]]:
        for key, value in table.items():
            read.append(key)
            yield key, value

    index = ExpiryIndex(1)
    index.start(items())

    async def revoke() -> None:
        index.invalidate()  # what the sweeper's on_partitions_revoked does

    revoking = asyncio.create_task(revoke())
    assert not await index.scan(60.0)
    await revoking
    assert len(read) == SCAN_SLICE  # one slice, then the scan saw the rebalance and stopped
    assert not index.scanning
    assert not index.built
    assert len(index) == 0


async def test_plans_noted_while_a_scan_runs_are_kept_and_due_meanwhile() -> None:
    table = terminal_table(2 * SCAN_SLICE)
    index = ExpiryIndex(1)
    index.start(table.items())
    live = ids(2 * SCAN_SLICE + 1)[-1]
    assert not await index.scan(0.0)  # one slice
    index.note(live, T0)  # stored by a record while the scan is not finished
    late = T0 + TTL + EXPIRY_BUCKET
    popped = list(index.due(0, late, TTL))
    assert len(popped) == SCAN_SLICE + 1
    assert live in popped
    assert await index.scan(60.0)
    assert len(index) == SCAN_SLICE  # the rest of the table


def test_terminal_entry_parses_once_and_reads_both_fields() -> None:
    raw = b'{"terminal_since":"2026-03-01T12:00:00Z","snapshot":{"plan":{"plan_id":"plan-9"}}}'
    assert terminal_entry(raw) == (T0, "plan-9")
    assert terminal_entry(b'{"snapshot":{"plan":{"plan_id":"plan-9"}}}') is None
    assert terminal_entry({"terminal_since": None}) is None


async def test_a_scan_whose_store_read_fails_starts_again_and_is_never_built_half() -> None:
    table = terminal_table(3 * SCAN_SLICE)

    def failing() -> Iterator[tuple[str, bytes]]:
        for number, item in enumerate(table.items()):
            if number == SCAN_SLICE + 5:
                raise OSError("the store could not be read")
            yield item

    index = ExpiryIndex(1)
    index.start(failing())
    with pytest.raises(OSError, match="could not be read"):
        await index.scan(60.0)
    assert not index.built
    assert not index.scanning  # the next tick starts a new scan
    assert len(index) == 0
    index.start(table.items())
    assert await index.scan(60.0)
    assert len(index) == len(table)
