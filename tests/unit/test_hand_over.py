"""The fetch loop's hand-over of a record to its stream, without tasks when nothing waits
(seam 16, agents/seams/faust_compat.py::hand_over_inline), on the worker's real consumer."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app
from tests.support.apps import close_consumer_loop


@pytest.fixture
async def consumer(tmp_path: Path) -> AsyncIterator[Any]:
    settings = Settings(data_dir=str(tmp_path))
    runtime = wire(create_app(settings, "kafka://127.0.0.1:9", embedded=False), settings)
    try:
        yield runtime.app.consumer
    finally:
        close_consumer_loop(runtime.app)


@contextmanager
def _counting_tasks() -> Iterator[list[Any]]:
    """Count the tasks the running loop makes inside the block."""
    made: list[Any] = []
    loop = asyncio.get_running_loop()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        made.append(task)
        return task

    loop.set_task_factory(factory)  # type: ignore[arg-type]
    try:
        yield made
    finally:
        loop.set_task_factory(None)


async def _taken(value: int) -> int:
    return value  # a stream whose buffer has room takes the record without waiting


async def test_a_record_its_stream_takes_at_once_is_handed_over_without_a_task(
    consumer: Any,
) -> None:
    with _counting_tasks() as made, warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would be one
        result = await consumer.wait_first(_taken(7), consumer.suspend_flow.wait())
        gc.collect()
    assert result.results == [7]
    assert not result.stopped
    assert made == []


async def test_mode_makes_tasks_for_the_same_call(consumer: Any) -> None:
    """What the seam spares the fetch loop per record."""
    with _counting_tasks() as made:
        result = await type(consumer).wait_first(consumer, _taken(7), consumer.suspend_flow.wait())
    assert result.results[0] == 7
    assert len(made) == 4  # the callback, the suspend flag, stopped, crashed


async def test_a_record_whose_stream_is_full_waits_until_there_is_room(consumer: Any) -> None:
    room: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    steps: list[str] = []

    async def full() -> int:
        steps.append("tried")
        await room
        steps.append("taken")
        return 3

    handing = asyncio.ensure_future(consumer.wait_first(full(), consumer.suspend_flow.wait()))
    for _ in range(5):
        await asyncio.sleep(0)
    assert steps == ["tried"]
    assert not handing.done()
    room.set_result(None)
    result = await asyncio.wait_for(handing, 5)
    assert steps == ["tried", "taken"]
    assert result.results == [3]


async def test_a_suspended_flow_cancels_a_hand_over_still_waiting(consumer: Any) -> None:
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    seen: list[str] = []

    async def stuck() -> None:
        try:
            await never
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    handing = asyncio.ensure_future(consumer.wait_first(stuck(), consumer.suspend_flow.wait()))
    await asyncio.sleep(0)
    consumer.suspend_flow.set()  # a rebalance: Faust stops handing records over
    try:
        result = await asyncio.wait_for(handing, 5)
    finally:
        consumer.suspend_flow.clear()
    assert seen == ["cancelled"]
    assert result.results == [True]  # the flag won (Event.wait), as with mode's wait_first


async def test_a_hand_over_that_catches_a_cancellation_goes_on(consumer: Any) -> None:
    loop = asyncio.get_running_loop()
    first: asyncio.Future[None] = loop.create_future()
    second: asyncio.Future[None] = loop.create_future()

    async def stubborn() -> str:
        try:
            await first
        except asyncio.CancelledError:
            await second  # waits again after the cancellation reached it
            return "finished"
        return "not cancelled"

    outer = asyncio.ensure_future(_carried(consumer, stubborn))
    await asyncio.sleep(0)
    outer.cancel()
    await asyncio.sleep(0)
    second.set_result(None)
    assert await asyncio.wait_for(outer, 5) == "finished"


async def _carried(consumer: Any, make: Callable[[], Any]) -> Any:
    """Run the part of the seam that goes on with a hand-over after its first wait."""
    from learnstream.agents.seams.faust_compat import _carry_on

    coro = make()
    return await _carry_on(coro, coro.send(None))


async def test_an_error_in_a_hand_over_reaches_the_fetch_loop(consumer: Any) -> None:
    async def broken_at_once() -> None:
        raise ValueError("bad at once")

    later: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def broken_later() -> None:
        await later
        raise ValueError("bad later")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="bad at once"):
            await consumer.wait_first(broken_at_once(), consumer.suspend_flow.wait())
        gc.collect()
    handing = asyncio.ensure_future(
        consumer.wait_first(broken_later(), consumer.suspend_flow.wait())
    )
    await asyncio.sleep(0)
    later.set_result(None)
    with pytest.raises(ValueError, match="bad later"):
        await asyncio.wait_for(handing, 5)


async def test_other_calls_are_modes(consumer: Any) -> None:
    with _counting_tasks() as made:
        result = await consumer.wait_first(_taken(5))  # not the fetch loop's call
        timed = await consumer.wait_first(_taken(6), consumer.suspend_flow.wait(), timeout=1)
    assert result.results == [5]
    assert timed.results[0] == 6
    assert len(made) == 3 + 4  # mode's tasks, both times
