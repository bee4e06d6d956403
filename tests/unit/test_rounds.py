"""Shared end-offset rounds: an answer counts only after the moment its round started."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from learnstream.streams.offsets.rounds import Rounds


class Broker:
    """End offsets on request; ``gate`` holds the answers while cleared."""

    def __init__(self) -> None:
        self.ends = {0: 3, 1: 5}
        self.asked: list[list[int]] = []
        self.fail = False
        self.gate = asyncio.Event()
        self.gate.set()

    async def ask(self, partitions: list[int]) -> dict[int, int]:
        self.asked.append(partitions)
        await self.gate.wait()
        if self.fail:
            raise ConnectionError("broker away")
        return {p: self.ends[p] for p in partitions}


def rounds(broker: Broker, clock: itertools.count[int] | None = None) -> Rounds[int, int]:
    clock = clock or itertools.count(100)  # moves on every read: "after" is never ambiguous
    made: Rounds[int, int] = Rounds(broker.ask, clock.__next__, "test")
    made.wanted |= {0, 1}
    return made


async def test_an_answer_counts_only_for_moments_before_its_round_started() -> None:
    broker = Broker()
    made = rounds(broker)
    assert made.end(0, 50) is None
    assert made.answer(None) is None
    assert await made.after(50)  # starts at 100
    assert (made.end(0, 99), made.end(1, 99)) == (3, 5)
    assert made.end(0, 100) is None  # not after its own start
    assert made.answer(99) == {0: 3, 1: 5}
    assert made.answer(100) is None
    assert made.answer(None) == {0: 3, 1: 5}


async def test_one_round_flies_and_later_callers_share_the_one_queued_behind_it() -> None:
    broker = Broker()
    broker.gate.clear()
    clock = itertools.count(100)
    made = rounds(broker, clock)
    first = [made.after(10) for _ in range(5)]  # starts at 100
    later = [made.after(next(clock)) for _ in range(5)]  # 101..105, after it left: one queued
    assert len({id(t) for t in first}) == 1
    assert len({id(t) for t in later}) == 1
    await asyncio.sleep(0)
    assert len(broker.asked) == 1  # one request in flight at a time
    broker.ends[0] = 4
    broker.gate.set()
    assert all(await asyncio.gather(*first, *later))
    assert len(broker.asked) == 2
    assert made.end(0, 105) == 4  # the queued round started after the later callers


async def test_a_failed_round_is_counted_and_logged_and_answers_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broker = Broker()
    broker.fail = True
    made = rounds(broker)
    with caplog.at_level("WARNING", logger="learnstream"):
        assert not await made.after(50)
    assert made.failures == 1
    assert "test: end offsets unavailable (ConnectionError, 1 failures)" in caplog.text
    assert made.end(0, 50) is None
    broker.fail = False
    assert await made.after(50)  # nothing in flight any more: a new round
    assert made.end(0, 50) == 3


async def test_forgotten_partitions_are_neither_known_nor_asked_for() -> None:
    broker = Broker()
    made = rounds(broker)
    await made.after(50)
    made.forget([1])
    assert made.end(1, 50) is None
    await made.after(500)
    assert broker.asked[-1] == [0]
