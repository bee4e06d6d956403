"""Find partitions whose fetched records never reached the agents (pure).

Faust's ``Consumer.getmany`` hands over a fetched batch record by record and stops early
when flow control stops, the group generation changes, or a partition leaves its active
set; the records left in the batch are dropped, but the client's fetch position is already
past them. ``Progress`` notices such a hole when a later record of the partition arrives
and seeks back. If nothing comes after them (the tail of a partition, an idle runtime),
nothing arrives to show the hole and those records wait until the next restart: seen in
CI as a restarted worker that never processed the last correction and stage records it
had fetched.

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

__all__ = ["STALLED_AFTER_S", "Stall", "StallWatch"]

#: How long fetched records may wait to be handed over before the partition is read again.
STALLED_AFTER_S = 10.0

_P = TypeVar("_P", bound=Hashable)


@dataclass(frozen=True)
class Stall:
    """Offsets ``offset``..``position - 1`` were fetched and not handed over."""

    offset: int
    position: int
    #: A re-read from ``offset`` handed nothing over: those offsets hold no record.
    gap: bool


@dataclass(frozen=True)
class _Waiting:
    expected: int  # the first offset not handed over
    since: float  # when the position was first seen past it, with it unchanged


class StallWatch(Generic[_P]):
    """Per partition, how long fetched records have waited to be handed over."""

    def __init__(self, after_s: float = STALLED_AFTER_S) -> None:
        self.after_s = after_s
        self._waiting: dict[_P, _Waiting] = {}
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
        for known in (self._waiting, self._sought):
            for tp in [tp for tp in known if tp not in offsets]:
                del known[tp]  # not ours any more
        found: dict[_P, Stall] = {}
        for tp, (position, expected) in offsets.items():
            if position is None or expected is None or position <= expected:
                self._waiting.pop(tp, None)
                continue
            waiting = self._waiting.get(tp)
            if waiting is None or waiting.expected != expected:
                self._waiting[tp] = _Waiting(expected, now)
            elif now - waiting.since >= self.after_s:
                gap = self._sought.pop(tp, None) == expected
                if not gap:
                    self._sought[tp] = expected
                found[tp] = Stall(expected, position, gap)
                self._waiting[tp] = _Waiting(expected, now)
        return found
