"""Impact analyses as a keyed window of the join unit: one state per delta.

An ImpactAnalysisEvent (a core event of family ``impact_analysis`` on ``mplp.core_events``)
completes the delta_impact sample of the delta it names (``payload.delta_id``), whichever of
the two arrives first: the first is held in the delta's :class:`ImpactState`, the second
emits the sample (streams/samples/impact_analysis.py). A state that hears nothing for
``window`` (worker clock, up to a sweep tick later) is forgotten: a delta whose analysis never
came has had its samples as before (error_correction; no delta_impact), an analysis whose
delta never came makes none.

How the analysis finds its delta: by ``payload.delta_id`` alone, the key
``impact:<canonical delta id>`` both join. The payload may name the plan (``payload.plan_id``)
too; the sample's plan is the delta's either way. Both records must sit on the same
partition: deltas are keyed by plan id, so the analysis is published keyed by its delta's
plan id as well, on a co-partitioned topic (``RuntimePublisher.publish_core_event`` keys it
by the plan its payload names, else by the ``key`` it is given). A delta reaches this key
space besides its plan's: the join hands each delta record to the plan's route first, then
to this space's delta route (:class:`learnstream.agents.joins.plan_join.KeySpace` ``routes``).
Nothing is re-keyed, no topic is added for it.

The delta reaches this space once its plan is known, with the plan's project if it names
none (agents/joins/plan_join.py ``_also``): the sample's project is the delta's, else the
analysis's; halves naming two projects make no sample.

A delta that carries its own ``impact`` (or is a ``delta_impact_analyzed`` event) already
makes its delta_impact through the plan's join: it marks its key done, so an analysis of it
makes no second sample. A completed key stays done until it goes quiet, so a redelivered
delta or analysis is counted once; a second analysis before the delta replaces the first
(the later by event time).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict

from learnstream.streams.join.outcome import Outcome
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.rules import IMPACT_ONLY_TYPE
from learnstream.streams.join.unit import Expire, Route
from learnstream.streams.mplp.core_events import CoreEvent, decode_core_event, impact_of
from learnstream.streams.mplp.decode import RecordOrigin, decode_delta
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.mplp.models import DeltaIntentEvent
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.impact_analysis import (
    AnalysisPart,
    DeltaPart,
    build_analysed_impact,
)
from learnstream.streams.samples.parts import flow_id

__all__ = [
    "IMPACT_SPACE",
    "ImpactState",
    "analysis_route",
    "decide_analysis",
    "decide_delta",
    "delta_route",
    "impact_expiry",
    "impact_key",
]

IMPACT_SPACE = "impact"


class ImpactState(BaseModel):
    """A delta and its analysis, as far as they came; JSON bytes in the ``delta_impacts`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: The plan id as the records' key spells it: their partition is the state's (the
    #: delta id while only an analysis naming no plan came: a guess, replaced by the delta's).
    record_key: str
    touched_at: AwareDatetime
    delta: DeltaPart | None = None
    analysis: AnalysisPart | None = None
    #: Its delta_impact went out (or the delta carried its own impact).
    done: bool = False

    def to_table(self) -> bytes:
        """Return the JSON bytes stored in the table and its changelog."""
        return self.__pydantic_serializer__.to_json(self, exclude_defaults=True)

    @classmethod
    def from_table(cls, raw: bytes) -> ImpactState:
        """Parse what :meth:`to_table` stored."""
        return cls.model_validate_json(raw)


def impact_key(delta_id: str) -> str:
    """Return the join key of a delta's impact window."""
    return f"{IMPACT_SPACE}:{canonical_id(delta_id)}"


def _delta_part(event: DeltaIntentEvent) -> DeltaPart:
    delta = event.payload
    return DeltaPart(
        event_id=event.event_id,
        delta_id=delta.delta_id,
        intent_id=delta.intent_id,
        plan_id=delta.plan_id,
        change_summary=delta.change_summary,
        delta_type=delta.delta_type,
        project_id=event.project_id,
        source_flow_id=flow_id(event, None),
        at=event.timestamp,
    )


def _analysis_part(event: CoreEvent) -> AnalysisPart | None:
    analysis = impact_of(event)
    if analysis is None:
        return None
    return AnalysisPart(
        event_id=event.event_id,
        delta_id=analysis.delta_id,
        plan_id=analysis.plan_id,
        impact=analysis.impact.model_dump(exclude_none=True),
        impact_score=analysis.impact_score,
        project_id=event.project_id,
        source_flow_id=flow_id(event, None),
        at=event.timestamp,
    )


def _completed(state: ImpactState, now: datetime) -> Outcome[ImpactState]:
    """Emit the sample when both halves are there; else keep what came. Two halves that
    name different projects make none: consent is decided for one project per sample."""
    delta, analysis = state.delta, state.analysis
    if delta is None or analysis is None:
        return Outcome(new_state=state)
    done = state.model_copy(update={"done": True})
    if _other_projects(delta.project_id, analysis.project_id):
        return Outcome(new_state=done)
    return Outcome(samples=[build_analysed_impact(delta, analysis, now)], new_state=done)


def _other_projects(first: str | None, second: str | None) -> bool:
    return first is not None and second is not None and canonical_id(first) != canonical_id(second)


def decide_delta(
    event: DeltaIntentEvent,
    state: ImpactState | None,
    now: datetime,
    _parked: ParkedEvent | None,
    _settled: bool,
) -> Outcome[ImpactState]:
    """Hold a delta for its analysis, or complete the analysis that came first."""
    carries = event.payload.impact is not None or event.event_type == IMPACT_ONLY_TYPE
    if state is None:
        state = ImpactState(record_key=event.payload.plan_id, touched_at=now)
    touched = {"touched_at": max(state.touched_at, now), "record_key": event.payload.plan_id}
    if state.done:
        return Outcome(new_state=state.model_copy(update=touched))
    if carries:  # its own delta_impact goes out through the plan's join
        return Outcome(new_state=state.model_copy(update={**touched, "done": True}))
    part = state.delta or _delta_part(event)
    return _completed(state.model_copy(update={**touched, "delta": part}), now)


def decide_analysis(
    event: CoreEvent,
    state: ImpactState | None,
    now: datetime,
    _parked: ParkedEvent | None,
    _settled: bool,
) -> Outcome[ImpactState]:
    """Hold an analysis for its delta, or complete the delta that came first; a core event
    of another family (or an incomplete analysis) comes to nothing."""
    part = _analysis_part(event)
    if part is None:
        return Outcome()
    if state is None:
        state = ImpactState(record_key=part.plan_id or part.delta_id, touched_at=now)
    touched = max(state.touched_at, now)
    held = state.analysis
    if state.done or (held is not None and held.at > part.at):
        return Outcome(new_state=state.model_copy(update={"touched_at": touched}))
    return _completed(state.model_copy(update={"touched_at": touched, "analysis": part}), now)


def impact_expiry(window: timedelta) -> Expire:
    """Return the ``expire`` hook of impact windows: a key quiet for ``window`` is deleted
    without a sample (what was to go out went out when its other half came)."""

    def expire(state: Any, now: datetime) -> Outcome[Any] | None:
        if not isinstance(state, ImpactState) or now - state.touched_at < window:
            return None
        return Outcome(close=True)

    return expire


def _analysis_key(event: CoreEvent) -> str | None:
    analysis = impact_of(event)
    return None if analysis is None else impact_key(analysis.delta_id)


def _delta_key(event: DeltaIntentEvent) -> str:
    return impact_key(event.payload.delta_id)


def _decode_delta(
    data: bytes | None, origin: RecordOrigin, notes: InputNotes | None
) -> DeltaIntentEvent:
    return decode_delta(data, origin=origin, notes=notes)


def analysis_route() -> Route:
    """Return the route of the core events topic: an analysis joins its delta's key; any
    other core event joins nothing and comes to nothing (counted by the decoder)."""
    return Route("core_events", decode_core_event, decide_analysis, key=_analysis_key)


def delta_route() -> Route:
    """Return the route a delta record takes into this key space (after its plan's)."""
    return Route("impacts", _decode_delta, decide_delta, key=_delta_key)
