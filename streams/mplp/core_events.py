"""Generic MPLP core events (``events/mplp-event-core.schema.json``, topic ``mplp.core_events``,
keyed by the plan they are about, like the delta intents).

The schema types only ``event_id``, ``event_type``, ``event_family`` (one of twelve) and
``timestamp``; the payload is the runtime's. Three families are collection points of the
learning taxonomy and read here: ``impact_analysis`` (an ImpactAnalysisEvent completes the
delta_impact sample of its delta, streams/join/impacts.py), ``intent`` and ``cost_budget``
(accepted, validated and counted; nothing joins them yet). Every other family is accepted and
counted as ignored: the schema allows it on any stream, so it is no schema violation.

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

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.mplp.decode import RecordOrigin, load_json, validate_event
from learnstream.streams.mplp.fields import InputNotes, RuntimeId, text_of
from learnstream.streams.mplp.models import DeltaImpact, MplpEvent

__all__ = [
    "CORE_FAMILIES",
    "CoreEvent",
    "ImpactAnalysis",
    "core_use",
    "decode_core_event",
    "impact_of",
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
CoreUse = Literal["joined", "counted", "incomplete", "ignored"]
#: Families accepted and counted, read by no collection point yet.
_COUNTED = ("intent", "cost_budget")
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


class CoreEvent(MplpEvent):
    """One core event of any family the schema names."""

    event_family: CoreFamily
    # Parsed once, when the event is built: the decoder's count, the route's key and its
    # decider each ask for it. Private, not a field: the model keeps a record's every other
    # key (extra allowed), so a field would be one a record could fill in itself.
    _analysis: ImpactAnalysis | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Parse the impact analysis the payload carries, if the family is one."""
        self._analysis = _analysis(self.event_family, self.payload)


def impact_of(event: CoreEvent) -> ImpactAnalysis | None:
    """Return what an impact analysis says of its delta; None for another family, or an
    analysis that names no delta, or lacks the delta family's required outcome
    (parsed when the event was built; ``model_copy(update=...)`` does not parse again)."""
    return event._analysis


def core_use(event: CoreEvent) -> CoreUse:
    """Return what ``event`` comes to: a complete impact analysis joins its delta, the
    families no collection point reads yet are counted, the rest ignored."""
    if event.event_family == "impact_analysis":
        return "joined" if impact_of(event) is not None else "incomplete"
    return "counted" if event.event_family in _COUNTED else "ignored"


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
