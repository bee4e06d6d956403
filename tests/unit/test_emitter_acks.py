"""Waiting for the broker's acks: a send that never hears back is reported, not silent."""

from __future__ import annotations

import asyncio
import logging

import pytest

from learnstream.agents.emitter import await_acks


async def test_acks_that_take_long_are_reported_then_awaited() -> None:
    loop = asyncio.get_running_loop()
    slow, quick = loop.create_future(), loop.create_future()
    quick.set_result(None)
    warnings: list[str] = []

    class AckAfterTwoWarnings(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())
            if len(warnings) == 2:
                slow.set_result(None)

    handler = AckAfterTwoWarnings(logging.WARNING)
    logging.getLogger("learnstream").addHandler(handler)
    try:
        await await_acks([quick, None, slow], warn_after=0.05)
    finally:
        logging.getLogger("learnstream").removeHandler(handler)
    assert slow.done()
    assert warnings == [
        "1 sample sends have waited 0.05s for the broker's acknowledgement",
        "1 sample sends have waited 0.1s for the broker's acknowledgement",
    ]


async def test_a_failed_ack_raises_as_awaiting_it_would() -> None:
    loop = asyncio.get_running_loop()
    failed = loop.create_future()
    failed.set_exception(ConnectionError("broker gone"))
    with pytest.raises(ConnectionError, match="broker gone"):
        await await_acks([failed])


async def test_acks_in_time_say_nothing(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.get_running_loop()
    acks = [loop.create_future() for _ in range(3)]
    for ack in acks:
        ack.set_result(None)
    with caplog.at_level("WARNING", logger="learnstream"):
        await await_acks(list(acks), warn_after=0.1)
    assert caplog.records == []
