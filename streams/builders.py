"""Pure sample builders (DESIGN §4): events + plan state in, LearningSamples out.

No I/O, no clock: the caller passes ``now``. Quality rules:

- plan_approved -> intent_resolution / confirm_decision ``good``; plan_rejected -> ``poor``
- delta intent -> error_correction ``acceptable``
- delta impact -> delta_impact: ``poor`` if rolled back, ``acceptable`` if a compensation plan
  was required, else ``good``
- stage ``execute`` completed -> pipeline_outcome ``good`` (never modified) or ``acceptable``
  (after a delta); failed -> ``poor``. Other stages produce no sample.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from streams.ids import sample_id
from streams.models import DecisionEvent, DeltaImpact, DeltaIntentEvent, MplpEvent, StageEvent
from streams.plan_state import PlanState
from streams.samples import Feedback, LearningSample, SampleMeta

__all__ = [
    "PRODUCER",
    "build_confirm_decision",
    "build_delta_impact",
    "build_error_correction",
    "build_intent_resolution",
    "build_pipeline_outcome",
    "impact_quality",
    "outcome_quality",
]

PRODUCER = "learnstream/0.1.0"


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _meta(event: MplpEvent, label: str, plan_id: str, state: PlanState | None) -> SampleMeta:
    project = event.project_id or (state.snapshot.project_id if state else None)
    return SampleMeta(
        source_event_ids=[event.event_id],
        project_id=project,
        human_feedback_label=label,
        producer=PRODUCER,
        plan_id=plan_id,
        event_time=_iso(event.timestamp),
    )


def _sample(family: str, event: MplpEvent, now: datetime, **parts: Any) -> LearningSample:
    return LearningSample(
        sample_id=sample_id(family, event.event_id),
        sample_family=family,
        created_at=_iso(now),
        **parts,
    )


def _intent(state: PlanState) -> tuple[str, str]:
    snap = state.snapshot
    if snap.intent is not None:
        return snap.intent.intent_id, snap.intent.text
    return snap.plan.plan_id, snap.plan.objective


def _plan_structure(state: PlanState) -> list[dict[str, Any]]:
    return [{"description": s.description, "status": s.status} for s in state.snapshot.plan.steps]


def _decision_feedback(event: DecisionEvent) -> Feedback:
    approved = event.event_type == "plan_approved"
    details = {"decided_by_role": event.payload.decided_by_role, "reason": event.payload.reason}
    return Feedback(
        source="user",
        type="approval" if approved else "rejection",
        details={k: v for k, v in details.items() if v is not None},
        quality_label="good" if approved else "poor",
    )


def build_intent_resolution(
    event: DecisionEvent, state: PlanState, now: datetime
) -> LearningSample:
    """Build the intent_resolution sample of a decision joined with its plan."""
    plan = state.snapshot.plan
    intent_id, intent_text = _intent(state)
    approved = event.event_type == "plan_approved"
    label = "approved" if approved else "rejected"
    return _sample(
        "intent_resolution",
        event,
        now,
        input={
            "intent_id": intent_id,
            "raw_request_summary": intent_text,
            "intent_text": intent_text,
            "context": state.snapshot.context or {},
        },
        output={
            "final_intent_summary": plan.objective,
            "plan_id": plan.plan_id,
            "plan_title": plan.title,
            "plan_step_count": len(plan.steps),
            "plan_structure": _plan_structure(state),
            "resolution_quality_label": "good" if approved else "bad",
        },
        state={"plan_status": plan.status, "corrections_so_far": state.deltas},
        feedback=_decision_feedback(event),
        meta=_meta(event, label, plan.plan_id, state),
    )


def build_confirm_decision(
    event: DecisionEvent, state: PlanState | None, now: datetime
) -> LearningSample:
    """Build the confirm_decision sample of a decision (the plan, if known, names the project)."""
    payload = event.payload
    confirm = payload.confirm
    approved = event.event_type == "plan_approved"
    request: dict[str, Any] = {"plan_id": payload.plan_id, "confirm_id": payload.confirm_id}
    if confirm is not None:
        request |= {
            "target_type": confirm.target_type,
            "requested_by_role": confirm.requested_by_role,
            "request_reason": confirm.reason,
            "decision_count": len(confirm.decisions),
        }
    return _sample(
        "confirm_decision",
        event,
        now,
        input={k: v for k, v in request.items() if v is not None},
        output={
            "decision": "approved" if approved else "rejected",
            "decided_by_role": payload.decided_by_role,
            "reason": payload.reason or "",
        },
        feedback=_decision_feedback(event),
        meta=_meta(event, "approved" if approved else "rejected", payload.plan_id, state),
    )


def build_error_correction(
    event: DeltaIntentEvent, state: PlanState, now: datetime
) -> LearningSample:
    """Build the error_correction sample of a delta intent joined with its plan."""
    delta = event.payload
    plan = state.snapshot.plan
    _, intent_text = _intent(state)
    details = {"user_feedback": delta.feedback_text, "corrected_fields": delta.corrected_fields}
    return _sample(
        "error_correction",
        event,
        now,
        input={
            "intent_id": delta.intent_id,
            "intent_text": intent_text,
            "delta_id": delta.delta_id,
            "change_summary": delta.change_summary,
            "plan_state": {
                "title": plan.title,
                "objective": plan.objective,
                "status": plan.status,
                "steps": _plan_structure(state),
            },
        },
        output={
            "action_taken": "plan_modification",
            "delta_type": delta.delta_type or "correction",
            "result": delta.changes if delta.changes is not None else delta.change_summary,
        },
        feedback=Feedback(
            source="user",
            type="correction",
            details={k: v for k, v in details.items() if v is not None},
            quality_label="acceptable",
        ),
        meta=_meta(event, "not_reviewed", plan.plan_id, state),
    )


def impact_quality(impact: DeltaImpact) -> str:
    """Return the quality label of an impact outcome."""
    if impact.rollback_used:
        return "poor"
    return "acceptable" if impact.comp_plan_required else "good"


def build_delta_impact(event: DeltaIntentEvent, state: PlanState, now: datetime) -> LearningSample:
    """Build the delta_impact sample of a delta carrying its impact analysis."""
    delta = event.payload
    if delta.impact is None:
        raise ValueError("delta_impact needs payload.impact")
    impact = delta.impact
    outcome = impact.model_dump(exclude_none=True)
    return _sample(
        "delta_impact",
        event,
        now,
        input={
            "delta_id": delta.delta_id,
            "intent_id": delta.intent_id,
            "change_summary": delta.change_summary,
            "delta_type": delta.delta_type or "correction",
        },
        output=outcome,
        state={"risk_level": impact.risk_level} if impact.risk_level else None,
        feedback=Feedback(
            source="system",
            type="score",
            details=outcome,
            quality_label=impact_quality(impact),
        ),
        meta=_meta(event, "not_reviewed", delta.plan_id, state),
    )


def outcome_quality(event: StageEvent, state: PlanState) -> str | None:
    """Return the quality of an execute outcome, or None when it yields no sample."""
    stage = event.payload
    if stage.stage != "execute" or stage.status == "started":
        return None
    if stage.status == "failed":
        return "poor"
    return "acceptable" if state.deltas else "good"


def build_pipeline_outcome(event: StageEvent, state: PlanState, now: datetime) -> LearningSample:
    """Build the pipeline_outcome sample of an execute stage joined with its plan."""
    quality = outcome_quality(event, state)
    if quality is None:
        raise ValueError(f"stage {event.payload.stage}/{event.payload.status} yields no sample")
    stage = event.payload
    plan = state.snapshot.plan
    result = {
        "stage": stage.stage,
        "status": stage.status,
        "error": stage.error,
        "duration_ms": stage.duration_ms,
    }
    return _sample(
        "pipeline_outcome",
        event,
        now,
        input={
            "plan_id": plan.plan_id,
            "objective": plan.objective,
            "plan_structure": _plan_structure(state),
        },
        output={"result": {k: v for k, v in result.items() if v is not None}},
        state={"corrections_applied": state.deltas, "plan_status": plan.status},
        feedback=Feedback(source="system", type="score", quality_label=quality),
        meta=_meta(event, "not_reviewed", plan.plan_id, state),
    )
