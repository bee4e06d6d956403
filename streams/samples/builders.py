"""Pure sample builders (docs/architecture.md §4): events + plan state in, LearningSamples out.

No I/O, no clock: the caller passes ``now``. Quality rules:

- plan_approved -> intent_resolution / confirm_decision ``good``; plan_rejected -> ``poor``
- a cancelled Confirm (it comes as plan_rejected) -> confirm_decision only, ``acceptable``, feedback
  type ``score``, ``human_feedback_label`` ``not_reviewed``: the request was withdrawn, nobody
  judged the plan, so it is no approval and no rejection (see :data:`DECISION_LABELS`)
- delta intent -> error_correction ``acceptable``
- delta impact -> delta_impact: ``poor`` if rolled back, ``acceptable`` if a compensation plan
  was required, else ``good``
- stage completed -> pipeline_outcome ``good`` (never modified) or ``acceptable`` (after a
  delta); failed -> ``poor``; skipped -> ``acceptable`` (a stage not run says nothing of how
  well the plan ran). Pending and running stages produce no sample.

``meta.quality_score`` (in [0, 1], from what the sample holds, so a replay scores the same):

- intent_resolution: rejected 0.0; approved 1.0 less 0.1 per correction the plan received
  before the decision, never below 0.5 (:func:`intent_score`)
- confirm_decision: approved 1.0, cancelled 0.5, rejected 0.0
- error_correction: 0.5 (a correction nobody reviewed)
- delta_impact: rolled back 0.0; a compensation plan required 0.5, or 0.25 when the impact
  says it was not applied; else 1.0 (:func:`impact_score`)
- pipeline_outcome: good 1.0, acceptable 0.5, poor 0.0 (:data:`LABEL_SCORES`)

Ids the MPLP learning schemas type as UUIDs carry ``canonical_id`` of the runtime's id (see
``meta.id_refs``); other ids (intent, delta, confirm, plan ids in input) stay as sent.
Where the seed-004 fields come from: :mod:`learnstream.streams.samples.parts`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from learnstream.streams.export.token_usage import token_usage
from learnstream.streams.mplp.models import (
    DecisionEvent,
    DecisionStatus,
    DeltaImpact,
    DeltaIntentEvent,
    MplpEvent,
    StageEvent,
)
from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.parts import (
    PRODUCER,
    IdRefs,
    context_state,
    impact_parts,
    intent_extras,
    intent_of,
    iso,
    plan_structure,
    present,
    sample_meta,
)
from learnstream.streams.samples.run_end import run_duration
from learnstream.streams.samples.sample import Feedback, LearningSample
from learnstream.streams.state.facts import spent_as_of
from learnstream.streams.state.plan import PlanState, StageMark

__all__ = [
    "CORRECTION_SCORE",
    "DECISION_LABELS",
    "LABEL_SCORES",
    "PRODUCER",
    "TAXONOMY_DECISIONS",
    "UNKNOWN_RISK",
    "build_confirm_decision",
    "build_delta_impact",
    "build_error_correction",
    "build_intent_resolution",
    "build_pipeline_outcome",
    "impact_quality",
    "impact_score",
    "intent_score",
    "outcome_quality",
    "risk_label",
    "taxonomy_decision",
]


def _sample(family: str, event: MplpEvent, now: datetime, **parts: Any) -> LearningSample:
    return LearningSample(
        sample_id=sample_id(family, canonical_id(event.event_id)),
        sample_family=family,
        created_at=iso(now),
        **parts,
    )


#: Per decision: (feedback type, quality label, meta.human_feedback_label). A cancellation
#: withdraws the request: the official ``human_feedback_label`` enum (approved, rejected,
#: not_reviewed) has ``not_reviewed`` for a sample nobody judged, and ``acceptable`` is the
#: feedback block's middle label, which the default KTO (good, poor) and SFT (good) exports
#: leave out, so a cancellation never trains as a verdict on the plan.
DECISION_LABELS: dict[str, tuple[str, str, str]] = {
    "approved": ("approval", "good", "approved"),
    "rejected": ("rejection", "poor", "rejected"),
    "cancelled": ("score", "acceptable", "not_reviewed"),
}


#: A label's score where the sample knows nothing finer.
LABEL_SCORES: dict[str, float] = {"good": 1.0, "acceptable": 0.5, "poor": 0.0}
#: A user's correction: applied, never reviewed, so acceptable.
CORRECTION_SCORE = LABEL_SCORES["acceptable"]


def intent_score(approved: bool, corrections: int) -> float:
    """Return the score of a resolved intent: a plan approved only after corrections was not
    right the first time, yet it stays above any rejected plan (a replan's margin >= 0.5)."""
    return (10 - min(corrections, 5)) / 10 if approved else 0.0


def _decision_feedback(event: DecisionEvent) -> Feedback:
    kind, quality, _ = DECISION_LABELS[event.decision]
    details = {"decided_by_role": event.payload.decided_by_role, "reason": event.payload.reason}
    return Feedback(source="user", type=kind, details=present(details), quality_label=quality)


def build_intent_resolution(
    event: DecisionEvent, state: PlanState, now: datetime
) -> LearningSample:
    """Build the intent_resolution sample of a decision joined with its plan."""
    plan, refs = state.snapshot.plan, IdRefs()
    intent_id, intent_text = intent_of(state)
    extra_input, extra_meta = intent_extras(state)
    approved = event.event_type == "plan_approved"
    return _sample(
        "intent_resolution",
        event,
        now,
        input={
            "intent_id": intent_id,
            "raw_request_summary": intent_text,
            "intent_text": intent_text,
            "context": state.snapshot.context or {},
            **extra_input,
        },
        output={
            "final_intent_summary": plan.objective,
            "plan_id": refs.uuid("output.plan_id", plan.plan_id),
            "plan_title": plan.title,
            "plan_step_count": len(plan.steps),
            "plan_structure": plan_structure(state),
            "resolution_quality_label": "good" if approved else "bad",
        },
        state={
            "plan_status": plan.status,
            "corrections_so_far": state.deltas,
            **context_state(state),
        },
        feedback=_decision_feedback(event),
        meta=sample_meta(
            event,
            "approved" if approved else "rejected",
            plan.plan_id,
            state,
            refs,
            score=intent_score(approved, state.deltas),
            **extra_meta,
        ),
    )


#: The taxonomy's decision of a Confirm status (learning-taxonomy.yaml, confirm_decision:
#: approve, reject, override). A cancelled request decides nothing: ``unknown``, a value the
#: official learning-sample schema gives ``user_feedback.decision`` for that.
TAXONOMY_DECISIONS: dict[DecisionStatus, str] = {
    "approved": "approve",
    "rejected": "reject",
    "cancelled": "unknown",
}
#: The risk label of a decision whose event and Confirm name none.
UNKNOWN_RISK = "unknown"


def taxonomy_decision(event: DecisionEvent) -> str:
    """Return the taxonomy's decision: ``override`` when the Confirm riding along shows an
    earlier decision the final one reverses (approved after a rejection, or the reverse: a
    second role overruled the first), else approve / reject / unknown."""
    status, confirm = event.decision, event.payload.confirm
    reverse = {"approved": "rejected", "rejected": "approved"}.get(status)
    if confirm is not None and reverse in {d.status for d in confirm.decisions[:-1]}:
        return "override"
    return TAXONOMY_DECISIONS[status]


def risk_label(event: DecisionEvent) -> str:
    """Return the risk a runtime attached to the decision (``risk_label``, or ``risk_level``
    as the delta family names it), on the payload or the Confirm; else ``unknown``."""
    for source in (event.payload, event.payload.confirm):
        extra = getattr(source, "model_extra", None) or {}
        for name in ("risk_label", "risk_level"):
            if isinstance(extra.get(name), str) and extra[name]:
                return str(extra[name])
    return UNKNOWN_RISK


def build_confirm_decision(
    event: DecisionEvent, state: PlanState | None, now: datetime
) -> LearningSample:
    """Build the confirm_decision sample of a decision on any target (the plan, if known,
    names the project), with the taxonomy's recommended fields: input ``confirm_id``,
    ``target_type``, ``target_id``, ``risk_label``; output ``decision``, ``reasoning``,
    ``decided_by_role`` (and the Confirm's own ``status``)."""
    payload = event.payload
    confirm = payload.confirm
    request: dict[str, Any] = {
        "plan_id": payload.plan_id,
        "confirm_id": payload.confirm_id,
        "target_type": event.target_type or "other",
        "target_id": confirm.target_id if confirm is not None else payload.plan_id,
        "risk_label": risk_label(event),
    }
    if confirm is not None:
        request |= {
            "requested_by_role": confirm.requested_by_role,
            "request_reason": confirm.reason,
            "decision_count": len(confirm.decisions),
        }
    return _sample(
        "confirm_decision",
        event,
        now,
        input=present(request),
        output={
            "decision": taxonomy_decision(event),
            "status": event.decision,
            "decided_by_role": payload.decided_by_role,
            "reasoning": payload.reason or "",
        },
        feedback=_decision_feedback(event),
        meta=sample_meta(
            event,
            DECISION_LABELS[event.decision][2],
            payload.plan_id,
            state,
            score=LABEL_SCORES[DECISION_LABELS[event.decision][1]],
        ),
    )


def build_error_correction(
    event: DeltaIntentEvent, state: PlanState, now: datetime
) -> LearningSample:
    """Build the error_correction sample of a delta intent joined with its plan."""
    delta = event.payload
    plan = state.snapshot.plan
    _, intent_text = intent_of(state)
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
                "steps": plan_structure(state),
            },
        },
        output={
            "action_taken": "plan_modification",
            "delta_type": delta.delta_type or "correction",
            "result": delta.changes if delta.changes is not None else delta.change_summary,
        },
        feedback=Feedback(
            source="user", type="correction", details=present(details), quality_label="acceptable"
        ),
        meta=sample_meta(event, "not_reviewed", plan.plan_id, state, score=CORRECTION_SCORE),
    )


def impact_quality(impact: DeltaImpact) -> str:
    """Return the quality label of an impact outcome."""
    if impact.rollback_used:
        return "poor"
    return "acceptable" if impact.comp_plan_required else "good"


def impact_score(impact: DeltaImpact) -> float:
    """Return the score of an impact outcome: its label's, and a compensation plan required
    but not applied below one that was."""
    quality = impact_quality(impact)
    if quality == "acceptable" and impact.comp_plan_applied is False:
        return 0.25
    return LABEL_SCORES[quality]


def build_delta_impact(event: DeltaIntentEvent, state: PlanState, now: datetime) -> LearningSample:
    """Build the delta_impact sample of a delta carrying its impact analysis."""
    delta = event.payload
    if delta.impact is None:
        raise ValueError("delta_impact needs payload.impact")
    outcome, before, extra_meta = impact_parts(delta.impact)
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
        state=before or None,
        feedback=Feedback(
            source="system",
            type="score",
            details=outcome,
            quality_label=impact_quality(delta.impact),
        ),
        meta=sample_meta(
            event,
            "not_reviewed",
            delta.plan_id,
            state,
            score=impact_score(delta.impact),
            **extra_meta,
        ),
    )


def _stage_config(event: StageEvent) -> Any:
    """Return the stage's configuration as sent: top level, else in the payload."""
    extra = event.model_extra or {}
    return extra.get("stage_config", getattr(event.payload, "stage_config", None))


def _token_usage(event: StageEvent, state: PlanState | None) -> dict[str, Any] | None:
    """Return the stage's token usage (``payload.token_usage``) in the common schema's shape:
    the counts, and ``by_agent`` as a list of ``{agent_id, role, tokens}``. Never as sent: a
    runtime may key ``by_agent`` by agent, and the anonymizer reads values, not keys, so an
    agent named by an e-mail address would leave the worker as a key. A stage that reports
    none has its plan's CostAndBudgetEvents' charges up to its time (streams/state/facts.py)."""
    reported = token_usage((event.payload.model_extra or {}).get("token_usage"))
    if reported is not None or state is None:
        return reported
    return spent_as_of(state.costs, event.timestamp)


def outcome_quality(event: StageEvent, state: PlanState | None) -> str | None:
    """Return the quality of a stage outcome, or None when the stage neither ended nor was
    skipped."""
    if event.skipped:
        return "acceptable"
    if not event.ends:
        return None
    if event.status == "failed":
        return "poor"
    return "acceptable" if state is not None and state.deltas else "good"


def _pipeline_path(event: StageEvent, state: PlanState | None) -> list[str]:
    return [event.stage] if state is None else state.pipeline_path(StageMark.of(event))


def _duration(event: StageEvent, state: PlanState | None, started_at: datetime | None) -> Any:
    """Return a stage's duration: ``payload.duration_ms`` as reported, else the ms from its
    start (``started_at``, else the start its plan's state recorded) to its end."""
    if event.payload.duration_ms is not None:
        return event.payload.duration_ms
    if started_at is None and state is not None:
        started_at = state.started(StageMark.of(event))
    return run_duration(None, started_at, event.timestamp)


def build_pipeline_outcome(
    event: StageEvent,
    state: PlanState | None,
    now: datetime,
    started_at: datetime | None = None,
) -> LearningSample:
    """Build the pipeline_outcome sample of a stage that ended or was skipped (``output.status``
    ``skipped``), joined with its plan if it names one.

    The taxonomy's recommended fields: ``input`` pipeline_id, stage_id, stage_config;
    ``output`` status, duration_ms, error_info (``payload.error``), beside ``result``, the
    stage as it was reported. A stage of a plan also carries the plan's intent (``intent_id``,
    ``intent_text``) and ``token_usage`` when the payload reports one (else the plan's cost
    events up to the stage's time): what two executions of
    one intent are compared by (streams/samples/optimizations.py). ``pipeline_path`` (the
    taxonomy's "sequence of pipeline stages traversed"): the plan's ended stages up to this
    one (``PlanState.pipeline_path``); ``[stage_id]`` for a stage that names no plan.
    ``output.duration_ms`` is ``payload.duration_ms``, else the time from the stage's
    ``running`` event (``started_at``: a stage of no plan, its pipeline's run state; else
    its plan's state) to this one; ``result`` keeps what the stage reported.
    """
    quality = outcome_quality(event, state)
    if quality is None:
        raise ValueError("only a stage that completed, failed or was skipped yields a sample")
    plan = state.snapshot.plan if state is not None else None
    intent_id, intent_text = intent_of(state) if state is not None else (None, None)
    result = {
        "stage": event.stage,
        "stage_name": event.stage_name,
        "status": event.status,
        "error": event.payload.error,
        "duration_ms": event.payload.duration_ms,
    }
    outcome = {
        "status": event.status,
        "duration_ms": _duration(event, state, started_at),
        "token_usage": _token_usage(event, state),
    }
    return _sample(
        "pipeline_outcome",
        event,
        now,
        input=present(
            {
                "plan_id": plan.plan_id if plan is not None else None,
                "intent_id": intent_id,
                "intent_text": intent_text,
                "pipeline_id": event.pipeline_id,
                "stage_id": event.stage,
                "pipeline_path": _pipeline_path(event, state),
                "stage_config": _stage_config(event),
                "objective": plan.objective if plan is not None else None,
                "plan_structure": plan_structure(state) if state is not None else None,
            }
        ),
        output={
            "result": present(result),
            **present(outcome | {"error_info": event.payload.error}),
        },
        state=(
            {"corrections_applied": state.deltas, "plan_status": plan.status}
            if state is not None and plan is not None
            else None
        ),
        feedback=Feedback(source="system", type="score", quality_label=quality),
        meta=sample_meta(
            event,
            "not_reviewed",
            plan.plan_id if plan else None,
            state,
            score=LABEL_SCORES[quality],
        ),
    )
