"""What official core events add to a plan's state: its intent (an IntentEvent) and its
tokens (CostAndBudgetEvents). Pure; the join rule is ``on_plan_fact`` (streams/join/rules.py).

Both join the plan their payload names (``payload.plan_id``, parsed by
streams/mplp/core_events.py) and live in the plan's own state (``PlanState.intent``,
``PlanState.costs``), not in a table of their own: the samples they feed (intent_resolution,
pipeline_outcome and through it plan_optimization) are built from that state by the plan's
join, which already parks, settles and replays in event-time order. So:

- **Fact before plan.** An IntentEvent or a cost read before its plan's snapshot is parked
  in ``pending`` like a correction and recorded when the snapshot comes, before the parked
  decisions and stages later in event time; one whose plan never comes within
  ``LEARNSTREAM_JOIN__GRACE`` is dead-lettered ``plan_state_missing`` (replayable).
- **Plan before fact.** It is recorded at once. A decision or stage completed after that
  reads it; one completed before it did not (its sample went out, and is not sent again:
  no second sample under its id). Decisions and stages wait for the corrections input,
  not for the core events, so a runtime sends the IntentEvent and the costs before the
  decision and the stage end, as the protocol's order has them.
- **Intent.** The latest IntentEvent by event time (then event id) is the plan's intent;
  ``snapshot.intent``, when the plan carries one, still comes first
  (streams/samples/parts.py ``intent_of``).
- **Costs.** Each CostAndBudgetEvent is one charge; a stage's tokens, when its payload
  reports none, are the sum of its plan's charges at or before the stage's own time
  (``spent_as_of``). Recorded once per event id (a redelivery changes nothing), the latest
  :data:`MAX_COSTS` kept.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from pydantic import AwareDatetime

__all__ = ["MAX_COSTS", "CostMark", "IntentMark", "spent_as_of"]

#: Cost events a plan keeps (the latest recorded).
MAX_COSTS = 64


class IntentMark(NamedTuple):
    """A plan's intent as an IntentEvent stated it (``[intent_id, text, at, event_id]``)."""

    intent_id: str
    text: str | None
    at: AwareDatetime
    event_id: str

    def later_than(self, other: IntentMark | None) -> bool:
        """Tell whether this statement replaces ``other`` (later in event time, then id)."""
        return other is None or (self.at, self.event_id) > (other.at, other.event_id)


class CostMark(NamedTuple):
    """One charge of a plan's tokens (``[event_id, at, total, prompt, completion]``)."""

    event_id: str
    at: AwareDatetime
    total_tokens: int
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _sum(marks: list[CostMark], name: str) -> int | None:
    values = [getattr(mark, name) for mark in marks]
    return None if None in values else sum(values)


def spent_as_of(costs: tuple[CostMark, ...] | None, moment: datetime) -> dict[str, Any] | None:
    """Return the token usage of the charges at or before ``moment`` (None: none): the
    total, and prompt and completion when every charge gave them."""
    marks = [mark for mark in costs or () if mark.at <= moment]
    if not marks:
        return None
    usage = {name: _sum(marks, name) for name in ("prompt_tokens", "completion_tokens")}
    return {"total_tokens": _sum(marks, "total_tokens")} | {
        name: value for name, value in usage.items() if value is not None
    }
