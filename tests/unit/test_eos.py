"""Offsets commit what was processed, between records, after the send buffer drained
(streams/eos.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from faust.types import TP

from streams.eos import (
    REWIND_AGAIN_AFTER,
    DeliverAll,
    Progress,
    buffer_idle,
    guard_commits,
    wait_until_idle,
)


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

    async def force_commit(*_args: Any, **_kwargs: Any) -> bool:
        return True

    return SimpleNamespace(
        in_transaction=transactions,
        consumer=SimpleNamespace(
            transactions=SimpleNamespace(commit=commit),
            _commit=commit,
            force_commit=force_commit,
            _new_offset=lambda tp: None,
            _filter_tps_with_pending_acks=lambda topics=None: iter(()),
            _committed_offset={},
            seek=None,
        ),
        producer=SimpleNamespace(buffer=publisher, flush=flush),
    )


@pytest.mark.parametrize("transactions", [True, False])
async def test_commit_waits_until_every_buffered_record_is_sent(transactions: bool) -> None:
    log: list[str] = []
    publisher = Publisher(log, delay=0.01)
    task = asyncio.create_task(publisher.run())
    app = fake_app(log, publisher, transactions=transactions)
    guard_commits(app, Progress(gated=transactions))
    guard_commits(app, Progress(gated=transactions))  # installed once
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


async def test_workers_install_it_on_assignment_and_forget_revoked_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents import wire
    from streams.app import create_app
    from streams.settings import Settings

    installed: list[tuple[object, Progress]] = []
    monkeypatch.setattr("agents.guard_commits", lambda *args: installed.append(args))
    settings = Settings(data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings)
    assert installed == []
    await app.on_partitions_assigned.send(set())
    assert installed == [(app, runtime.progress)]
    assert not runtime.progress.gated  # at_least_once by default
    kept, revoked = TP("plans", 0), TP("plans", 1)
    for tp in (kept, revoked):
        async with runtime.progress.record(tp, 5):
            pass
    await app.on_partitions_revoked.send({revoked})
    assert runtime.progress.next_offset(kept) == 6
    assert runtime.progress.next_offset(revoked) is None


TP0 = TP("plans", 0)


async def test_progress_counts_a_record_once_and_only_when_it_succeeded() -> None:
    progress = Progress(gated=False)
    assert progress.next_offset(TP0) is None
    async with progress.record(TP0, 7) as fresh:  # nothing committed: the log starts here
        assert fresh
    assert progress.next_offset(TP0) == 8
    async with progress.record(TP0, 7) as fresh:  # handed over again after a seek
        assert not fresh

    async def fail() -> None:
        async with progress.record(TP0, 8):
            raise RuntimeError("the worker dies with it")

    with pytest.raises(RuntimeError):
        await fail()
    assert progress.next_offset(TP0) == 8
    assert await progress.admit(TP0, 8)  # not processed: it comes again
    progress.forget([TP0])
    assert progress.next_offset(TP0) is None
    assert await progress.admit(TP0, 7)


class Log:
    """One partition as Faust hands it over: records, and the seeks asked for."""

    def __init__(self, progress: Progress, committed: int | None) -> None:
        self.progress, self.seeks, self.processed = progress, [], []
        progress.committed = lambda tp: committed
        progress.seek = self.seek

    async def seek(self, tp: Any, offset: int) -> None:
        self.seeks.append(offset)

    async def deliver(self, *offsets: int) -> None:
        for offset in offsets:
            async with self.progress.record(TP0, offset) as fresh:
                if fresh:
                    self.processed.append(offset)


async def test_a_record_faust_skipped_is_read_again_not_committed_past() -> None:
    """What restarts showed: the record right after the committed offset never came."""
    log = Log(Progress(gated=True), committed=188)
    await log.deliver(188, 190, 191, 192)  # 189 dropped by Faust
    assert log.seeks == [189]
    assert log.processed == [188]
    assert log.progress.next_offset(TP0) == 189  # a commit now cannot skip 189
    await log.deliver(193, 189, 190, 191, 192, 193)  # one more stale, then the re-read
    assert log.processed == [188, 189, 190, 191, 192, 193]
    assert log.progress.next_offset(TP0) == 194


async def test_the_first_record_must_be_the_committed_one() -> None:
    log = Log(Progress(gated=False), committed=50)
    await log.deliver(12, 52)  # below the committed offset: done before; 50, 51 missing
    assert log.seeks == [50]
    await log.deliver(50, 51, 52)
    assert log.processed == [50, 51, 52]


async def test_offsets_that_are_not_in_the_log_are_accepted_after_one_rewind() -> None:
    """Compaction or transaction markers: the re-read starts above the hole again."""
    log = Log(Progress(gated=False), committed=None)
    await log.deliver(0, 1, 5, 6)
    assert log.seeks == [2]
    await log.deliver(5, 6, 7)  # the re-read: offsets went down, 2..4 do not exist
    assert log.processed == [0, 1, 5, 6, 7]
    assert log.seeks == [2]


async def test_a_rewind_that_does_not_take_is_asked_again() -> None:
    log = Log(Progress(gated=False), committed=10)
    await log.deliver(12)
    await log.deliver(*range(13, 13 + REWIND_AGAIN_AFTER))  # stale records keep coming
    assert log.seeks == [10, 10]
    assert log.processed == []
    await log.deliver(10, 11, 12)
    assert log.processed == [10, 11, 12]


async def test_a_gated_commit_waits_for_the_record_in_progress_and_holds_the_next() -> None:
    progress = Progress(gated=True)
    log: list[str] = []
    release = asyncio.Event()

    async def agent(offset: int, wait: asyncio.Event | None) -> None:
        async with progress.record(TP0, offset):
            log.append(f"start {offset}")
            if wait is not None:
                await wait.wait()
            log.append(f"done {offset}")

    async def commit() -> None:
        async with progress.quiet():
            log.append(f"commit {progress.next_offset(TP0)}")
            await asyncio.sleep(0.01)  # the transaction commits; nothing may start now
            log.append("committed")

    first = asyncio.create_task(agent(1, release))
    await asyncio.sleep(0)
    committing = asyncio.create_task(commit())
    await asyncio.sleep(0)
    second = asyncio.create_task(agent(2, None))
    await asyncio.sleep(0.01)
    assert log == ["start 1"]  # the commit waits for record 1, record 2 waits for the commit
    release.set()
    await asyncio.gather(first, committing, second)
    assert log == ["start 1", "done 1", "commit 2", "committed", "start 2", "done 2"]


async def test_an_ungated_commit_does_not_wait() -> None:
    progress = Progress(gated=False)
    # it would deadlock if it waited for the record around it
    async with progress.record(TP0, 1), progress.quiet():
        pass
    assert progress.next_offset(TP0) == 2


def test_faust_commits_what_was_processed_not_its_acks() -> None:
    """Faust's own offset choice, fed what kill runs logged, after ``guard_commits``."""
    from faust.transport.consumer import Consumer
    from intervaltree import IntervalTree

    repeated, holed = TP("plan_approved", 1), TP("plans", 1)
    acks = {repeated: [124, 125, 125, 126, 126, 127], holed: [188, 190, 191, 192]}
    committed = {repeated: 125, holed: 188}

    def consumer() -> Any:
        return SimpleNamespace(
            _acked={tp: list(a) for tp, a in acks.items()},
            _acked_index={tp: set(a) for tp, a in acks.items()},
            _gap={tp: IntervalTree() for tp in acks},
            _committed_offset=dict(committed),
        )

    plain = consumer()
    plain._new_offset = lambda tp: Consumer._new_offset(plain, tp)
    plain._should_commit = lambda tp, offset: Consumer._should_commit(plain, tp, offset)
    plain._filter_tps_with_pending_acks = lambda topics=None: iter(plain._acked)
    # Faust alone: one past the repeat; past 188 only, while 189..192 were processed
    assert Consumer._filter_committable_offsets(plain, list(acks)) == {repeated: 126, holed: 189}

    async def processed(progress: Progress) -> None:
        for tp, last in ((repeated, 127), (holed, 192)):
            for offset in range(committed[tp], last + 1):
                async with progress.record(tp, offset):
                    pass

    fixed, progress = consumer(), Progress(gated=False)
    asyncio.run(processed(progress))
    fixed.force_commit = fixed.transactions = fixed._commit = fixed.seek = None
    app = SimpleNamespace(
        consumer=fixed, in_transaction=False, producer=SimpleNamespace(buffer=None, flush=None)
    )
    guard_commits(app, progress)  # type: ignore[arg-type]
    fixed._should_commit = lambda tp, offset: Consumer._should_commit(fixed, tp, offset)
    tps = list(fixed._filter_tps_with_pending_acks())
    assert Consumer._filter_committable_offsets(fixed, tps) == {repeated: 128, holed: 193}
    assert fixed._acked == {repeated: [], holed: []}  # Faust's lists do not grow


def test_building_leaves_fausts_transaction_switch_alone(tmp_path: Path) -> None:
    """``app.in_transaction`` is a cached property, False until the worker runs: reading it
    while building the app (directly, or by creating the consumer) would switch exactly_once
    off for good (kill runs then had no transaction at all)."""
    from agents import wire
    from agents.worker import build_app
    from streams.app import create_app
    from streams.settings import Settings

    settings = Settings(data_dir=str(tmp_path), processing_guarantee="exactly_once")
    assert wire(
        create_app(settings, "kafka://127.0.0.1:9", embedded=False), settings
    ).progress.gated
    app = build_app(settings, "kafka://127.0.0.1:9", embedded=False)
    assert app._consumer is None
    app.in_worker = True  # what faust.Worker does when it starts the app
    assert app.in_transaction
    assert app.consumer.in_transaction
    app.consumer._thread.thread_loop.close()


def test_workers_let_faust_hand_over_every_fetched_record(tmp_path: Path) -> None:
    """Faust's fetch loop drops a record unless ``read_offset is None or offset >= it``."""
    from agents.worker import build_app
    from streams.settings import Settings

    app = build_app(Settings(data_dir=str(tmp_path)), "kafka://127.0.0.1:9", embedded=False)
    read_offset = app.consumer._read_offset  # created as the worker would
    assert isinstance(read_offset, DeliverAll)
    read_offset[TP0] = 500  # what the loop records after handing over offset 500
    assert read_offset[TP0] is None  # so offset 189, fetched again after a seek, goes through
    assert read_offset.get(TP0) is None
    app.consumer._thread.thread_loop.close()
