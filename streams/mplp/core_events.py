"""Generic MPLP core events (``events/mplp-event-core.schema.json``, topic ``mplp.core_events``,
keyed by the plan they are about, like the delta intents).

The schema types only ``event_id``, ``event_type``, ``event_family`` (one of twelve) and
``timestamp``; the payload is the runtime's. Three families are collection points of the
learning taxonomy and read here: ``impact_analysis`` (an ImpactAnalysisEvent completes the
delta_impact sample of its delta, streams/join/impacts.py), ``intent`` and ``cost_budget``
(an IntentEvent gives its plan's intent, a CostAndBudgetEvent its plan's tokens:
streams/state/facts.py). Every other family is accepted and counted as ignored: the
schema allows it on any stream, so it is no schema violation.

An IntentEvent or a CostAndBudgetEvent joins the plan its payload names (``plan_id``): the
official schema gives neither a plan field, and a plan names no intent, so the payload's
plan is the one key both sides share (core events are keyed by plan id, on the plan's
partition). An IntentEvent's intent is ``payload.intent_id`` (else the event's own id: the
event is the intent) and its text ``payload.intent_text`` (or ``text``,
``raw_request_summary``, ``summary``; none: the plan's objective stands for it). A
CostAndBudgetEvent's tokens are in ``payload.token_usage`` (or the payload itself):
``total_tokens`` (or ``tokens``), else ``prompt_tokens`` + ``completion_tokens``. One that
names no plan, or a cost with no total, is accepted and counted as ``incomplete``.

An impact analysis names its delta in the payload (``delta_id``; ``plan_id`` too, optionally:
the delta names its plan, the sample takes it from there) and carries the delta family's
outcome either flat in the payload or under ``payload.impact`` (the shape a delta_intent's
``impact`` has): ``actual_impact_summary`` (or
``impact_summary``, ``summary``), ``impact_scope`` (or ``scope``), and optionally
``comp_plan_required``, ``comp_plan_applied``, ``rollback_used``, ``risk_level``,
``affected_artifact_count``, ``psg_complexity_score``, ``impact_analysis_duration_ms``,
``predicted_vs_actual_accuracy``, and ``impact_score`` (or ``score``, 0 to 1: the common
schema's). One that lacks what the delta family requires, or names no delta, is accepted and
counted as ``incomplete``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.mplp.decode import RecordOrigin, load_json, validate_event
from learnstream.streams.mplp.fields import InputNotes, RuntimeId, text_of
from learnstream.streams.mplp.models import DeltaImpact, MplpEvent

__all__ = [
    "CORE_FAMILIES",
    "CoreEvent",
    "INTENT_TEXTS",
    "ImpactAnalysis",
    "StatedCost",
    "StatedIntent",
    "core_use",
    "cost_stated",
    "decode_core_event",
    "impact_of",
    "intent_stated",
]

CoreFamily = Literal[
    "import_process",
    "intent",
    "delta_intent",
    "impact_analysis",
    "compensation_plan",
    "methodology",
    "reasoning_graph",
    "pipeline_stage",
    "graph_update",
    "runtime_execution",
    "cost_budget",
    "external_integration",
]
CORE_FAMILIES: tuple[str, ...] = CoreFamily.__args__  # type: ignore[attr-defined]
#: What a core event comes to (the ``use`` label of ``learnstream_core_events_total``).
CoreUse = Literal["joined", "incomplete", "ignored"]
#: The spellings of an IntentEvent's text, in the order they are read.
INTENT_TEXTS = ("intent_text", "text", "raw_request_summary", "summary")
_ALIASES = {
    "actual_impact_summary": ("actual_impact_summary", "impact_summary", "summary"),
    "impact_scope": ("impact_scope", "scope"),
}


class ImpactAnalysis(BaseModel):
    """What an ImpactAnalysisEvent says of a delta: the ids, and the outcome in the delta
    family's fields."""

    model_config = ConfigDict(frozen=True)
    delta_id: RuntimeId
    #: The delta's plan, when the analysis names it (the delta always does).
    plan_id: RuntimeId | None = None
    impact: DeltaImpact
    #: The common schema's ``impact_score`` (0 to 1), when the analysis gives one.
    impact_score: float | None = None


def _source(payload: dict[str, Any]) -> dict[str, Any]:
    nested = payload.get("impact")
    return nested if isinstance(nested, dict) else payload


def _impact_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """Return the delta family's fields the analysis gives (nothing else of the payload)."""
    source = _source(payload)
    fields = {name: source[name] for name in DeltaImpact.model_fields if name in source}
    for name, spellings in _ALIASES.items():
        value = text_of(source, *spellings)
        if value is not None:
            fields[name] = value
    return fields


def _score(payload: dict[str, Any]) -> float | None:
    for source in (_source(payload), payload):
        for name in ("impact_score", "score"):
            value = source.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
                return float(value)
    return None


def _analysis(family: str, payload: dict[str, Any]) -> ImpactAnalysis | None:
    if family != "impact_analysis":
        return None
    try:
        return ImpactAnalysis(
            delta_id=text_of(payload, "delta_id") or "",
            plan_id=text_of(payload, "plan_id"),
            impact=DeltaImpact.model_validate(_impact_fields(payload)),
            impact_score=_score(payload),
        )
    except ValidationError:
        return None


class StatedIntent(BaseModel):
    """What an IntentEvent says of its plan's intent."""

    model_config = ConfigDict(frozen=True)
    plan_id: RuntimeId
    intent_id: str = Field(min_length=1)
    text: str | None = None


class StatedCost(BaseModel):
    """What a CostAndBudgetEvent says of its plan's tokens."""

    model_config = ConfigDict(frozen=True)
    plan_id: RuntimeId
    total_tokens: int = Field(ge=0)
    prompt_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)


def _intent(event_id: str, payload: dict[str, Any]) -> StatedIntent | None:
    try:
        return StatedIntent(
            plan_id=text_of(payload, "plan_id") or "",
            intent_id=text_of(payload, "intent_id") or event_id,
            text=text_of(payload, *INTENT_TEXTS),
        )
    except ValidationError:
        return None


def _token_count(source: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = source.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def _cost(payload: dict[str, Any]) -> StatedCost | None:
    """Parse the tokens: ``total_tokens`` (or ``tokens``), else prompt + completion."""
    usage = payload.get("token_usage")
    source = usage if isinstance(usage, dict) else payload
    prompt = _token_count(source, "prompt_tokens")
    completion = _token_count(source, "completion_tokens")
    total = _token_count(source, "total_tokens", "tokens")
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    try:
        return StatedCost(
            plan_id=text_of(payload, "plan_id") or "",
            total_tokens=total,
            prompt_tokens=prompt,
            completion_tokens=completion,
        )
    except ValidationError:
        return None


class CoreEvent(MplpEvent):
    """One core event of any family the schema names."""

    event_family: CoreFamily
    # Parsed once, when the event is built: the decoder's count, the route's key and its
    # decider each ask for it. Private, not a field: the model keeps a record's every other
    # key (extra allowed), so a field would be one a record could fill in itself.
    _analysis: ImpactAnalysis | None = PrivateAttr(default=None)
    _intent: StatedIntent | None = PrivateAttr(default=None)
    _cost: StatedCost | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Parse what the payload says, if the family is one a collection point reads."""
        self._analysis = _analysis(self.event_family, self.payload)
        if self.event_family == "intent":
            self._intent = _intent(self.event_id, self.payload)
        elif self.event_family == "cost_budget":
            self._cost = _cost(self.payload)


def impact_of(event: CoreEvent) -> ImpactAnalysis | None:
    """Return what an impact analysis says of its delta; None for another family, or an
    analysis that names no delta, or lacks the delta family's required outcome
    (parsed when the event was built; ``model_copy(update=...)`` does not parse again)."""
    return event._analysis


def intent_stated(event: CoreEvent) -> StatedIntent | None:
    """Return what an IntentEvent naming its plan says of the plan's intent (None: another
    family, or no plan named)."""
    return event._intent


def cost_stated(event: CoreEvent) -> StatedCost | None:
    """Return what a CostAndBudgetEvent naming its plan says of the plan's tokens (None:
    another family, no plan named, or no count)."""
    return event._cost


def core_use(event: CoreEvent) -> CoreUse:
    """Return what ``event`` comes to: a complete impact analysis joins its delta, an
    IntentEvent or a cost naming its plan joins the plan, the rest is ignored."""
    family = event.event_family
    if family == "impact_analysis":
        return "joined" if impact_of(event) is not None else "incomplete"
    if family in ("intent", "cost_budget"):
        found = intent_stated(event) if family == "intent" else cost_stated(event)
        return "joined" if found is not None else "incomplete"
    return "ignored"


def decode_core_event(
    data: bytes | None, origin: RecordOrigin | None = None, notes: InputNotes | None = None
) -> CoreEvent:
    """Decode a core event of any family the schema names (another is ``unknown_event_type``)."""
    obj = load_json(data)
    if isinstance(obj, dict) and obj.get("event_family") not in CORE_FAMILIES:
        raise InvalidEvent("unknown_event_type", "event_family: expected one of the core families")
    event = validate_event(CoreEvent, obj, origin, notes)
    if notes is not None:
        notes.core_events.append((event.event_family, core_use(event)))
    return event
