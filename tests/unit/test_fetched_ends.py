"""Ends the worker's own fetches carried (streams/offsets/fetched.py): an end counts for a
moment only if its fetch was sent after that moment, for every partition asked about."""

from __future__ import annotations

import asyncio
import threading

from learnstream.streams.offsets.fetched import FetchedEnds


def registry() -> FetchedEnds[str]:
    return FetchedEnds(["deltas"], clock=lambda: 0.0)


def test_an_end_counts_only_from_a_fetch_sent_after_the_moment() -> None:
    ends = registry()
    ends.note(5.0, {"p0": 3})
    assert ends.ends(["p0"], 4.0) == {"p0": 3}
    assert ends.ends(["p0"], 5.0) is None  # sent at the moment itself: not after it
    assert ends.ends(["p0"], 6.0) is None


def test_every_partition_asked_about_needs_an_end() -> None:
    ends = registry()
    ends.note(5.0, {"p0": 1})
    assert ends.ends(["p0", "p1"], 4.0) is None
    ends.note(6.0, {"p1": 2})
    assert ends.ends(["p0", "p1"], 4.0) == {"p0": 1, "p1": 2}
    assert ends.ends(["p0", "p1"], 5.5) is None  # p0's fetch was sent before 5.5
    assert ends.ends([], 0.0) is None


def test_a_late_answer_to_an_older_fetch_does_not_replace_a_newer_end() -> None:
    ends = registry()
    ends.note(7.0, {"p0": 9})
    ends.note(6.0, {"p0": 4})  # two brokers' responses crossing: the older fetch's end
    assert ends.ends(["p0"], 6.5) == {"p0": 9}


async def test_a_waiter_is_woken_by_a_fetch_answered_on_another_thread() -> None:
    ends = registry()
    answered = ends.after(["p0", "p1"], 1.0)
    ends.note(0.5, {"p0": 1, "p1": 1})  # sent before the moment: no answer
    await asyncio.sleep(0)
    assert not answered.done()
    consumer = threading.Thread(target=ends.note, args=(2.0, {"p0": 2, "p1": 5}))
    consumer.start()
    consumer.join()
    await asyncio.wait_for(answered, 1)
    assert ends.ends(["p0", "p1"], 1.0) == {"p0": 2, "p1": 5}


async def test_a_waiter_already_answered_is_done_at_once() -> None:
    ends = registry()
    ends.note(2.0, {"p0": 2})
    assert ends.after(["p0"], 1.0).done()


async def test_a_cancelled_waiter_is_not_woken() -> None:
    ends = registry()
    gone, kept = ends.after(["p0"], 1.0), ends.after(["p0"], 1.0)
    gone.cancel()
    ends.note(2.0, {"p0": 2})
    await asyncio.wait_for(kept, 1)
    assert gone.cancelled()
