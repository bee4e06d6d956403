"""The join of decisions, deltas and outcomes with plan state, with a grace buffer.

The join's rules as a whole: docs/architecture.md §5.

What one event comes to against its plan's state: the deciders every route of the join unit
(streams/join/unit.py) calls, live and when a parked event is replayed. All pure.

Samples are built from the plan *as of the event* (``PlanState.as_of``): a decision or an
execute counts the corrections made at or before its own time. One read before the
corrections input has been read past its time is not *settled*: it is parked too, until
that input catches up or ``join.grace`` has passed (agents/joins/plan_join.py keeps the watermark).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from learnstream.streams.join.outcome import Outcome
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.mplp.core_events import CoreEvent, cost_stated, intent_stated
from learnstream.streams.mplp.models import DecisionEvent, DeltaIntentEvent, StageEvent
from learnstream.streams.samples import builders
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.state.facts import CostMark, IntentMark
from learnstream.streams.state.plan import (
    PlanState,
    StageMark,
    record_cost,
    record_delta,
    record_intent,
    record_stage,
    record_start,
)

__all__ = [
    "IMPACT_ONLY_TYPE",
    "confirmed",
    "on_decision",
    "on_delta",
    "on_plan_fact",
    "on_stage",
    "plan_key",
    "plan_key_of",
]

#: A delta_intent event of this type carries only the impact analysis of an earlier delta.
IMPACT_ONLY_TYPE = "delta_impact_analyzed"


def plan_key(plan_id: str) -> str:
    """Return the key of a plan in the plan_state and pending tables.

    ``canonical_id``: an upper-case UUID, its lower-case form and the runtime's ``plan-123``
    style ids each name one entry, whichever record spells it.
    """
    return canonical_id(plan_id)


def plan_key_of(event: Any) -> str | None:
    """Return the join key of an event of a plan input: its plan's (None: it names none)."""
    plan_id = event.payload.plan_id
    return None if plan_id is None else plan_key(plan_id)


def confirmed(entry: ParkedEvent, event: DecisionEvent) -> bool:
    """Tell whether the confirm_decision of the parked decision ``entry`` went out when it
    came: it names its project, or its plan was known then (the project is the plan's)."""
    return event.project_id is not None or entry.plan_known


def on_decision(
    event: DecisionEvent,
    state: PlanState | None,
    now: datetime,
    *,
    confirmed: bool = False,
    settled: bool = True,
) -> Outcome[PlanState]:
    """Emit confirm_decision and, once the plan is known and settled, intent_resolution.

    confirm_decision needs no plan, so it goes out at once, unless the event names no
    project: then only the plan can say whose consent applies, and it waits for the join.
    ``confirmed``: it went out already (the replay of a parked decision). ``settled``: the
    corrections input has been read past the event's time (``corrections_so_far``).

    Only an approval or a rejection of a plan resolves its intent. A cancellation, or a
    decision on a context, trace, extension or other target, makes confirm_decision alone.
    One that names a plan waits for it like a decision on the plan when it names no project
    (the plan's project says whose consent applies); one that names neither goes out at once
    under the global switch alone.
    """
    known = event.project_id is not None or state is not None or event.payload.plan_id is None
    samples = []
    if not confirmed and known:
        samples.append(builders.build_confirm_decision(event, state, now))
    if not event.judges_plan:
        return Outcome(samples=samples, park=not (confirmed or known))
    if state is None or not settled:
        return Outcome(samples=samples, park=True)
    resolution = builders.build_intent_resolution(event, state.as_of(event.timestamp), now)
    return Outcome(samples=[*samples, resolution])


def on_delta(event: DeltaIntentEvent, state: PlanState | None, now: datetime) -> Outcome[PlanState]:
    """Emit error_correction (and delta_impact when the delta carries its impact)."""
    if state is None:
        return Outcome(park=True)
    samples = []
    if event.event_type != IMPACT_ONLY_TYPE:
        samples.append(builders.build_error_correction(event, state, now))
        state = record_delta(state, event.payload.delta_id, event.timestamp)
    if event.payload.impact is not None:
        samples.append(builders.build_delta_impact(event, state, now))
    return Outcome(samples=samples, new_state=state)


def on_stage(
    event: StageEvent,
    state: PlanState | None,
    now: datetime,
    *,
    settled: bool = True,
    stages: frozenset[str] | None = None,
) -> Outcome[PlanState]:
    """Emit pipeline_outcome for a stage that completed, failed or was skipped, if ``stages``
    (None: all) collects it; other stage events (pending, running) yield nothing.

    A stage of a plan (``payload.plan_id``) joins the plan: "completed after a delta" counts
    the corrections made at or before the stage's own time, so an unsettled stage
    (corrections not read past its time) waits. A stage that names no plan goes out alone.

    Every ended stage of a known plan, collected or not, is recorded in its state as it is
    read (``record_stage``), also one that waits to be settled: the pipeline_path of a
    sample names the stages recorded before its own, and a stage read earlier is recorded
    earlier whichever of them is settled first. A skipped stage is not recorded: the plan
    did not run it, so it is in no later stage's path (its own path ends with it).

    A stage of a known plan that starts (``running``) is recorded too (``record_start``):
    its end, if it reports no ``payload.duration_ms``, lasts from that start. A start read
    before its plan is known is not kept (it makes no sample to wait for).
    """
    if event.starts and state is not None and event.payload.plan_id is not None:
        started = record_start(state, StageMark.of(event))
        return Outcome(new_state=started if started is not state else None)
    if not (event.ends or event.skipped):
        return Outcome()
    collected = stages is None or event.stage in stages
    if event.payload.plan_id is None:
        alone = [builders.build_pipeline_outcome(event, None, now)] if collected else []
        return Outcome(samples=alone)
    if state is None:
        return Outcome(park=collected)
    recorded = record_stage(state, StageMark.of(event)) if event.ends else state
    changed = recorded if recorded is not state else None
    if not (collected and settled):
        return Outcome(park=collected, new_state=changed)
    sample = builders.build_pipeline_outcome(event, recorded.as_of(event.timestamp), now)
    return Outcome(samples=[sample], new_state=changed)


def _with_fact(event: CoreEvent, state: PlanState) -> PlanState:
    """Return ``state`` with the intent or the charge ``event`` states recorded."""
    intent, cost = intent_stated(event), cost_stated(event)
    if intent is not None:
        mark = IntentMark(intent.intent_id, intent.text, event.timestamp, event.event_id)
        return record_intent(state, mark)
    if cost is not None:
        tokens = (cost.total_tokens, cost.prompt_tokens, cost.completion_tokens)
        return record_cost(state, CostMark(event.event_id, event.timestamp, *tokens))
    return state


def on_plan_fact(event: CoreEvent, state: PlanState | None, now: datetime) -> Outcome[PlanState]:
    """Record what an IntentEvent or a CostAndBudgetEvent naming its plan says of it
    (streams/state/facts.py); no sample of its own. Parked until the plan is known."""
    if intent_stated(event) is None and cost_stated(event) is None:
        return Outcome()
    if state is None:
        return Outcome(park=True)
    recorded = _with_fact(event, state)
    return Outcome(new_state=recorded if recorded is not state else None)
