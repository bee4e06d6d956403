"""The plan_state table behind a cache of parsed states; writes only what changed, and under
at_least_once holds a changed state in memory for a while so a plan changed k times costs one
changelog record.

Holding a state in memory is safe the way holding a parked entry is (agents/joins/plan_join.py):
the records whose effect it carries keep their offsets *pinned* (streams/offsets/progress.py),
so no commit passes them until the state is in the table, and a kill -9 reads them again
against the state the table held. The state is written on its partition's first sweep tick
after ``join.hold_in_memory`` (the tick's record decides the changelog partition; a plan's key
is on the same partition number in every topic), when a change cannot be held (no record
of an input topic under way, or the change completes entries already in the ``pending``
table, whose deletion must not reach the broker before the state does), or when the plan is
deleted. A rebalance drops what is held: the records come again.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import faust
from faust.types import TP

from learnstream.agents.seams.faust_compat import current_partition, partitioned_items
from learnstream.streams.join.expiry import ExpiryIndex
from learnstream.streams.state.plan import PlanState

__all__ = ["STATE_CACHE_SIZE", "PlanStore", "Pins"]

#: Validated plan states kept per worker (a lookup then costs a dict compare, not a parse).
STATE_CACHE_SIZE = 4096


class Pins(Protocol):
    """Keeps commits of a partition from passing a record held in memory (Progress)."""

    def pin(self, tp: TP, offset: int) -> None: ...
    def unpin(self, tp: TP, offset: int) -> None: ...


@dataclass
class _Held:
    """A changed state not written yet: its table value, since when, and the pinned records
    whose effect it carries."""

    raw: Any
    since: datetime
    partition: int
    pins: list[tuple[TP, int]] = field(default_factory=list)


class PlanStore:
    """Read, write and delete plan states; the table is the truth, the cache only saves parses.

    A write equal to what the table holds is skipped: each write is a changelog record, and
    most records (a decision, an execute) leave their plan as it was. With ``pins`` (at
    least once) a write that names the records it carries (``store(..., records=...)``) is
    held in memory until ``flush`` finds it older than ``hold``; reads see it meanwhile.
    """

    def __init__(
        self,
        table: faust.types.TableT[str, Any],
        expiry: ExpiryIndex,
        pins: Pins | None = None,
        hold: timedelta = timedelta(0),
    ) -> None:
        self.table = table
        #: Terminal plans by expiry time, for the sweeper (agents/joins/sweeper.py).
        self.expiry = expiry
        self.pins = pins if hold > timedelta(0) else None
        self.hold = hold
        self._states: OrderedDict[str, tuple[Any, PlanState]] = OrderedDict()
        self._held: dict[str, _Held] = {}
        #: Per partition, the held plan ids oldest first: (since, plan id).
        self._order: dict[int, deque[tuple[datetime, str]]] = {}

    @property
    def holds(self) -> bool:
        """Tell whether changed states may wait in memory (at_least_once, a hold set)."""
        return self.pins is not None

    def _raw(self, plan_id: str) -> Any:
        held = self._held.get(plan_id)
        return held.raw if held is not None else self.table.get(plan_id)

    def get(self, plan_id: str) -> PlanState | None:
        """Return the state of ``plan_id`` (held in memory or in the table), if any.

        A cached state is used only while the store still holds the very value it was
        parsed from.
        """
        raw = self._raw(plan_id)
        if not raw:
            return None
        cached = self._states.get(plan_id)
        if cached is not None and (cached[0] is raw or cached[0] == raw):
            self._states.move_to_end(plan_id)
            return cached[1]
        state = PlanState.from_table(raw)
        self._remember(plan_id, raw, state)
        return state

    def __contains__(self, plan_id: object) -> bool:
        """Tell whether a state is stored for ``plan_id`` (no parse)."""
        return isinstance(plan_id, str) and bool(self._raw(plan_id))

    def store(
        self,
        plan_id: str,
        state: PlanState,
        records: Iterable[tuple[TP, int]] = (),
        now: datetime | None = None,
    ) -> bool:
        """Store ``state`` unless it is what is stored already; return whether it changed.

        ``records``: the records whose effect the change carries. Given (and a hold set),
        the change waits in memory with their offsets pinned; else it is written at once.
        """
        held = self._raw(plan_id)
        cached = self._states.get(plan_id)
        if cached is not None and cached[1] is state and cached[0] == held:
            return False  # the very state read from the store: nothing changed, no parse
        raw = state.to_table()
        if held == raw:
            return False
        pinned, partition = list(records), current_partition()
        if self.pins is not None and now is not None and pinned and partition is not None:
            self._hold(self.pins, plan_id, raw, pinned, partition, now)
        else:
            self.table[plan_id] = raw
            self._release(plan_id)
        self._remember(plan_id, raw, state)
        record_key = state.snapshot.plan.plan_id
        self.expiry.note(plan_id, state.terminal_since, record_key, partition)
        return True

    def _hold(
        self,
        pins: Pins,
        plan_id: str,
        raw: Any,
        records: list[tuple[TP, int]],
        partition: int,
        now: datetime,
    ) -> None:
        held = self._held.get(plan_id)
        if held is None:
            held = self._held[plan_id] = _Held(raw, now, partition)
            self._order.setdefault(partition, deque()).append((now, plan_id))
        held.raw = raw
        for tp, offset in records:
            pins.pin(tp, offset)
            held.pins.append((tp, offset))

    def flush(self, partition: int, now: datetime, everything: bool = False) -> int:
        """Write the states of ``partition`` held ``hold`` or longer (all with
        ``everything``) and unpin their records; return how many were written. Call it while
        a record of ``partition`` is processed: the changelog partition is that record's."""
        order, written = self._order.get(partition), 0
        while order and (everything or now - order[0][0] >= self.hold):
            since, plan_id = order.popleft()
            held = self._held.get(plan_id)
            if held is None or held.since != since:  # written or deleted meanwhile
                continue
            self.table[plan_id] = held.raw
            self._release(plan_id)
            written += 1
        return written

    def held(self, partition: int | None = None) -> int:
        """Return how many changed states wait in memory (of ``partition``, or all)."""
        if partition is None:
            return len(self._held)
        return sum(1 for held in self._held.values() if held.partition == partition)

    def stored_items(self) -> Iterator[tuple[str, Any, int | None]]:
        """Yield (plan id, stored value, partition) of every state this worker owns: those
        held in memory, then the table's others (what the expiry index is rebuilt from)."""
        held = {plan_id: (h.raw, h.partition) for plan_id, h in self._held.items()}
        for plan_id, (raw, partition) in held.items():
            yield plan_id, raw, partition
        for item in partitioned_items(self.table):
            if item[0] not in held:
                yield item

    def _release(self, plan_id: str) -> None:
        """Forget the held change of ``plan_id`` (written or gone) and unpin its records."""
        held = self._held.pop(plan_id, None)
        if held is None or self.pins is None:
            return
        for tp, offset in held.pins:
            self.pins.unpin(tp, offset)

    def forget(self, plan_id: str) -> None:
        """Delete ``plan_id`` from the table (a tombstone in its changelog)."""
        self.table.pop(plan_id, None)
        self._release(plan_id)
        self._states.pop(plan_id, None)

    def on_revoked(self, partitions: set[int]) -> None:
        """Drop what is held for revoked ``partitions`` (all, as Faust revokes them all):
        their records were not committed past, so whoever owns them next reads them again.
        The pins stay until the next assignment (Progress drops them then)."""
        for plan_id, held in list(self._held.items()):
            if held.partition in partitions:
                del self._held[plan_id]
                self._states.pop(plan_id, None)
        for partition in partitions:
            self._order.pop(partition, None)

    def _remember(self, plan_id: str, raw: Any, state: PlanState) -> None:
        self._states[plan_id] = (raw, state)
        self._states.move_to_end(plan_id)
        if len(self._states) > STATE_CACHE_SIZE:
            self._states.popitem(last=False)
