"""The join's routes: how each input topic's records are decoded and decided.

One table for every input the join reads, so what a topic's record comes to is read here and
nowhere else: decisions and stages *settle* (their samples count the plan's corrections,
so they wait until the corrections input is read past them), corrections do not; MAP events
join their session, not a plan (streams/join/sessions.py); impact analyses (core events)
join their delta's impact window (streams/join/impacts.py), IntentEvents and cost events
their plan (streams/state/facts.py); a stage that names no plan but its pipeline joins its
run of the stage (streams/join/runs.py).
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from learnstream.streams.config.settings import GraphSettings, TopicSettings
from learnstream.streams.join.graphs import graph_route
from learnstream.streams.join.impacts import analysis_route
from learnstream.streams.join.outcome import Outcome
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.rules import (
    confirmed,
    on_decision,
    on_delta,
    on_plan_fact,
    on_stage,
    plan_key,
    plan_key_of,
)
from learnstream.streams.join.runs import decide_stage_run, execution_route, sa_route, stage_key
from learnstream.streams.join.sessions import map_route
from learnstream.streams.join.unit import Route
from learnstream.streams.mplp.core_events import CoreEvent, cost_stated, intent_stated
from learnstream.streams.mplp.decode import (
    RecordOrigin,
    decode_decision,
    decode_delta,
    decode_stage,
)
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.mplp.models import DecisionEvent, DeltaIntentEvent, StageEvent
from learnstream.streams.state.plan import PlanState

__all__ = ["DECISION_KINDS", "routes"]

#: The decision topics, each named after the event type it carries.
DECISION_KINDS = ("plan_approved", "plan_rejected")


def _decode_decision(
    kind: str, data: bytes | None, origin: RecordOrigin, notes: InputNotes | None
) -> DecisionEvent:
    return decode_decision(data, kind, origin=origin, notes=notes)


def _decide_decision(
    event: DecisionEvent,
    state: PlanState | None,
    moment: datetime,
    parked: ParkedEvent | None,
    settled: bool,
) -> Outcome[PlanState]:
    known = parked is not None and confirmed(parked, event)
    return on_decision(event, state, moment, confirmed=known, settled=settled)


def _decode_delta(
    data: bytes | None, origin: RecordOrigin, notes: InputNotes | None
) -> DeltaIntentEvent:
    return decode_delta(data, origin=origin, notes=notes)


def _decide_delta(
    event: DeltaIntentEvent,
    state: PlanState | None,
    moment: datetime,
    _parked: ParkedEvent | None,
    _settled: bool,
) -> Outcome[PlanState]:
    return on_delta(event, state, moment)


def _decode_stage(data: bytes | None, origin: RecordOrigin, notes: InputNotes | None) -> StageEvent:
    return decode_stage(data, origin=origin, notes=notes)


def _decide_stage(
    stages: frozenset[str] | None,
    event: StageEvent,
    state: Any,
    moment: datetime,
    _parked: ParkedEvent | None,
    settled: bool,
) -> Outcome[Any]:
    """A stage of a plan joins its plan; one of a pipeline alone, its run (streams/join/runs.py)."""
    if event.payload.plan_id is None and event.pipeline_id is not None:
        return decide_stage_run(event, state, moment, stages)
    return on_stage(event, state, moment, settled=settled, stages=stages)


_ANALYSIS = analysis_route()


def _plan_named(event: CoreEvent) -> str | None:
    """Return the plan an IntentEvent or a cost names (None: neither, or no plan)."""
    fact = intent_stated(event) or cost_stated(event)
    return None if fact is None else fact.plan_id


def _core_key(event: CoreEvent) -> str | None:
    """An intent or a cost joins its plan; an impact analysis its delta's impact window."""
    plan_id = _plan_named(event)
    return _ANALYSIS.key(event) if plan_id is None else plan_key(plan_id)


def _decide_core(
    event: CoreEvent,
    state: Any,
    moment: datetime,
    parked: ParkedEvent | None,
    settled: bool,
) -> Outcome[Any]:
    if _plan_named(event) is not None:
        return on_plan_fact(event, state, moment)
    return _ANALYSIS.decide(event, state, moment, parked, settled)


def routes(
    topics: TopicSettings,
    stages: frozenset[str] | None = None,
    graphs: GraphSettings | None = None,
) -> dict[str, Route]:
    """Return the route of every input topic the join reads, by topic name; ``stages``
    are the stage ids whose end is a pipeline_outcome (None: every stage); ``graphs`` when
    a graph's changes are a sample (None: the defaults)."""
    graphs = graphs or GraphSettings()
    table = {
        topics.name(kind): Route(
            "decisions", partial(_decode_decision, kind), _decide_decision, plan_key_of, True
        )
        for kind in DECISION_KINDS
    }
    table[topics.name("delta_intents")] = Route("deltas", _decode_delta, _decide_delta, plan_key_of)
    decide_stage = partial(_decide_stage, stages)
    table[topics.name("pipeline_stage")] = Route(
        "stages", _decode_stage, decide_stage, stage_key, True
    )
    table[topics.name("map_events")] = map_route()
    table[topics.name("sa_events")] = sa_route()
    table[topics.name("runtime_executions")] = execution_route()
    table[topics.name("graph_updates")] = graph_route(graphs.threshold, graphs.window)
    table[topics.name("core_events")] = Route(
        "core_events", _ANALYSIS.decode, _decide_core, key=_core_key
    )
    return table
