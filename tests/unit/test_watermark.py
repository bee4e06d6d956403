"""The corrections watermark: offsets settle a waiting event, event times never do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agents.watermark import Watermark
from streams.progress import Progress

T = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def watermark(end: int | None) -> Watermark:
    return Watermark("deltas", Progress(gated=False), lambda _tp: end)


def test_a_later_correction_read_first_does_not_settle_an_earlier_event() -> None:
    # offset 0: another plan's correction made at T+10s; offset 1 (unread): this plan's, at T-1s
    mark = watermark(end=2)
    mark.advance(0, 0, T + timedelta(seconds=10))
    mark.wait(0, "plan-a", T)
    assert not mark.settled(0, T)
    assert mark.due(0) == []
    mark.advance(0, 1, T - timedelta(seconds=1))
    assert mark.settled(0, T)
    assert mark.due(0) == ["plan-a"]


def test_an_unknown_end_settles_nothing_and_an_empty_partition_everything() -> None:
    assert not watermark(end=None).settled(0, T)
    assert watermark(end=0).settled(0, T)
    assert not watermark(end=1).settled(3, T)
