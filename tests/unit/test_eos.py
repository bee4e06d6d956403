"""Offsets are committed only after Faust's send buffer is drained (streams/eos.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from streams.eos import _deduped, buffer_idle, dedupe_acks, drain_before_commit, wait_until_idle


class Publisher:
    """Faust's buffer task in miniature: pop a record, take a while to publish it."""

    def __init__(self, log: list[str], delay: float) -> None:
        self.pending: asyncio.Queue[str] = asyncio.Queue()
        self.log, self.delay = log, delay
        self.should_stop = False

    async def run(self) -> None:
        while True:
            record = await self.pending.get()
            await asyncio.sleep(self.delay)  # popped, not yet handed to the producer
            self.log.append(f"sent {record}")


def fake_app(log: list[str], publisher: Publisher, *, transactions: bool) -> Any:
    async def commit(offsets: Mapping[Any, int], start_new_transaction: bool = True) -> bool:
        log.append(f"commit {dict(offsets)} new={start_new_transaction}")
        return True

    async def flush() -> None:
        log.append("flush")

    return SimpleNamespace(
        in_transaction=transactions,
        consumer=SimpleNamespace(
            transactions=SimpleNamespace(commit=commit), _commit=commit, _new_offset=lambda tp: None
        ),
        producer=SimpleNamespace(buffer=publisher, flush=flush),
    )


@pytest.mark.parametrize("transactions", [True, False])
async def test_commit_waits_until_every_buffered_record_is_sent(transactions: bool) -> None:
    log: list[str] = []
    publisher = Publisher(log, delay=0.01)
    task = asyncio.create_task(publisher.run())
    app = fake_app(log, publisher, transactions=transactions)
    drain_before_commit(app)
    drain_before_commit(app)  # installed once
    for record in ("a", "b", "c"):
        publisher.pending.put_nowait(record)
    await asyncio.sleep(0)  # the task pops "a": the queue alone would look almost drained
    if transactions:
        assert await app.consumer.transactions.commit({"tp": 3}, start_new_transaction=False)
        assert log == ["sent a", "sent b", "sent c", "commit {'tp': 3} new=False"]
    else:
        assert await app.consumer._commit({"tp": 3})
        assert log == ["sent a", "sent b", "sent c", "flush", "commit {'tp': 3} new=True"]
    task.cancel()


async def test_idle_means_empty_and_the_publisher_waiting() -> None:
    log: list[str] = []
    publisher = Publisher(log, delay=0.05)
    assert not buffer_idle(publisher.pending)  # empty, but nobody is publishing: not idle
    assert not await wait_until_idle(publisher, limit_s=0.02)
    task = asyncio.create_task(publisher.run())
    await asyncio.sleep(0)
    assert buffer_idle(publisher.pending)
    publisher.pending.put_nowait("x")
    await asyncio.sleep(0)
    assert not buffer_idle(publisher.pending)  # popped and being published
    assert await wait_until_idle(publisher, limit_s=1)
    assert log == ["sent x"]
    task.cancel()


async def test_a_stopping_buffer_is_not_waited_for() -> None:
    publisher = Publisher([], delay=0)
    publisher.pending.put_nowait("left over")  # nobody will publish it: the worker stops
    publisher.should_stop = True
    started = asyncio.get_running_loop().time()
    assert not await wait_until_idle(publisher, limit_s=5)
    assert asyncio.get_running_loop().time() - started < 1


async def test_workers_install_it_on_assignment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents import wire
    from streams.app import create_app
    from streams.settings import Settings

    installed: list[object] = []
    monkeypatch.setattr("agents.drain_before_commit", installed.append)
    settings = Settings(data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    wire(app, settings)
    assert installed == []
    await app.on_partitions_assigned.send(set())
    assert installed == [app]


def test_dedupe_acks_drops_repeats_and_committed_offsets() -> None:
    acked = [126, 124, 125, 125, 127, 126]
    dedupe_acks(acked, committed=125)
    assert acked == [125, 126, 127]
    untouched = [3, 4, 5]
    dedupe_acks(untouched, committed=None)
    assert untouched == [3, 4, 5]


def test_repeated_acks_no_longer_stall_fausts_offset_choice() -> None:
    """Faust's own ``_new_offset`` on what a 20,000-event kill run logged."""
    from faust.transport.consumer import Consumer
    from faust.types import TP
    from intervaltree import IntervalTree

    tp = TP("plan_approved", 1)

    def consumer() -> Any:
        acked = [124, 125, 125, 126, 126, 127]
        return SimpleNamespace(
            _acked={tp: acked},
            _acked_index={tp: set(acked)},
            _gap={tp: IntervalTree()},
            _committed_offset={tp: 125},
        )

    plain = consumer()
    assert Consumer._new_offset(plain, tp) == 126  # Faust alone: one offset past the repeat
    fixed = consumer()
    new_offset = _deduped(fixed, lambda t: Consumer._new_offset(fixed, t))
    assert new_offset(tp) == 128  # everything acked: 125, 126, 127
