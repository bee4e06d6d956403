"""multi_agent_coordination: one sample per MAP session (streams/join/sessions.py).

The taxonomy's recommended fields: ``input`` session_id, coordination_mode,
participant_count, initiator_role; ``output`` total_turns, handoffs_count, outcome,
duration_ms, plus conflicts detected and resolved and what closed the session.

The outcome, and the label from it:

- ``success``: completed, every conflict resolved, every dispatched turn completed, and the
  runtime did not say otherwise. Label ``good``.
- ``partial``: completed with a conflict left unresolved or a turn never completed, or the
  runtime said ``partial``. Label ``acceptable``.
- ``failed``: the runtime said the session failed. Label ``poor``.
- A session closed by the timeout (no ``MAPSessionCompleted`` within ``sessions.timeout``) is
  ``partial`` if any turn completed, else ``failed``; labelled ``poor`` either way, since
  the runtime never said how it went.

``meta.quality_score``: 1.0 for success, 0.5 for partial, 0.0 for failed, less 0.1 per
unresolved conflict, at most 0.25 for a timed-out session, never below 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.parts import PRODUCER, IdRefs, iso, present
from learnstream.streams.samples.sample import Feedback, LearningSample, Quality, SampleMeta
from learnstream.streams.state.session import SessionState

__all__ = ["FAMILY", "SessionOutcome", "build_coordination", "session_outcome"]

FAMILY = "multi_agent_coordination"
SessionOutcome = Literal["success", "partial", "failed"]
ClosedBy = Literal["completed", "timeout"]
#: What runtimes write in ``MAPSessionCompleted``'s payload, read as the taxonomy's outcomes.
_REPORTED: dict[str, SessionOutcome] = {
    "success": "success",
    "succeeded": "success",
    "completed": "success",
    "partial": "partial",
    "failed": "failed",
    "failure": "failed",
    "error": "failed",
    "aborted": "failed",
    "cancelled": "failed",
}
_LABELS: dict[SessionOutcome, Quality] = {
    "success": "good",
    "partial": "acceptable",
    "failed": "poor",
}
_SCORES: dict[SessionOutcome, float] = {"success": 1.0, "partial": 0.5, "failed": 0.0}
TIMEOUT_SCORE_CAP = 0.25


def session_outcome(state: SessionState, closed_by: ClosedBy) -> SessionOutcome:
    """Return how the session went (module docstring)."""
    if closed_by == "timeout":
        return "partial" if state.turns_completed else "failed"
    reported = _REPORTED.get((state.reported_outcome or "").lower())
    if reported == "failed":
        return "failed"
    unresolved = state.conflicts_detected > state.conflicts_resolved
    open_turns = state.turns_dispatched > state.turns_completed
    if reported == "partial" or unresolved or open_turns:
        return "partial"
    return "success"


def _score(state: SessionState, outcome: SessionOutcome, closed_by: ClosedBy) -> float:
    unresolved = max(state.conflicts_detected - state.conflicts_resolved, 0)
    score = _SCORES[outcome] - 0.1 * unresolved
    if closed_by == "timeout":
        score = min(score, TIMEOUT_SCORE_CAP)
    return round(max(score, 0.0), 4)


def build_coordination(
    state: SessionState, last_event_id: str, closed_by: ClosedBy, now: datetime
) -> LearningSample:
    """Build a session's multi_agent_coordination sample (one per session: its id is the
    session's, so a replay writes the same sample)."""
    refs = IdRefs()
    outcome = session_outcome(state, closed_by)
    label = "poor" if closed_by == "timeout" else _LABELS[outcome]
    duration = state.last_at - state.first_at
    return LearningSample(
        sample_id=sample_id(FAMILY, canonical_id(state.session_id)),
        sample_family=FAMILY,
        created_at=iso(now),
        input=present(
            {
                "session_id": refs.uuid("input.session_id", state.session_id),
                "coordination_mode": state.coordination_mode,
                "participant_count": len(state.roles),
                "initiator_role": state.initiator_role,
            }
        ),
        output={
            "total_turns": max(state.turns_dispatched, state.turns_completed),
            "handoffs_count": state.handoffs,
            "conflicts_detected": state.conflicts_detected,
            "conflicts_resolved": state.conflicts_resolved,
            "outcome": outcome,
            "duration_ms": int(duration.total_seconds() * 1000),
            "closed_by": closed_by,
        },
        state={
            "turns_dispatched": state.turns_dispatched,
            "turns_completed": state.turns_completed,
            "broadcasts_sent": state.broadcasts_sent,
            "broadcasts_received": state.broadcasts_received,
            "session_started_seen": state.started,
        },
        feedback=Feedback(source="system", type="score", quality_label=label),
        meta=SampleMeta(
            source_event_ids=[refs.uuid("source_event_ids[0]", last_event_id)],
            project_id=refs.uuid("project_id", state.project_id) if state.project_id else None,
            human_feedback_label="not_reviewed",
            producer=PRODUCER,
            event_time=iso(state.last_at),
            source_flow_id=state.source_flow_id,
            quality_score=_score(state, outcome, closed_by),
            id_refs=dict(refs) or None,
        ),
    )
