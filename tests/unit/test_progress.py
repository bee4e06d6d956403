"""Progress counts what was processed, in offset order, and gates commits
(streams/offsets/progress.py; how Faust is made to use it: tests/unit/test_eos.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from faust.types import TP

from learnstream.streams.offsets.progress import REWIND_AGAIN_AFTER, Progress

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


async def test_offsets_that_are_not_in_the_log_are_accepted_after_two_rereads() -> None:
    """Compaction or transaction markers: every re-read starts above the hole again."""
    log = Log(Progress(gated=False), committed=None)
    await log.deliver(0, 1, 5, 6)
    assert log.seeks == [2]
    await log.deliver(5, 6)  # the re-read: offsets went down, and it starts above 2 again
    assert log.seeks == [2, 2]  # the first record after a seek may be dropped: once more
    assert log.processed == [0, 1]
    await log.deliver(5, 6, 7)  # the same start again: 2..4 do not exist
    assert log.processed == [0, 1, 5, 6, 7]
    assert log.seeks == [2, 2]


async def test_a_reread_that_skipped_its_first_record_is_not_taken_for_a_gap() -> None:
    """A rebalance run on Apache Kafka lost a plan this way: the re-read after the rewind
    started one above the hole, and the record there was declared not in the log."""
    log = Log(Progress(gated=False), committed=555)
    await log.deliver(556, 557)  # 555 dropped by the consumer
    await log.deliver(556, 557)  # the re-read drops 555 as well
    await log.deliver(555, 556, 557)  # the second re-read has it
    assert log.seeks == [555, 555]
    assert log.processed == [555, 556, 557]


async def test_where_a_partition_starts_is_asked_not_taken_from_faust() -> None:
    """A restarted worker got records before Faust had noted its committed offsets: the
    first one to come, above a hole, passed as the start of the partition."""
    asked: list[list[object]] = []

    async def starts_of(tps: list[object]) -> dict[object, int]:
        asked.append(tps)
        return dict.fromkeys(tps, 86)

    log = Log(Progress(gated=False), committed=None)
    log.progress.starts_of = starts_of
    await log.deliver(87, 88)  # 86 dropped by the consumer
    assert log.seeks == [86]
    assert log.processed == []
    await log.deliver(86, 87, 88)
    assert log.processed == [86, 87, 88]
    assert asked == [[TP0]]  # asked once: then the records processed say where it is


async def test_a_failed_lookup_falls_back_to_fausts_committed_offset(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def starts_of(tps: list[object]) -> dict[object, int]:
        raise ConnectionError("broker away")

    log = Log(Progress(gated=False), committed=10)
    log.progress.starts_of = starts_of
    with caplog.at_level("WARNING", logger="learnstream"):
        await log.deliver(11)
    assert log.seeks == [10]
    assert "plans[0]: could not ask where its records start" in caplog.text


async def test_an_assignment_asks_where_all_its_partitions_start_at_once() -> None:
    """The first record of each partition waited for a lookup of its own, one after another
    (latency at the start of traffic, benchmarks/RESULTS.md 25 Nov)."""
    tp1, late = TP("plans", 1), TP("plans", 2)
    asked: list[list[object]] = []
    answer = asyncio.Event()

    async def starts_of(tps: list[object]) -> dict[object, int]:
        asked.append(tps)
        await answer.wait()
        return {tp: 40 + int(getattr(tp, "partition", 0)) for tp in tps if tp != tp1}

    log = Log(Progress(gated=False), committed=None)
    log.progress.starts_of = starts_of
    log.progress.assign([TP0, tp1])
    first = asyncio.ensure_future(log.progress.admit(TP0, 40))  # waits for that lookup
    await asyncio.sleep(0)
    assert asked == [[TP0, tp1]]
    assert not first.done()
    answer.set()
    assert await first
    assert await log.progress.admit(tp1, 9)  # left out of the answer: asked on its own...
    assert asked == [[TP0, tp1], [tp1]]  # ...and not known there either: taken from here
    assert not await log.progress.admit(late, 43)  # not assigned then: asked now, 42 missing
    assert asked[-1] == [late]
    assert log.seeks == [42]


async def test_a_lookup_of_an_earlier_assignment_counts_for_nothing() -> None:
    answers: list[asyncio.Future[dict[object, int]]] = []

    async def starts_of(tps: list[object]) -> dict[object, int]:
        answers.append(asyncio.get_running_loop().create_future())
        return await answers[-1]

    log = Log(Progress(gated=False), committed=None)
    log.progress.starts_of = starts_of
    log.progress.assign([TP0])
    await asyncio.sleep(0)
    log.progress.assign([TP0])  # a rebalance while the first lookup was out
    await asyncio.sleep(0)
    assert answers[0].cancelled()  # the first one was dropped with its assignment
    answers[1].set_result({TP0: 555})
    await log.deliver(555)
    assert log.processed == [555]
    assert len(answers) == 2


async def test_an_assignment_starts_every_partition_over() -> None:
    """A rebalance run lost a plan to a position left from before a handover: the worker got
    the partition back after another had read far past it."""
    log = Log(Progress(gated=False), committed=None)
    await log.deliver(250, 251, 252)
    log.progress.forget([TP0])  # revoked; another worker reads 253..554 and commits 555
    in_flight = log.progress.record(TP0, 253)  # a record finished after the revocation
    assert await in_flight.__aenter__()
    log.progress.assign()  # the partition comes back
    await in_flight.__aexit__(None, None, None)
    assert log.progress.next_offset(TP0) is None  # not 254: the record was not ours to count
    log.progress.committed = lambda tp: 555
    await log.deliver(555, 556)
    assert log.processed == [250, 251, 252, 555, 556]
    assert log.seeks == []


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


async def test_held_commits_take_what_the_last_flush_of_the_partition_released() -> None:
    progress = Progress(gated=False, held=True)
    approved, elsewhere = TP("plan_approved", 0), TP("plans", 1)
    for tp in (TP0, approved, elsewhere):
        async with progress.record(tp, 0):
            pass
    assert progress.commit_offset(TP0) is None  # processed, counts not flushed
    progress.release(0)
    assert (progress.commit_offset(TP0), progress.commit_offset(approved)) == (1, 1)
    assert progress.commit_offset(elsewhere) is None
    async with progress.record(TP0, 1):
        pass
    assert progress.commit_offset(TP0) == 1  # record 1 is not flushed yet
    progress.release_all()
    assert [progress.commit_offset(tp) for tp in (TP0, approved, elsewhere)] == [2, 1, 1]
    progress.forget([TP0])
    assert progress.commit_offset(TP0) is None
    assert Progress(gated=False).commit_offset(TP0) is None
    unheld = Progress(gated=False)
    async with unheld.record(TP0, 4):
        pass
    assert unheld.commit_offset(TP0) == 5  # without windows: what was processed


@pytest.mark.parametrize("gated", [True, False])
async def test_a_commit_flushes_before_it_picks_offsets(gated: bool) -> None:
    progress = Progress(gated=gated)
    log: list[str] = []
    release = asyncio.Event()

    def flush() -> None:
        log.append("flush")
        progress.release_all()

    progress.hold(flush)

    async def agent() -> None:
        async with progress.record(TP0, 1):
            log.append("start 1")
            await release.wait()
            log.append("done 1")

    async def commit() -> None:
        async with progress.quiet():
            log.append(f"commit {progress.commit_offset(TP0)}")

    first = asyncio.create_task(agent())
    await asyncio.sleep(0)
    committing = asyncio.create_task(commit())
    await asyncio.sleep(0.01)
    release.set()
    await asyncio.gather(first, committing)
    if gated:  # after the record in progress, which it waited for
        assert log == ["start 1", "done 1", "flush", "commit 2"]
    else:  # at once: the record in progress is committed by a later commit
        assert log == ["start 1", "flush", "commit None", "done 1"]


async def test_only_records_really_skipped_are_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    """Transaction markers leave a gap after every commit (read_committed): that rewind is
    routine; records the consumer really skipped are worth a warning."""
    log = Log(Progress(gated=False), committed=None)
    with caplog.at_level("INFO", logger="learnstream"):
        await log.deliver(0, 1, 4, 4, 4)  # 2..3 are markers: both re-reads jump them too
    assert [r.levelname for r in caplog.records] == ["INFO", "INFO", "INFO"]
    assert "offsets 2..3 are not in the log" in caplog.records[-1].getMessage()
    caplog.clear()
    with caplog.at_level("INFO", logger="learnstream"):
        await log.deliver(7, 5, 6, 7)  # 5..6 were held back by the consumer
    assert [r.levelname for r in caplog.records] == ["INFO", "WARNING"]
    assert (
        caplog.records[-1]
        .getMessage()
        .endswith("records 5..6 had been skipped by the consumer: read them again")
    )


async def test_a_failed_assignment_lookup_leaves_each_partition_to_its_own(
    caplog: pytest.LogCaptureFixture,
) -> None:
    asked: list[list[object]] = []

    async def starts_of(tps: list[object]) -> dict[object, int]:
        asked.append(tps)
        if len(tps) > 1:
            raise ConnectionError("coordinator moving")
        return dict.fromkeys(tps, 30)

    log = Log(Progress(gated=False), committed=None)
    log.progress.starts_of = starts_of
    with caplog.at_level("INFO", logger="learnstream"):
        log.progress.assign([TP0, TP("plans", 1)])
        await log.deliver(31)  # 30 never came: known from its own lookup
    assert asked == [[TP0, TP("plans", 1)], [TP0]]
    assert log.seeks == [30]
    assert "could not ask where the 2 assigned partitions start" in caplog.text
    assert "could not ask where its records start" not in caplog.text


class Broker:
    """What the broker holds of one partition: the offsets a reader sees."""

    def __init__(self, offsets: list[int] | None = None, fails: bool = False) -> None:
        self.offsets, self.fails, self.asked = offsets or [], fails, []

    async def first_visible(self, tp: Any, offset: int) -> int | None:
        self.asked.append(offset)
        if self.fails:
            raise TimeoutError("no answer")
        return next((o for o in self.offsets if o >= offset), None)


async def test_a_hole_the_broker_holds_records_in_is_read_until_they_come(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Under load the consumer dropped the first record after each seek, twice running:
    the record was taken for a transaction marker and lost with its samples."""
    log = Log(Progress(gated=False), committed=555)
    broker = Broker(offsets=[555, 556, 557])
    log.progress.first_visible = broker.first_visible
    with caplog.at_level("INFO", logger="learnstream"):
        await log.deliver(556, 557)  # 555 dropped
        await log.deliver(556, 557)  # and by the re-read
        await log.deliver(556, 557)  # and by the next: two re-reads started at 556
    assert broker.asked == [555]
    assert log.processed == []
    assert log.seeks == [555, 555, 555]
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warned == [
        "plans[0]: 2 re-reads started at 556, yet the broker holds record 555: reading from "
        "555 again"
    ]
    await log.deliver(555, 556, 557)  # it comes at last
    assert log.processed == [555, 556, 557]
    assert log.progress.next_offset(TP0) == 558


async def test_a_hole_the_broker_holds_nothing_in_is_accepted() -> None:
    log = Log(Progress(gated=False), committed=None)
    broker = Broker(offsets=[0, 1, 5, 6, 7])  # 2..4: markers
    log.progress.first_visible = broker.first_visible
    await log.deliver(0, 1, 5, 6, 5, 6, 5, 6, 7)
    assert broker.asked == [2]
    assert log.processed == [0, 1, 5, 6, 7]


async def test_a_broker_that_cannot_tell_leaves_the_hole_accepted_as_before() -> None:
    log = Log(Progress(gated=False), committed=None)
    broker = Broker(fails=True)
    log.progress.first_visible = broker.first_visible
    await log.deliver(0, 1, 5, 6, 5, 6, 5, 6, 7)
    assert broker.asked == [2]
    assert log.processed == [0, 1, 5, 6, 7]


def _committed_late(first: int, then: int) -> tuple[Log, Broker]:
    """A gated log whose group commit is ``first`` at the assignment's lookup and ``then``
    when asked again (the dead worker's last transaction committed in between)."""
    answers = iter([{TP0: first}, {TP0: then}])

    async def starts_of(tps: list[object]) -> dict[object, int]:
        return next(answers)

    log = Log(Progress(gated=True), committed=None)
    broker = Broker(offsets=list(range(100)))
    log.progress.first_visible, log.progress.starts_of = broker.first_visible, starts_of
    log.progress.assign([TP0])
    return log, broker


async def test_a_hole_the_group_committed_since_the_assignment_is_not_read_again() -> None:
    """The lookup at the assignment answered before the dead worker's last transaction
    committed its offsets; reading them again would send their samples twice."""
    log, broker = _committed_late(50, 90)
    await log.deliver(90, 91, 90, 91, 90, 91, 92)  # Faust's own seek: the newer commit
    assert broker.asked == []
    assert log.processed == [90, 91, 92]
    assert log.seeks == [50, 50]


async def test_records_below_a_commit_that_moved_past_them_are_not_processed_again() -> None:
    """The re-reads start at 80, but the dead worker's last transaction has committed up to
    90 since the assignment's lookup: 80..89 were processed by it and are skipped, 90 on
    are processed."""
    log, broker = _committed_late(50, 90)
    await log.deliver(80, 81, 80, 81, 80, 81, *range(82, 93))
    assert broker.asked == []
    assert log.processed == [90, 91, 92]
    assert log.progress.next_offset(TP0) == 93


async def test_a_pinned_record_holds_commits_below_it_until_unpinned() -> None:
    """A record whose work waits in memory: no commit passes it, whatever came after."""
    progress = Progress(gated=False)
    for offset in range(5, 10):
        async with progress.record(TP0, offset):
            pass
    assert progress.commit_offset(TP0) == 10
    progress.pin(TP0, 6)
    progress.pin(TP0, 8)
    progress.pin(TP0, 6)  # two entries of one record (two key spaces)
    assert progress.commit_offset(TP0) == 6
    assert progress.commit_offset(TP("plans", 1)) is None  # another partition: untouched
    progress.unpin(TP0, 6)
    assert progress.commit_offset(TP0) == 6  # one hold of 6 is left
    progress.unpin(TP0, 6)
    assert (progress.commit_offset(TP0), progress.pinned(TP0)) == (8, 8)
    progress.unpin(TP0, 8)
    progress.unpin(TP0, 8)  # one too many (taken before an assignment): no error
    assert (progress.commit_offset(TP0), progress.pinned(TP0)) == (10, None)


async def test_pins_hold_a_held_commit_too_and_go_with_the_assignment() -> None:
    progress = Progress(gated=False)
    progress.hold(lambda: None)
    for offset in range(3):
        async with progress.record(TP0, offset):
            pass
    progress.release_all()
    progress.pin(TP0, 1)
    assert progress.commit_offset(TP0) == 1
    progress.forget([TP0])  # revoked: Faust committed it before (at the pin)
    assert progress.pinned(TP0) is None
    progress.pin(TP0, 2)
    progress.assign([])
    assert progress.pinned(TP0) is None
