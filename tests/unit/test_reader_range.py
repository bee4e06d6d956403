"""streams/io/reader.py read_range on a fake consumer: the seek, the bound, the client-side filter
(what keeps the range on a broker whose offsets_for_times answers 0), the idle timeout."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from aiokafka import TopicPartition

from learnstream.streams.io import reader
from learnstream.streams.io.reader import RangeProgress, read_range

T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
MS = int(T0.timestamp() * 1000)


@dataclass
class Rec:
    offset: int
    timestamp: int
    value: bytes = b""


@dataclass
class FakeConsumer:
    """A consumer over in-memory partitions; ``lookup`` answers offsets_for_times."""

    logs: dict[int, list[Rec]]
    lookup: str = "kafka"  # "kafka": first offset at/after ts; "zero": Tansu; "none": nothing
    stalls: bool = False  # hand nothing out (idle)
    pos: dict[TopicPartition, int] = field(default_factory=dict)
    seeks: list[tuple[str, int, int | None]] = field(default_factory=list)
    stopped: bool = False

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(self.logs)

    def assign(self, tps: list[TopicPartition]) -> None:
        self.pos = dict.fromkeys(tps, 0)

    async def seek_to_beginning(self, *tps: TopicPartition) -> None:
        for tp in tps:
            self.seeks.append(("beginning", tp.partition, None))
            self.pos[tp] = 0

    async def seek_to_end(self, *tps: TopicPartition) -> None:
        for tp in tps:
            self.seeks.append(("end", tp.partition, None))
            self.pos[tp] = len(self.logs[tp.partition])

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.seeks.append(("offset", tp.partition, offset))
        self.pos[tp] = offset

    async def offsets_for_times(self, query: dict[TopicPartition, int]) -> dict[Any, Any]:
        found: dict[Any, Any] = {}
        for tp, ts in query.items():
            hits = [r.offset for r in self.logs[tp.partition] if r.timestamp >= ts]
            if self.lookup == "zero":
                found[tp] = type("O", (), {"offset": 0})()
            elif self.lookup == "kafka" and hits:
                found[tp] = type("O", (), {"offset": hits[0]})()
            else:
                found[tp] = None
        return found

    async def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: len(self.logs[tp.partition]) for tp in tps}

    async def position(self, tp: TopicPartition) -> int:
        return self.pos[tp]

    async def getmany(self, *tps: TopicPartition, timeout_ms: int) -> dict[Any, list[Rec]]:
        if self.stalls:
            await asyncio.sleep(0.01)
            return {}
        out = {}
        for tp in tps:
            batch = self.logs[tp.partition][self.pos[tp] : self.pos[tp] + 2]
            self.pos[tp] += len(batch)
            out[tp] = batch
        return out

    async def stop(self) -> None:
        self.stopped = True


def log(*seconds: int) -> list[Rec]:
    return [Rec(n, MS + s * 1000, f"v{s}".encode()) for n, s in enumerate(seconds)]


@pytest.fixture
def fake(monkeypatch) -> Any:
    def install(consumer: FakeConsumer) -> FakeConsumer:
        async def make(bootstrap: str, isolation_level: str, **options: int) -> FakeConsumer:
            assert isolation_level == "read_committed"
            return consumer

        monkeypatch.setattr(reader, "_consumer", make)
        return consumer

    return install


async def collect(**kwargs: Any) -> list[bytes]:
    return [r.value async for r in read_range("b", "topic", **kwargs)]


@pytest.mark.parametrize("lookup", ["kafka", "zero"])
async def test_the_range_is_kept_whatever_the_lookup_answers(fake, lookup) -> None:
    consumer = fake(FakeConsumer({0: log(-5, 0, 3, 9, 10, 12), 1: log(1, -1, 20)}, lookup))
    progress = RangeProgress()
    got = await collect(
        since=T0, until=datetime.fromtimestamp(MS / 1000 + 10, UTC), progress=progress
    )
    assert sorted(got) == sorted([b"v0", b"v3", b"v9", b"v1"])
    first = {p: o for kind, p, o in consumer.seeks if kind == "offset"}
    assert first == ({0: 1, 1: 0} if lookup == "kafka" else {0: 0, 1: 0})
    assert (progress.total, progress.left, progress.idle) == (
        (8 if lookup == "kafka" else 9),
        0,
        False,
    )
    assert consumer.stopped


async def test_a_partition_with_nothing_after_since_starts_at_its_end(fake) -> None:
    consumer = fake(FakeConsumer({0: log(-9, -8), 1: log(2)}, "none"))
    assert await collect(since=T0) == []
    assert ("end", 0, None) in consumer.seeks


async def test_no_since_reads_from_the_beginning_to_the_end_at_start(fake) -> None:
    consumer = fake(FakeConsumer({0: log(-9, 0, 7)}))
    assert await collect() == [b"v-9", b"v0", b"v7"]
    consumer.logs[0].append(Rec(3, MS))  # written after the read ended: not waited for
    assert consumer.seeks == [("beginning", 0, None)]


async def test_the_idle_timeout_ends_a_stalled_read_and_says_so(fake) -> None:
    fake(FakeConsumer({0: log(0, 1)}, stalls=True))
    progress = RangeProgress()
    assert await collect(progress=progress, idle_timeout=0.005) == []
    assert (progress.total, progress.left, progress.idle) == (2, 2, True)
