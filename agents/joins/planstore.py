"""The plan_state table behind a cache of parsed states; writes only what changed."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import faust

from learnstream.agents.seams.faust_compat import current_partition
from learnstream.streams.join.expiry import ExpiryIndex
from learnstream.streams.state.plan import PlanState

__all__ = ["STATE_CACHE_SIZE", "PlanStore"]

#: Validated plan states kept per worker (a lookup then costs a dict compare, not a parse).
STATE_CACHE_SIZE = 4096


class PlanStore:
    """Read, write and delete plan states; the table is the truth, the cache only saves parses.

    A write equal to what the table holds is skipped: each write is a changelog record, and
    most records (a decision, an execute) leave their plan as it was.
    """

    def __init__(self, table: faust.types.TableT[str, Any], expiry: ExpiryIndex) -> None:
        self.table = table
        #: Terminal plans by expiry time, for the sweeper (agents/joins/sweeper.py).
        self.expiry = expiry
        self._states: OrderedDict[str, tuple[Any, PlanState]] = OrderedDict()

    def get(self, plan_id: str) -> PlanState | None:
        """Return the state of ``plan_id`` held in the table, if any.

        A cached state is used only while the table still holds the very value it was
        parsed from.
        """
        raw = self.table.get(plan_id)
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
        """Tell whether the table holds a state for ``plan_id`` (no parse)."""
        return isinstance(plan_id, str) and bool(self.table.get(plan_id))

    def store(self, plan_id: str, state: PlanState) -> bool:
        """Write ``state`` unless the table holds it already; return whether it wrote."""
        held = self.table.get(plan_id)
        cached = self._states.get(plan_id)
        if cached is not None and cached[1] is state and cached[0] == held:
            return False  # the very state read from the table: nothing changed, no parse
        raw = state.to_table()
        if held == raw:
            return False
        self.table[plan_id] = raw
        self._remember(plan_id, raw, state)
        record_key = state.snapshot.plan.plan_id
        self.expiry.note(plan_id, state.terminal_since, record_key, current_partition())
        return True

    def forget(self, plan_id: str) -> None:
        """Delete ``plan_id`` from the table (a tombstone in its changelog)."""
        self.table.pop(plan_id, None)
        self._states.pop(plan_id, None)

    def _remember(self, plan_id: str, raw: Any, state: PlanState) -> None:
        self._states[plan_id] = (raw, state)
        self._states.move_to_end(plan_id)
        if len(self._states) > STATE_CACHE_SIZE:
            self._states.popitem(last=False)
