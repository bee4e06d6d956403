"""Find partitions whose fetched records never reached the agents (pure).

Faust's ``Consumer.getmany`` hands over a fetched batch record by record and stops early
when flow control stops, the group generation changes, or a partition leaves its active
set; the records left in the batch are dropped, but the client's fetch position is already
past them. ``Progress`` notices such a hole when a later record of the partition arrives
and seeks back. If nothing comes after them (the tail of a partition, an idle runtime),
nothing arrives to show the hole: those records, and every sample that waits for them (a
decision waits for the corrections before it), wait until the next restart (RELIABILITY.md,
findings behind the design).

``StallWatch`` tells, from the consumer's fetch positions and the offsets handed over, which
partitions have had records fetched and not handed over for ``after_s`` seconds; the worker
seeks those back to the first one. Records still waiting in a batch behind a blocked agent
can look the same; a seek then costs one re-fetch (``Progress`` skips records processed
before). Offsets that hold no record look the same too: transaction markers and aborted
records under read_committed, compacted ones. A re-read from there hands nothing over, so
the second time the same offsets stall they are taken as such a gap, not read again.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["IDLE_AFTER_S", "STALLED_AFTER_S", "Idle", "IdleWatch", "Stall", "StallWatch"]

#: How long fetched records may wait to be handed over before the partition is read again.
#: Every sample waiting on such a record waits this long too (10 s made the end of a
#: scale-out round: benchmarks/RESULTS.md, findings behind the design); a false alarm
#: costs one re-fetch of records already handed over, which ``Progress`` skips.
STALLED_AFTER_S = 3.0

#: How long a partition may stay behind records the broker holds, fetching none, before it
#: is fetched afresh.
IDLE_AFTER_S = 30.0

_P = TypeVar("_P", bound=Hashable)


@dataclass(frozen=True)
class Stall:
    """Offsets ``offset``..``position - 1`` were fetched and not handed over."""

    offset: int
    position: int
    #: A re-read from ``offset`` handed nothing over: those offsets hold no record.
    gap: bool


class _Held(Generic[_P]):
    """Per partition, since when a value has held unchanged: the wait both watches share."""

    def __init__(self) -> None:
        self._since: dict[_P, tuple[int, float]] = {}  # value, and since when it held

    def only(self, partitions: Mapping[_P, object]) -> None:
        """Forget the partitions not in ``partitions`` (not ours any more)."""
        for tp in [tp for tp in self._since if tp not in partitions]:
            del self._since[tp]

    def clear(self, tp: _P) -> None:
        """Stop timing ``tp``: what it waited for is over."""
        self._since.pop(tp, None)

    def due(self, tp: _P, value: int, now: float, after_s: float) -> bool:
        """Tell whether ``value`` has held for ``after_s`` at ``tp``; the wait starts
        afresh when it has, and when the value changed."""
        known = self._since.get(tp)
        if known is not None and known[0] == value and now - known[1] < after_s:
            return False
        self._since[tp] = (value, now)
        return known is not None and known[0] == value


class StallWatch(Generic[_P]):
    """Per partition, how long fetched records have waited to be handed over."""

    def __init__(self, after_s: float = STALLED_AFTER_S) -> None:
        self.after_s = after_s
        self._waiting = _Held[_P]()  # the first offset not handed over, since when
        self._sought: dict[_P, int] = {}  # where each stalled partition was read again from

    def stalled(
        self, now: float, offsets: Mapping[_P, tuple[int | None, int | None]]
    ) -> dict[_P, Stall]:
        """Return the stalled partitions: read them again from ``Stall.offset``, unless
        ``Stall.gap``.

        ``offsets`` maps each partition to (fetch position, first offset not handed over);
        either may be unknown (None). A partition counts as stalled when its position has
        been past that offset for ``after_s`` with the offset unchanged; it is then watched
        afresh. Stalling again at the offset it was read again from makes it a gap.
        """
        self._waiting.only(offsets)
        for tp in [tp for tp in self._sought if tp not in offsets]:
            del self._sought[tp]
        found: dict[_P, Stall] = {}
        for tp, (position, expected) in offsets.items():
            if position is None or expected is None or position <= expected:
                self._waiting.clear(tp)
            elif self._waiting.due(tp, expected, now, self.after_s):
                gap = self._sought.pop(tp, None) == expected
                if not gap:
                    self._sought[tp] = expected
                found[tp] = Stall(expected, position, gap)
        return found


@dataclass(frozen=True)
class Idle:
    """Offsets ``position``..``highwater - 1`` are on the broker and none was fetched."""

    position: int
    highwater: int


class IdleWatch(Generic[_P]):
    """Per partition, how long its fetch position has stayed below the high watermark.

    The other side of ``StallWatch``: records the consumer never fetched. The fetch position
    has not passed them, so ``StallWatch`` cannot see them, yet a record left unread at the
    tail of a partition holds back what waits for it (RELIABILITY.md, findings behind the
    design). A partition whose position has not moved for ``after_s`` while the
    broker's high watermark is above it is fetched afresh (a seek to its position drops
    what the client holds of it), and said so, every ``after_s`` while it lasts.

    An agent busy with one record that long holds its partitions back the same way; the seek
    then costs one fetch. The embedded broker's high watermark counts record batches, below
    the record offsets unless every batch holds one record: there the watch stays quiet.
    """

    def __init__(self, after_s: float = IDLE_AFTER_S) -> None:
        self.after_s = after_s
        self._still = _Held[_P]()  # the fetch position, since when it has not moved

    def idle(
        self, now: float, offsets: Mapping[_P, tuple[int | None, int | None]]
    ) -> dict[_P, Idle]:
        """Return the partitions whose position (first of each pair) has stayed below their
        high watermark (second) for ``after_s``; either may be unknown (None)."""
        self._still.only(offsets)
        found: dict[_P, Idle] = {}
        for tp, (position, highwater) in offsets.items():
            if position is None or highwater is None or highwater <= position:
                self._still.clear(tp)
            elif self._still.due(tp, position, now, self.after_s):
                found[tp] = Idle(position, highwater)
        return found
