"""The plan_state table behind a cache of parsed states; writes only what changed, and under
at_least_once holds a changed state in memory (agents/joins/held.py), so a plan changed k times
within ``join.hold_in_memory`` costs one changelog record.

A change is held only when it names the records whose effect it carries (the join's
``_carried``: the record under way and the entries it completes). It is written at once
otherwise: on a sweep tick, or when it completes an entry stored in ``pending``, whose
tombstone must not reach the broker before the state does. A deleted plan takes what is held
for it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

import faust
from faust.types import TP

from learnstream.agents.joins.held import FLUSH_STEP, HeldWrites, Pins
from learnstream.agents.seams.faust_compat import current_partition
from learnstream.streams.join.expiry import ExpiryIndex
from learnstream.streams.state.plan import PlanState

__all__ = ["STATE_CACHE_SIZE", "PlanStore"]

#: Validated plan states kept per worker (a lookup then costs a dict compare, not a parse).
STATE_CACHE_SIZE = 4096


class PlanStore:
    """Read, write and delete plan states; the table (and what is held for it) is the truth,
    the cache only saves parses.

    A write equal to what is stored is skipped: each write is a changelog record, and most
    records (a decision, an execute) leave their plan as it was.
    """

    def __init__(
        self,
        table: faust.types.TableT[str, Any],
        expiry: ExpiryIndex,
        pins: Pins | None = None,
        hold: timedelta = timedelta(0),
    ) -> None:
        self.table = table
        self.writes = HeldWrites(table, pins, hold)
        #: Terminal plans by expiry time, for the sweeper (agents/joins/sweeper.py).
        self.expiry = expiry
        self._states: OrderedDict[str, tuple[Any, PlanState]] = OrderedDict()

    @property
    def holds(self) -> bool:
        """Tell whether changed states may wait in memory (at_least_once, a hold set)."""
        return self.writes.holds

    def get(self, plan_id: str) -> PlanState | None:
        """Return the state of ``plan_id``, if any.

        A cached state is used only while the store still holds the very value it was
        parsed from.
        """
        raw = self.writes.get(plan_id)
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
        return isinstance(plan_id, str) and bool(self.writes.get(plan_id))

    def store(
        self,
        plan_id: str,
        state: PlanState,
        records: Iterable[tuple[TP, int]] = (),
        now: datetime | None = None,
    ) -> bool:
        """Store ``state`` unless it is what is stored already; return whether it changed.

        With ``records`` (those whose effect the change carries) and ``now``, the change
        may wait in memory, their offsets pinned; else it is written at once.
        """
        stored = self.writes.get(plan_id)
        cached = self._states.get(plan_id)
        if cached is not None and cached[1] is state and cached[0] == stored:
            return False  # the very state read from the store: nothing changed, no parse
        raw = state.to_table()
        if stored == raw:
            return False
        if now is None:
            self.writes.write(plan_id, raw)
            partition = current_partition()
        else:
            partition = self.writes.put(plan_id, raw, records, now)
            partition = current_partition() if partition is None else partition
        self._remember(plan_id, raw, state)
        record_key = state.snapshot.plan.plan_id
        self.expiry.note(plan_id, state.terminal_since, record_key, partition)
        return True

    def flush(self, partition: int, now: datetime) -> int:
        """Write the states of ``partition`` held ``join.hold_in_memory`` or longer, at most
        ``FLUSH_STEP`` (on a tick of that partition); return how many."""
        return self.writes.flush(partition, now, FLUSH_STEP)

    def write_all(self) -> int:
        """Write every state held in memory (the last commit before the partitions go);
        return how many."""
        return self.writes.write_all()

    def held(self, partition: int | None = None) -> int:
        """Return how many changed states wait in memory (of ``partition``, or all)."""
        return self.writes.count(partition)

    def stored_items(self) -> Iterator[tuple[str, Any, int | None]]:
        """Yield (plan id, stored value, partition) of every state this worker owns: what
        the expiry index is rebuilt from."""
        return self.writes.items()

    def forget(self, plan_id: str) -> None:
        """Delete ``plan_id`` (a tombstone in its changelog, if it was written)."""
        self.writes.delete(plan_id)
        self._states.pop(plan_id, None)

    def on_revoked(self, partitions: set[int]) -> None:
        """Drop what is held for revoked ``partitions``: their records come again."""
        for plan_id in self.writes.drop(partitions):
            self._states.pop(plan_id, None)

    def _remember(self, plan_id: str, raw: Any, state: PlanState) -> None:
        self._states[plan_id] = (raw, state)
        self._states.move_to_end(plan_id)
        if len(self._states) > STATE_CACHE_SIZE:
            self._states.popitem(last=False)
