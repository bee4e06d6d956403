"""The stall watch: fetched records that never reached the agents are read again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import faust
import pytest
from faust.types import TP

from learnstream.agents.seams.stall_watch import Stalls
from learnstream.streams.observe.stall import Idle, IdleWatch, Stall, StallWatch
from learnstream.streams.offsets.progress import Progress
from tests.support.apps import close_consumer_loop

P0, P1 = TP("plans", 0), TP("plans", 1)


def offsets_of(found: dict[TP, Stall]) -> dict[TP, int]:
    """Return {partition: offset to read again from} of the stalls that are not gaps."""
    return {tp: stall.offset for tp, stall in found.items() if not stall.gap}


def test_a_partition_fetched_past_its_hand_over_too_long_is_stalled() -> None:
    watch: StallWatch[TP] = StallWatch(after_s=10)
    assert watch.stalled(0.0, {P0: (5, 3)}) == {}  # 3 and 4 may still be on their way
    assert watch.stalled(9.9, {P0: (6, 3)}) == {}  # more fetched, still nothing handed over
    assert watch.stalled(10.0, {P0: (6, 3)}) == {P0: Stall(3, 6, gap=False)}
    assert watch.stalled(15.0, {P0: (4, 4)}) == {}  # the re-read handed 3 over...
    assert watch.stalled(16.0, {P0: (6, 4)}) == {}  # ...and stopped again
    assert watch.stalled(26.0, {P0: (6, 4)}) == {P0: Stall(4, 6, gap=False)}


def test_offsets_a_re_read_hands_nothing_over_from_are_a_gap() -> None:
    """Transaction markers: the position passes them, no record is handed over."""
    watch: StallWatch[TP] = StallWatch(after_s=10)
    watch.stalled(0.0, {P0: (8, 7)})
    assert watch.stalled(10.0, {P0: (8, 7)}) == {P0: Stall(7, 8, gap=False)}
    assert watch.stalled(15.0, {P0: (8, 7)}) == {}  # read again from 7: nothing came
    assert watch.stalled(20.0, {P0: (8, 7)}) == {P0: Stall(7, 8, gap=True)}
    assert watch.stalled(25.0, {P0: (8, 8)}) == {}  # the worker passed over the gap


def test_progress_or_a_caught_up_position_resets_the_wait() -> None:
    watch: StallWatch[TP] = StallWatch(after_s=10)
    watch.stalled(0.0, {P0: (5, 3), P1: (8, 2)})
    assert watch.stalled(8.0, {P0: (5, 4), P1: (8, 8)}) == {}  # P0 moved on, P1 caught up
    assert watch.stalled(12.0, {P0: (5, 4), P1: (9, 8)}) == {}  # P0's wait started at 8
    assert offsets_of(watch.stalled(18.0, {P0: (5, 4), P1: (9, 8)})) == {P0: 4}
    assert offsets_of(watch.stalled(22.0, {P0: (5, 4), P1: (9, 8)})) == {P1: 8}


def test_unknown_offsets_and_partitions_no_longer_ours_are_not_watched() -> None:
    watch: StallWatch[TP] = StallWatch(after_s=10)
    watch.stalled(0.0, {P0: (5, 3), P1: (None, 2)})
    assert watch.stalled(11.0, {P1: (7, None)}) == {}  # P0 revoked: its wait is gone
    assert watch.stalled(30.0, {P0: (5, 3), P1: (7, 2)}) == {}  # both start waiting now
    assert offsets_of(watch.stalled(40.0, {P0: (5, 3), P1: (7, 2)})) == {P0: 3, P1: 2}


def test_a_partition_behind_its_high_watermark_fetching_nothing_is_idle() -> None:
    """Records on the broker the consumer never fetched (seen on the embedded broker)."""
    watch: IdleWatch[TP] = IdleWatch(after_s=30)
    assert watch.idle(0.0, {P0: (5, 6), P1: (4, 4)}) == {}  # P1 read to its end
    assert watch.idle(29.0, {P0: (5, 6), P1: (4, 9)}) == {}  # P1 starts waiting now
    assert watch.idle(30.0, {P0: (5, 6), P1: (4, 9)}) == {P0: Idle(5, 6)}
    assert watch.idle(40.0, {P0: (5, 6), P1: (7, 9)}) == {}  # P1 moved: its wait restarts
    assert watch.idle(60.0, {P0: (5, 6), P1: (7, 9)}) == {P0: Idle(5, 6)}  # every 30 s
    assert watch.idle(70.0, {P0: (6, 6), P1: (7, 9)}) == {P1: Idle(7, 9)}
    assert watch.idle(80.0, {P1: (None, 9)}) == {}  # P0 revoked, P1's position unknown
    assert watch.idle(100.0, {P0: (6, None), P1: (7, 9)}) == {}  # both wait afresh


class Thread:
    """Stands in for Faust's consumer thread and the aiokafka consumer it owns."""

    def __init__(self, positions: dict[TP, int], starts: dict[TP, int]) -> None:
        self.positions, self.starts = positions, starts
        self.highwaters: dict[TP, int] = {}
        self.seeks: list[tuple[TP, int]] = []
        self.asked: list[list[TP]] = []

    def _ensure_consumer(self) -> Thread:
        return self

    async def call_thread(self, fun: Any, *args: Any) -> Any:
        return await fun(*args)

    def assignment(self) -> set[TP]:
        return set(self.positions)

    async def position(self, tp: TP) -> int:
        return self.positions[tp]

    async def beginning_offsets(self, tps: list[TP]) -> dict[TP, int]:
        self.asked.append(list(tps))
        return {tp: self.starts[tp] for tp in tps}

    def seek(self, tp: TP, offset: int) -> None:
        self.seeks.append((TP(tp.topic, tp.partition), offset))

    def highwater(self, tp: TP) -> int | None:
        return self.highwaters.get(tp)


@pytest.fixture
def app() -> Iterator[Any]:
    """A real Faust app with one agent on ``plans``; it never connects (nobody on port 9)."""
    app = faust.App("stall-test", broker="kafka://127.0.0.1:9", store="memory://")
    app.agent(app.topic("plans", value_serializer="raw"), name="plans")(_ignore)
    yield app
    close_consumer_loop(app)


async def _ignore(stream: Any) -> None:
    async for _ in stream:  # pragma: no cover - never started
        pass


async def test_the_worker_seeks_back_to_the_first_record_fetched_and_not_handed_over(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    changelog, p2 = TP("stall-test-plan_state-changelog", 0), TP("plans", 2)
    thread = Thread({P0: 7, P1: 4, p2: 9, changelog: 9}, {P1: 2})
    consumer = app.consumer
    monkeypatch.setattr(consumer, "_thread", thread)  # undone before the app is closed
    progress = Progress(gated=False)
    progress.committed = {P0: 5, p2: 3}.get  # P1 has no commit: its log start counts
    progress.handed[p2] = 9  # all handed over (a busy agent still has them): not stalled
    progress.seek = lambda tp, offset: consumer._thread.call_thread(_seek, thread, tp, offset)
    stalls = Stalls(app, progress)
    stalls.watch.after_s = 0.0
    await stalls.check()  # starts the wait
    await stalls.check()
    assert sorted(thread.seeks) == [(P0, 5), (P1, 2)]  # never the changelog
    assert thread.asked == [[P1], [P1]]  # only the partition without a start, each check
    assert progress.handed[P0] == 5  # handed over from there on again
    progress.handed[P0] = 6  # the re-read handed 5 over, then stopped again
    thread.seeks.clear()
    await stalls.check()
    await stalls.check()
    assert thread.seeks == [(P0, 6)]  # P1 handed nothing over from 2: a gap, passed over
    assert progress.handed[P1] == 4
    await stalls.check()
    await stalls.check()
    assert thread.seeks == [(P0, 6)]  # P0: read again from 6, nothing: a gap too
    assert progress.handed == {P0: 7, P1: 4, p2: 9}


async def _seek(thread: Thread, tp: TP, offset: int) -> None:
    thread.seek(tp, offset)


async def test_the_worker_fetches_an_idle_partition_afresh(
    app: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    thread = Thread({P0: 7, P1: 4}, {})
    thread.highwaters = {P0: 8, P1: 4}  # P0: record 7 is on the broker; P1 read to its end
    consumer = app.consumer
    monkeypatch.setattr(consumer, "_thread", thread)  # undone before the app is closed
    progress = Progress(gated=False)
    progress.committed = {P0: 7, P1: 4}.get
    progress.seek = lambda tp, offset: consumer._thread.call_thread(_seek, thread, tp, offset)
    stalls = Stalls(app, progress)
    stalls.idle.after_s = 0.0
    await stalls.check()  # starts the wait
    with caplog.at_level("WARNING", logger="learnstream"):
        await stalls.check()
    assert thread.seeks == [(P0, 7)]  # fetched afresh from its position; P1 left alone
    assert "plans[0]: the broker holds records 7..7, and none was fetched" in caplog.text


async def test_a_partition_read_again_is_not_also_fetched_from_its_position(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stalled and idle at once: the seek back to the first record not handed over wins."""
    thread = Thread({P0: 7}, {})
    thread.highwaters = {P0: 9}
    consumer = app.consumer
    monkeypatch.setattr(consumer, "_thread", thread)  # undone before the app is closed
    progress = Progress(gated=False)
    progress.committed = {P0: 5}.get
    progress.seek = lambda tp, offset: consumer._thread.call_thread(_seek, thread, tp, offset)
    stalls = Stalls(app, progress)
    stalls.watch.after_s = stalls.idle.after_s = 0.0
    await stalls.check()
    await stalls.check()
    assert thread.seeks == [(P0, 5)]


async def test_a_record_fetched_and_never_processed_is_read_again(
    app: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """What a CI run on Apache Kafka showed: the fetch position past a record, nothing
    waiting to be handed over, and the record never processed; neither watch saw it."""
    thread = Thread({P0: 8, P1: 6}, {})
    thread.highwaters = {P0: 8, P1: 6}  # both fetched to the end
    consumer = app.consumer
    monkeypatch.setattr(consumer, "_thread", thread)  # undone before the app is closed
    progress = Progress(gated=False)
    progress.committed = {P0: 7, P1: 5}.get  # P0: record 7 not processed; P1: 5 is a marker
    progress.handed.update({P0: 8, P1: 6})
    progress.seek = lambda tp, offset: consumer._thread.call_thread(_seek, thread, tp, offset)
    held = {P0: [7], P1: []}  # what the broker holds from the next offset to process on

    async def first_visible(tp: TP, offset: int) -> int | None:
        return next((o for o in held[tp] if o >= offset), None)

    progress.first_visible = first_visible
    stalls = Stalls(app, progress)
    stalls.unprocessed.after_s = 0.0
    await stalls.check()  # starts the wait
    with caplog.at_level("WARNING", logger="learnstream"):
        await stalls.check()
    assert thread.seeks == [(P0, 7)]  # P1's markers are no record: left alone
    assert "plans[0]: record 7 has waited 0s to be processed (next to process 7" in caplog.text
    assert progress.handed[P0] == 7
