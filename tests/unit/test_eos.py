"""The exactly_once commit waits for Faust's send buffer (streams/eos.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from streams.eos import buffer_idle, drain_before_commit, wait_until_idle


class Publisher:
    """Faust's buffer task in miniature: pop a record, take a while to publish it."""

    def __init__(self, log: list[str], delay: float) -> None:
        self.pending: asyncio.Queue[str] = asyncio.Queue()
        self.log, self.delay = log, delay

    async def run(self) -> None:
        while True:
            record = await self.pending.get()
            await asyncio.sleep(self.delay)  # popped, not yet handed to the producer
            self.log.append(f"sent {record}")


class Manager:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def commit(self, offsets: Mapping[Any, int], start_new_transaction: bool = True) -> bool:
        self.log.append(f"commit {dict(offsets)} new={start_new_transaction}")
        return True


async def test_commit_waits_until_every_buffered_record_is_sent() -> None:
    log: list[str] = []
    publisher, manager = Publisher(log, delay=0.01), Manager(log)
    task = asyncio.create_task(publisher.run())
    app = SimpleNamespace(
        consumer=SimpleNamespace(transactions=manager),
        producer=SimpleNamespace(buffer=SimpleNamespace(pending=publisher.pending)),
    )
    drain_before_commit(app)  # type: ignore[arg-type]
    drain_before_commit(app)  # type: ignore[arg-type]  # installed once
    for record in ("a", "b", "c"):
        publisher.pending.put_nowait(record)
    await asyncio.sleep(0)  # the task pops "a": the queue alone would look almost drained
    assert await manager.commit({"tp": 3}, start_new_transaction=False)
    assert log == ["sent a", "sent b", "sent c", "commit {'tp': 3} new=False"]
    task.cancel()


async def test_idle_means_empty_and_the_publisher_waiting() -> None:
    log: list[str] = []
    publisher = Publisher(log, delay=0.05)
    assert not buffer_idle(publisher.pending)  # empty, but nobody is publishing: not idle
    assert not await wait_until_idle(publisher.pending, limit_s=0.02)
    task = asyncio.create_task(publisher.run())
    await asyncio.sleep(0)
    assert buffer_idle(publisher.pending)
    publisher.pending.put_nowait("x")
    await asyncio.sleep(0)
    assert not buffer_idle(publisher.pending)  # popped and being published
    assert await wait_until_idle(publisher.pending, limit_s=1)
    assert log == ["sent x"]
    task.cancel()


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
async def test_only_exactly_once_workers_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guarantee: str
) -> None:
    from agents import wire
    from streams.app import create_app
    from streams.settings import Settings

    installed: list[object] = []
    monkeypatch.setattr("agents.drain_before_commit", installed.append)
    settings = Settings(data_dir=str(tmp_path), processing_guarantee=guarantee)
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    wire(app, settings)
    await app.on_partitions_assigned.send(set())
    assert installed == ([app] if guarantee == "exactly_once" else [])
