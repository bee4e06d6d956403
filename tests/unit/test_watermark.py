"""The corrections watermark: offsets settle a waiting event, event times never do, and only
an end asked for after the event was fetched counts."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from learnstream.agents.clock import wall_clock as now
from learnstream.streams.join.watermark import Watermark
from learnstream.streams.offsets.fetched import FetchedEnds
from learnstream.streams.offsets.progress import Progress


class Broker:
    """The corrections topic's ends, and the ListOffsets rounds asked of it."""

    def __init__(self, end: int) -> None:
        self.end, self.rounds = end, 0
        self.fail = False
        self.asked: list[list[int]] = []

    async def ask(self, partitions: list[int]) -> dict[int, int]:
        self.rounds += 1
        self.asked.append(partitions)
        await asyncio.sleep(0)
        if self.fail:
            raise ConnectionError("broker unreachable")
        return dict.fromkeys(partitions, self.end)


def watermark(broker: Broker) -> Watermark:
    return Watermark("deltas", Progress(gated=False), broker.ask, now)


async def test_a_later_correction_read_first_does_not_settle_an_earlier_event() -> None:
    # offset 0: another plan's correction, read; offset 1 (unread): this plan's
    broker = Broker(end=2)
    mark, fetched = watermark(broker), now()
    mark.advance(0, 0)
    await mark.fresh(0, fetched)
    mark.wait(0, "plan-a", fetched)
    assert not mark.settled(0, fetched)
    assert mark.due(0) == []
    mark.advance(0, 1)
    assert mark.settled(0, fetched)
    assert mark.due(0) == ["plan-a"]


async def test_an_end_asked_before_the_fetch_settles_nothing() -> None:
    """The suspected cause of a wrong label after kill -9: an end learned before the event
    was fetched misses a correction written after that end and before the event."""
    broker = Broker(end=1)
    mark = watermark(broker)
    await mark.fresh(0, now() - timedelta(seconds=1))  # an end of 1, asked for earlier
    mark.advance(0, 0)
    broker.end = 2  # a correction came, then the event, fetched now
    fetched = now()
    assert not mark.settled(0, fetched), "the old end must not settle a newer event"
    await mark.fresh(0, fetched)
    assert not mark.settled(0, fetched)
    mark.advance(0, 1)
    assert mark.settled(0, fetched)


async def test_one_round_serves_every_event_fetched_before_it() -> None:
    broker = Broker(end=0)
    mark, fetched = watermark(broker), now()
    await asyncio.gather(*(mark.fresh(0, fetched) for _ in range(50)), mark.fresh(1, fetched))
    assert broker.rounds == 1
    assert mark.settled(0, fetched)
    assert mark.settled(1, fetched)
    assert broker.rounds == 1


async def test_an_unanswered_settle_asks_in_the_background() -> None:
    """A replay cannot wait (it runs between a table read and its writes): it asks, says
    no, and the next look (a correction read, or the grace sweep) finds the answer."""
    broker = Broker(end=0)
    mark = watermark(broker)
    fetched = now()
    mark.wait(3, "plan-a", fetched)
    assert not mark.settled(3, fetched)
    assert mark.due(3) == []
    for _ in range(3):
        await asyncio.sleep(0)
    assert broker.rounds == 1
    assert mark.due(3) == ["plan-a"]


async def test_a_failed_round_settles_nothing_and_is_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broker = Broker(end=0)
    broker.fail = True
    mark, fetched = watermark(broker), now()
    with caplog.at_level("WARNING", logger="learnstream"):
        await mark.fresh(0, fetched)
    assert not mark.settled(0, fetched)
    assert mark.failures == 1
    warned = "corrections watermark: end offsets unavailable (ConnectionError, 1 failures)"
    assert warned in caplog.text
    broker.fail = False
    await mark.fresh(0, fetched)
    assert mark.settled(0, fetched)


async def test_a_revoked_partition_is_forgotten() -> None:
    broker = Broker(end=0)
    mark, fetched = watermark(broker), now()
    await mark.fresh(2, fetched)
    mark.wait(2, "plan-a", fetched)
    mark.forget([2])
    assert mark.waiting == {}
    assert not mark.settled(2, fetched)


async def test_a_round_in_flight_without_the_partition_is_followed_by_one_with_it() -> None:
    broker = Broker(end=0)
    mark, fetched = watermark(broker), now()
    first = asyncio.ensure_future(mark.fresh(0, fetched))
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # its round has asked, for partition 0 only
    await mark.fresh(1, fetched)
    await first
    assert broker.asked == [[0], [0, 1]]
    assert mark.settled(1, fetched)


async def _lands_later(broker: Broker, end: int, after_s: float) -> None:
    await asyncio.sleep(after_s)
    broker.end = end


async def test_without_lateness_a_correction_landing_after_the_fetch_does_not_count() -> None:
    broker = Broker(end=1)  # offset 0: an older correction; this plan's lands 10 ms later
    mark, fetched = watermark(broker), now()
    landing = asyncio.ensure_future(_lands_later(broker, 2, 0.01))
    await mark.fresh(0, fetched)
    mark.advance(0, 0)
    assert mark.settled(0, fetched), "what the broker held at the fetch is read"
    await landing


async def test_a_correction_landing_within_the_lateness_counts() -> None:
    """``join.corrections_lateness``: the end that counts is asked for once the lateness
    after the fetch is over, so a correction landing meanwhile must be read first."""
    broker = Broker(end=1)
    mark = Watermark(
        "deltas", Progress(gated=False), broker.ask, now, lateness=timedelta(seconds=0.05)
    )
    fetched = now()
    landing = asyncio.ensure_future(_lands_later(broker, 2, 0.01))
    assert not mark.settled(0, fetched)
    for _ in range(3):
        await asyncio.sleep(0)
    assert broker.rounds == 0, "an end asked within the lateness would not count"
    await mark.fresh(0, fetched)
    assert now() >= fetched + timedelta(seconds=0.05)
    await landing
    mark.advance(0, 0)
    assert not mark.settled(0, fetched), "the correction that landed late is not read yet"
    mark.advance(0, 1)
    assert mark.settled(0, fetched)


class Unanswered(Broker):
    """A broker whose ListOffsets rounds do not answer until ``gate`` is set."""

    def __init__(self, end: int) -> None:
        super().__init__(end)
        self.gate = asyncio.Event()

    async def ask(self, partitions: list[int]) -> dict[int, int]:
        await self.gate.wait()
        return await super().ask(partitions)


def fetching(broker: Broker) -> tuple[Watermark, FetchedEnds[tuple[str, int]]]:
    fetched: FetchedEnds[tuple[str, int]] = FetchedEnds(["deltas"])
    return Watermark("deltas", Progress(gated=False), broker.ask, now, fetched=fetched), fetched


async def test_a_fetch_sent_after_the_event_answers_before_the_round() -> None:
    broker = Unanswered(end=5)
    mark, fetched = fetching(broker)
    since = now()
    waiting = asyncio.ensure_future(mark.fresh(0, since))
    await asyncio.sleep(0)
    assert not waiting.done()  # its round is asked and unanswered
    fetched.note(fetched.clock(), {("deltas", 0): 2})  # the consumer's next fetch
    await asyncio.wait_for(waiting, 1)
    assert broker.rounds == 0
    mark.advance(0, 0)
    assert not mark.settled(0, since)  # the fetch's end is 2: offset 1 is not read
    mark.advance(0, 1)
    assert mark.settled(0, since)
    broker.gate.set()  # the round answers later (end 5); the fetch's lower end still counts
    await asyncio.sleep(0)
    assert mark.settled(0, since)


async def test_a_fetch_sent_before_the_event_settles_nothing() -> None:
    broker = Unanswered(end=1)
    mark, fetched = fetching(broker)
    fetched.note(fetched.clock(), {("deltas", 0): 1})  # before the event was fetched
    mark.advance(0, 0)
    since = now()
    assert not mark.settled(0, since), "an end fetched earlier must not settle a newer event"
    waiting = asyncio.ensure_future(mark.fresh(0, since))
    await asyncio.sleep(0)
    assert not waiting.done()
    broker.gate.set()
    await asyncio.wait_for(waiting, 1)
    assert broker.rounds == 1
    assert mark.settled(0, since)


async def test_due_reads_the_oldest_first_whatever_order_plans_began_waiting_in() -> None:
    """Plans waiting from three moments, told in no order (an index rebuilt after a
    rebalance), one of them told again from an earlier moment: an end asked between the
    moments settles exactly the plans older than it, oldest first."""
    broker = Broker(end=1)
    mark, start = watermark(broker), now()
    old, middle = start - timedelta(seconds=3), start - timedelta(seconds=2)
    late = start + timedelta(minutes=1)  # no end asked yet can count for it
    mark.wait(0, "plan-late", late)
    mark.wait(0, "plan-old", old)
    mark.wait(0, "plan-middle", late)
    mark.wait(0, "plan-middle", middle)  # an entry of it parked earlier: its moment moves
    mark.wait(0, "plan-old", late)  # a later entry does not move it
    mark.advance(0, 0)
    await mark.fresh(0, start)  # an end asked between the moments
    assert mark.due(0) == ["plan-old", "plan-middle"]
    mark.done(0, "plan-old")
    mark.done(0, "plan-middle")
    assert mark.due(0) == []
    assert mark.waiting == {0: {"plan-late": late}}


async def test_due_asks_for_an_end_after_the_newest_waiting_plan() -> None:
    """With nothing settled, one look asks a round that started after every waiting plan,
    so the next look settles them all."""
    broker = Broker(end=0)
    mark, start = watermark(broker), now()
    for n in range(3):
        mark.wait(0, f"plan-{n}", start - timedelta(seconds=3 - n))
    assert mark.due(0) == []
    await asyncio.sleep(0.01)
    assert broker.rounds == 1
    assert mark.due(0) == ["plan-0", "plan-1", "plan-2"]
