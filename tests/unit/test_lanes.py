"""An agent's records in lanes: offset order within a partition, partitions side by side, each
record acked once handled, a bound on what is in flight, and a failure that stops the agent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

import pytest
from faust.types import TP

from learnstream.agents.seams.lanes import run_in_lanes

#: Stands for Faust's current event, which its stream sets before it yields a record.
CURRENT: ContextVar[Any] = ContextVar("current")


class Event:
    """A record of a partition, as the lanes read one."""

    def __init__(self, partition: int, offset: int) -> None:
        self.message = type("M", (), {"tp": TP("t", partition), "offset": offset})()
        self.acks = 0

    def ack(self) -> bool:
        self.acks += 1
        return True

    def __repr__(self) -> str:
        return f"{self.message.tp.partition}@{self.message.offset}"


class Stream:
    """A stream of given events; ``taken`` counts those read from it."""

    def __init__(self, events: list[Event]) -> None:
        self.items, self.taken, self.acks_enabled = events, 0, True

    def noack(self) -> Stream:
        self.acks_enabled = False
        return self

    async def events(self) -> AsyncIterator[Event]:
        for event in self.items:
            self.taken += 1
            CURRENT.set(event)
            yield event


async def test_a_partition_waits_for_its_record_before_while_another_goes_on() -> None:
    events = [Event(0, 0), Event(0, 1), Event(1, 0), Event(1, 1)]
    release, log = asyncio.Event(), []

    async def handle(event: Any) -> None:
        log.append(("start", repr(event)))
        if repr(event) == "0@0":
            await release.wait()  # a broker round that takes a while
        log.append(("end", repr(event)))
        if repr(event) == "1@1":
            release.set()

    stream = Stream(events)
    await run_in_lanes(stream, handle)  # type: ignore[arg-type]
    assert not stream.acks_enabled  # the stream acks nothing itself
    # Partition 1 ran both its records while 0@0 waited; 0@1 started only after 0@0 ended.
    assert log.index(("end", "1@1")) < log.index(("end", "0@0"))
    assert log.index(("end", "0@0")) < log.index(("start", "0@1"))
    assert log.index(("end", "1@0")) < log.index(("start", "1@1"))
    assert [e.acks for e in events] == [1, 1, 1, 1]


async def test_each_record_is_acked_once_its_handling_ends_not_when_the_next_is_taken() -> None:
    events = [Event(0, 0), Event(1, 0)]
    release = asyncio.Event()
    seen: dict[str, int] = {}

    async def handle(event: Any) -> None:
        if repr(event) == "0@0":
            await release.wait()
            seen["1@0 acks when 0@0 ends"] = events[1].acks
        seen[f"{event!r} acks while handled"] = event.acks
        if repr(event) == "1@0":
            release.set()

    await run_in_lanes(Stream(events), handle)  # type: ignore[arg-type]
    assert seen == {
        "1@0 acks while handled": 0,
        "0@0 acks while handled": 0,
        "1@0 acks when 0@0 ends": 1,
    }


async def test_each_handler_sees_its_own_record_as_the_current_one() -> None:
    events = [Event(p, o) for o in range(3) for p in range(3)]
    mismatched = []

    async def handle(event: Any) -> None:
        await asyncio.sleep(0)  # the stream has moved on meanwhile
        if CURRENT.get() is not event:
            mismatched.append(event)

    await run_in_lanes(Stream(events), handle)  # type: ignore[arg-type]
    assert mismatched == []


async def test_no_more_than_the_limit_are_taken_before_one_is_done() -> None:
    events = [Event(p, 0) for p in range(5)]
    release = asyncio.Event()
    stream = Stream(events)
    started = []

    async def handle(event: Any) -> None:
        started.append(repr(event))
        await release.wait()

    agent = asyncio.ensure_future(run_in_lanes(stream, handle, limit=2))  # type: ignore[arg-type]
    for _ in range(10):
        await asyncio.sleep(0)
    assert stream.taken == 3  # two in flight, the third taken and waiting for a slot
    assert started == ["0@0", "1@0"]
    release.set()
    await agent
    assert [e.acks for e in events] == [1] * 5


async def test_a_failure_stops_the_agent_and_nothing_after_it_is_handled() -> None:
    events = [Event(0, 0), Event(0, 1), Event(1, 0)]
    handled = []

    async def handle(event: Any) -> None:
        handled.append(repr(event))
        if repr(event) == "0@0":
            raise RuntimeError("the dead-letter topic is gone")
        await asyncio.sleep(0)

    with pytest.raises(RuntimeError, match="dead-letter topic is gone"):
        await run_in_lanes(Stream(events), handle)  # type: ignore[arg-type]
    assert "0@1" not in handled  # the record after the failure in its partition


async def test_a_failure_wakes_an_agent_that_waits_for_a_slot() -> None:
    events = [Event(0, 0), Event(1, 0), Event(2, 0)]
    release = asyncio.Event()

    async def handle(event: Any) -> None:
        if repr(event) == "0@0":
            await asyncio.sleep(0.01)
            raise ValueError("not dead-lettered")
        await release.wait()  # the other lane holds its slot: the agent waits for one

    with pytest.raises(ValueError, match="not dead-lettered"):
        await asyncio.wait_for(run_in_lanes(Stream(events), handle, limit=2), 5)  # type: ignore[arg-type]
