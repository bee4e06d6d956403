"""What the builders read from inputs: ids as samples carry them, meta, intent and state.

Where each seed-004 field comes from (absent in the input: absent in the sample):

- intent input ``intent_id``, ``raw_request_summary``: the snapshot's ``intent``, else the
  plan's latest IntentEvent, else the plan itself (``intent_of``);
- intent input ``constraints_summary``, ``dialog_turns_count`` and intent meta
  ``clarification_rounds``, ``ambiguity_flags``: the snapshot's ``intent`` object;
- intent state ``project_phase``, ``psg_node_count``, ``existing_plan_count``: the
  snapshot's ``context`` object (the project context);
- intent output ``plan_id`` (canonical), ``plan_step_count``: the plan;
- delta state ``affected_artifact_count``, ``risk_level``, ``psg_complexity_score`` and
  delta meta ``impact_analysis_duration_ms``, ``predicted_vs_actual_accuracy``: the delta
  payload's ``impact`` object, under those names.
- meta ``source_flow_id`` (the flow that made the event, e.g. ``FLOW-01``, ``SA-01``,
  ``MAP-01``): ``source_flow_id`` or ``flow_id``, a non-empty string, in the event's payload,
  else at the event's top level, else in the plan's ``meta``, else in the project context.
  The official event, plan and context schemas define no such field, so it comes only from
  runtimes that add one; none found, none written.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from learnstream.streams.mplp.models import DeltaImpact, MplpEvent
from learnstream.streams.samples.ids import canonical_id, is_uuid4, objective_intent_id
from learnstream.streams.samples.sample import SampleMeta
from learnstream.streams.state.plan import PlanState

__all__ = [
    "IMPACT_META",
    "IMPACT_STATE",
    "PRODUCER",
    "IdRefs",
    "context_state",
    "flow_id",
    "impact_parts",
    "intent_extras",
    "intent_of",
    "iso",
    "plan_structure",
    "present",
    "sample_meta",
]

PRODUCER = "learnstream/0.1.0"
INTENT_INPUT = ("constraints_summary", "dialog_turns_count")
INTENT_META = ("clarification_rounds", "ambiguity_flags")
CONTEXT_STATE = ("project_phase", "psg_node_count", "existing_plan_count")
IMPACT_STATE = ("affected_artifact_count", "risk_level", "psg_complexity_score")
IMPACT_META = ("impact_analysis_duration_ms", "predicted_vs_actual_accuracy")
FLOW_KEYS = ("source_flow_id", "flow_id")


class IdRefs(dict[str, str]):
    """The runtime's own ids behind the UUIDs a sample carries, by field path."""

    def uuid(self, path: str, runtime_id: str) -> str:
        """Return the UUID a sample carries at ``path`` for ``runtime_id`` (noted if a stand-in)."""
        if not is_uuid4(runtime_id):
            self[path] = runtime_id
        return canonical_id(runtime_id)


def iso(moment: datetime) -> str:
    """Return an ISO-8601 string, UTC written as ``Z``."""
    return moment.isoformat().replace("+00:00", "Z")


def present(values: dict[str, Any]) -> dict[str, Any]:
    """Return ``values`` without the None ones."""
    return {k: v for k, v in values.items() if v is not None}


def sample_meta(
    event: MplpEvent,
    label: str,
    plan_id: str | None,
    state: PlanState | None,
    refs: IdRefs | None = None,
    *,
    score: float,
    **extra: Any,
) -> SampleMeta:
    """Return a sample's meta: canonical ids (the project from the event, else the plan;
    no ``plan_id`` for a decision on another target that names no plan), the flow the
    event names, and the family's ``score``."""
    refs = refs if refs is not None else IdRefs()
    project = event.project_id or (state.snapshot.project_id if state else None)
    return SampleMeta(
        source_event_ids=[refs.uuid("source_event_ids[0]", event.event_id)],
        project_id=refs.uuid("project_id", project) if project else None,
        human_feedback_label=label,
        producer=PRODUCER,
        plan_id=refs.uuid("plan_id", plan_id) if plan_id else None,
        event_time=iso(event.timestamp),
        source_flow_id=flow_id(event, state),
        quality_score=score,
        **present(extra),
        id_refs=dict(refs) or None,
    )


def _fields(values: object) -> Mapping[str, Any]:
    """Return a payload's fields: a dict as sent, or what a model kept beyond its own."""
    if isinstance(values, Mapping):
        return values
    extra = getattr(values, "model_extra", None)
    return extra if isinstance(extra, Mapping) else {}


def flow_id(event: MplpEvent, state: PlanState | None) -> str | None:
    """Return the flow id the event (else its plan) names, or None: never made up."""
    sources = [_fields(event.payload), _fields(event)]
    if state is not None:
        sources += [_fields(state.snapshot.plan.meta), state.snapshot.context or {}]
    for source in sources:
        for key in FLOW_KEYS:
            value = source.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def intent_of(state: PlanState) -> tuple[str, str]:
    """Return (intent id, intent text): the snapshot's intent, else the one its latest
    IntentEvent stated (streams/state/facts.py), else the plan's own.

    Without either the plan stands for its intent: the id its context and normalized
    objective derive (``objective_intent_id``: two plans of one context with one objective
    resolve one intent, so their executions compare), and seed 000's ``original_intent``
    when the plan carries one, else its objective. An IntentEvent without a text takes that
    text too.
    """
    snap = state.snapshot
    if snap.intent is not None:
        return snap.intent.intent_id, snap.intent.text
    original = (snap.plan.model_extra or {}).get("original_intent")
    text = original if isinstance(original, str) and original else snap.plan.objective
    if state.intent is not None:
        return state.intent.intent_id, state.intent.text or text
    return objective_intent_id(snap.plan.context_id, snap.plan.objective), text


def intent_extras(state: PlanState) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the intent's (input fields, meta fields) of the intent family."""
    intent = state.snapshot.intent
    if intent is None:
        return {}, {}
    fields = intent.model_dump(include=set(INTENT_INPUT) | set(INTENT_META), exclude_none=True)
    return (
        {k: v for k, v in fields.items() if k in INTENT_INPUT},
        {k: v for k, v in fields.items() if k in INTENT_META},
    )


def context_state(state: PlanState) -> dict[str, Any]:
    """Return the intent family's state fields found in the project context."""
    context = state.snapshot.context or {}
    return present({key: context.get(key) for key in CONTEXT_STATE})


def impact_parts(impact: DeltaImpact) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Split an impact analysis into the delta family's (output, state, meta) fields."""
    fields = impact.model_dump(exclude_none=True)
    state = {k: fields.pop(k) for k in IMPACT_STATE if k in fields}
    meta = {k: fields.pop(k) for k in IMPACT_META if k in fields}
    return fields, state, meta


def plan_structure(state: PlanState) -> list[dict[str, Any]]:
    """Return the plan's steps as (description, status) pairs."""
    return [{"description": s.description, "status": s.status} for s in state.snapshot.plan.steps]
