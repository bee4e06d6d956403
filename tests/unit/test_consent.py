"""The consent view (streams/consent/view.py) and its fence (consent/fence.py), no broker."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Hashable, Mapping

import orjson
import pytest

from learnstream.streams.consent.fence import Fence
from learnstream.streams.consent.view import ConsentView, parse_consent
from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.offsets.fetched import FetchedEnds
from learnstream.streams.samples.ids import canonical_id
from tests.support.offsets import caught_up

P = str(uuid.UUID(int=7, version=4))
Q = str(uuid.UUID(int=8, version=4))


def record(project_id: str, enabled: bool) -> bytes:
    return orjson.dumps({"project_id": project_id, "enabled": enabled})


# --- the view -------------------------------------------------------------------------------


def test_the_view_keeps_the_last_record_of_each_project() -> None:
    view = ConsentView()
    view.apply(P.encode(), record(P, False))
    view.apply(Q.encode(), record(Q, False))
    view.apply(Q.encode(), record(Q, True))
    assert (view.get(P), view.get(Q), len(view)) == (False, True, 2)


def test_a_tombstone_puts_the_project_back_to_the_default() -> None:
    view = ConsentView()
    view.apply(P.encode(), record(P, False))
    view.apply(P.encode(), None)
    assert view.get(P) is None
    assert len(view) == 0
    view.apply(Q.encode(), None)  # a tombstone of a project never seen is no error
    assert (len(view), view.ignored) == (0, 0)


def test_keys_are_canonical_whatever_the_spelling() -> None:
    view = ConsentView()
    view.apply(P.upper().encode(), record(P.upper(), False))
    assert view.get(P) is False  # samples carry the lower-case form
    assert view.get(P.upper()) is False
    view.apply(P.encode(), None)  # the tombstone of the other spelling deletes it
    assert view.get(P) is None


def test_a_runtime_id_that_is_no_uuid_is_keyed_by_its_stand_in() -> None:
    view = ConsentView()
    view.apply(b"PROJ-1", record("PROJ-1", False))
    assert parse_consent(b"PROJ-1", record("PROJ-1", False)) == (canonical_id("PROJ-1"), False)
    assert view.get(canonical_id("PROJ-1")) is False  # what samples carry in meta.project_id
    assert view.get("PROJ-1") is False
    assert view.get("proj-1") is None  # runtime ids that are no UUIDs are case-sensitive
    view.apply(b"PROJ-1", None)
    assert view.get(canonical_id("PROJ-1")) is None


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        (None, None, "undecodable"),  # a tombstone needs a key
        (b"", None, "undecodable"),
        (b"k", b"{not json", "invalid_json"),
        (b"k", orjson.dumps({"project_id": P}), "schema_violation"),
        (b"k", orjson.dumps({"project_id": P, "enabled": False, "x": 1}), "schema_violation"),
        (b"k", orjson.dumps({"project_id": "has space", "enabled": False}), "schema_violation"),
        (b"k", orjson.dumps({"project_id": P, "enabled": None}), "schema_violation"),
    ],
)
def test_invalid_records_are_skipped_by_the_view(
    key: bytes | None, value: bytes | None, reason: str
) -> None:
    with pytest.raises(InvalidEvent) as caught:
        parse_consent(key, value)
    assert caught.value.reason == reason
    view = ConsentView()
    view.apply(P.encode(), record(P, False))
    view.apply(key, value)
    assert (view.get(P), len(view), view.ignored) == (False, 1, 1)


def test_lookups_without_a_project_are_unknown() -> None:
    view = ConsentView()
    view.apply(P.encode(), record(P, False))
    assert view.get(None) is None
    assert view.get("") is None


# --- the fence ------------------------------------------------------------------------------


class Broker:
    """End offsets on request, counted; ``gate`` holds the answers while cleared."""

    def __init__(self, ends: Mapping[Hashable, int], failures: int = 0) -> None:
        self.ends = dict(ends)
        self.asked = 0
        self.failures = failures
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self) -> Mapping[Hashable, int]:
        self.asked += 1
        await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise ConnectionError("broker away")
        return dict(self.ends)


def ticking() -> itertools.count[int]:
    """Return a clock that moves on every read: 'after' is never ambiguous."""
    return itertools.count(100)


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_waiter_is_held_until_the_positions_reach_the_answer() -> None:
    broker = Broker({0: 3, 1: 0})
    clock = ticking()
    fence = Fence(broker, clock=clock.__next__)
    waiter = asyncio.create_task(fence.wait())
    await settle()
    assert not waiter.done()
    assert (broker.asked, fence.lag, fence.waiting) == (1, 3, 1)
    fence.advance({0: 2})
    await settle()
    assert not waiter.done()
    assert fence.lag == 1
    fence.advance({0: 3})
    await asyncio.wait_for(waiter, 1)
    assert (fence.lag, fence.waiting) == (0, 0)


async def test_a_waiter_already_covered_asks_nothing() -> None:
    broker = Broker({0: 1})
    fence = Fence(broker, clock=ticking().__next__)
    fence.advance({0: 1})
    await fence.wait()
    assert broker.asked == 1
    await fence.wait(since=50)  # arrived before the answered round started
    assert broker.asked == 1
    await fence.wait()  # arrived now: needs a round of its own
    assert broker.asked == 2


async def test_concurrent_waiters_share_one_request_in_flight() -> None:
    broker = Broker({0: 0})
    broker.gate.clear()
    fence = Fence(broker, clock=ticking().__next__)
    first = [asyncio.create_task(fence.wait(since=1)) for _ in range(5)]
    await settle()
    assert broker.asked == 1
    later = [asyncio.create_task(fence.wait()) for _ in range(5)]  # after the request left
    await settle()
    assert broker.asked == 1  # one request in flight at a time
    broker.gate.set()
    await asyncio.wait_for(asyncio.gather(*first, *later), 1)
    assert broker.asked == 2  # the later ones needed one round more, shared


async def test_an_unanswered_broker_holds_the_waiters_and_is_asked_again() -> None:
    broker = Broker({0: 2}, failures=3)
    fence = Fence(broker, retry=0.0, clock=ticking().__next__)
    fence.advance({0: 2})
    await asyncio.wait_for(fence.wait(), 1)
    assert (broker.asked, fence.failures) == (4, 3)


async def test_a_fence_whose_asker_always_fails_never_lets_a_waiter_through() -> None:
    async def unreachable() -> dict[int, int]:
        raise ConnectionError("no broker")

    fence = Fence(unreachable, retry=0.0, clock=ticking().__next__)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(fence.wait(), 0.05)
    assert fence.failures > 0
    assert fence.waiting == 0  # the cancelled waiter is gone


async def test_a_cancelled_waiter_leaves_the_others_waiting() -> None:
    broker = Broker({0: 1})
    fence = Fence(broker, clock=ticking().__next__)
    one, two = asyncio.create_task(fence.wait()), asyncio.create_task(fence.wait())
    await settle()
    one.cancel()
    await settle()
    assert not two.done()
    fence.advance({0: 1})
    await asyncio.wait_for(two, 1)
    assert one.cancelled()


async def test_positions_past_the_answer_pass() -> None:
    """The embedded broker answers (base offset of the last batch + 1) after a batch of
    several records; reading the batch puts the position past it."""
    fence = Fence(Broker({0: 1}), clock=ticking().__next__)
    fence.advance({0: 5})
    await asyncio.wait_for(fence.wait(), 1)
    assert fence.lag == 0


async def test_a_wait_since_the_future_counts_as_now() -> None:
    broker = Broker({})
    fence = Fence(broker, clock=ticking().__next__)
    await asyncio.wait_for(fence.wait(since=10**9), 1)  # another clock's reading
    assert broker.asked == 1


async def test_the_oldest_wait_is_measured_on_the_clock() -> None:
    now = [0.0]
    fence = Fence(Broker({0: 1}), clock=lambda: now[0])
    assert fence.oldest_wait() == 0.0
    waiter = asyncio.create_task(fence.wait(since=-1))
    await settle()
    now[0] = 12.5
    assert fence.oldest_wait() == 12.5
    fence.advance({0: 1})
    await asyncio.wait_for(waiter, 1)


async def test_caught_up_answers_no_partition() -> None:
    fence = Fence(caught_up, clock=ticking().__next__)
    await asyncio.wait_for(fence.wait(), 1)
    assert await caught_up() == {}


async def test_fetches_sent_after_a_waiter_answer_it_before_a_slow_round() -> None:
    clock = ticking()
    fetched: FetchedEnds[Hashable] = FetchedEnds(["consent"], clock=clock.__next__)
    broker = Broker({"p0": 1, "p1": 0})
    fence = Fence(broker, clock=clock.__next__, fetched=fetched)
    fence.advance({"p0": 1, "p1": 0})
    await fence.wait()  # the first round names the partitions
    broker.gate.clear()  # rounds from now on go unanswered
    waiter = asyncio.create_task(fence.wait())
    await settle()
    fetched.note(clock.__next__(), {"p0": 1})  # one partition's end is not an answer
    await settle()
    assert not waiter.done()
    fetched.note(clock.__next__(), {"p1": 2})
    await settle()
    assert not waiter.done()  # answered, and the reader is behind on p1
    fence.advance({"p1": 2})
    await asyncio.wait_for(waiter, 1)
    assert broker.asked == 2  # the second round is still unanswered


async def test_a_fetch_sent_before_a_waiter_does_not_answer_it() -> None:
    clock = ticking()
    fetched: FetchedEnds[Hashable] = FetchedEnds(["consent"], clock=clock.__next__)
    broker = Broker({"p0": 0})
    fence = Fence(broker, clock=clock.__next__, fetched=fetched)
    await fence.wait()
    broker.gate.clear()
    sent = clock.__next__()
    waiter = asyncio.create_task(fence.wait())
    await settle()
    fetched.note(sent, {"p0": 0})
    await settle()
    assert not waiter.done()
    broker.gate.set()
    await asyncio.wait_for(waiter, 1)
