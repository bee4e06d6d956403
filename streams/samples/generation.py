"""plan_generation: the intent_resolution sample of a plan an agent generated and evaluated.

The learning taxonomy's ``plan_generation`` point (HIGH) turns an ``SAPlanEvaluated`` event
(``events/mplp-sa-event.schema.json``: "plan parsed, steps ordered") into an
``intent_resolution`` sample: the intent as input, the plan the agent made of it as output.
It is joined with the plan's state by ``plan_id`` (the plan holds the intent and the steps);
an event that names no plan makes none.

Nobody judged the plan yet, so the sample is the system's, not a verdict:
``feedback.source`` is ``system`` (that is how ``collection_point`` tells it from the
intent_resolution of a Confirm decision), ``output.resolution_quality_label`` is
``unknown`` (so it makes no replan pair), ``meta.human_feedback_label`` is ``not_reviewed``.
Its label is ``acceptable`` (score 0.5), or ``poor`` (0.0) when the evaluation says the plan
failed it: ``payload.status`` / ``payload.result`` one of ``FAILED_VERDICTS``, or
``payload.valid`` / ``payload.passed`` false. The official payload is open; nothing else is
read from it but a flow id, and only those four fields are copied into the sample.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from learnstream.streams.mplp.run_events import SaEvent
from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.parts import (
    IdRefs,
    context_state,
    intent_extras,
    intent_of,
    iso,
    plan_structure,
    sample_meta,
)
from learnstream.streams.samples.sample import Feedback, LearningSample
from learnstream.streams.state.plan import PlanState

__all__ = ["FAILED_VERDICTS", "VERDICT_FIELDS", "build_plan_generation", "evaluation_quality"]

FAMILY = "intent_resolution"
#: What an evaluation's ``status`` or ``result`` says of a plan it refused.
FAILED_VERDICTS = frozenset({"failed", "invalid", "rejected", "error"})
#: The payload fields a sample carries (in ``feedback.details.evaluation``): the verdict only;
#: the rest of the open payload, keys included, stays out.
VERDICT_FIELDS = ("status", "result", "valid", "passed")
_SCORES = {"acceptable": 0.5, "poor": 0.0}


def evaluation_quality(payload: dict[str, Any]) -> str:
    """Return ``poor`` if the evaluation refused the plan, else ``acceptable``."""
    for name in ("status", "result"):
        value = payload.get(name)
        if isinstance(value, str) and value.lower() in FAILED_VERDICTS:
            return "poor"
    if any(payload.get(name) is False for name in ("valid", "passed")):
        return "poor"
    return "acceptable"


def build_plan_generation(event: SaEvent, state: PlanState, now: datetime) -> LearningSample:
    """Build the intent_resolution sample of ``event`` (SAPlanEvaluated) and its plan.

    It has no ``corrections_so_far``: a decision waits until the corrections input is read
    past its time to count them, an evaluation does not, so the count would differ between
    a run and its replay."""
    plan, refs = state.snapshot.plan, IdRefs()
    intent_id, intent_text = intent_of(state)
    extra_input, extra_meta = intent_extras(state)
    quality = evaluation_quality(event.payload)
    verdict = {name: event.payload[name] for name in VERDICT_FIELDS if name in event.payload}
    details = {"sa_id": event.sa_id, "event_type": event.event_type, "evaluation": verdict}
    return LearningSample(
        sample_id=sample_id(FAMILY, canonical_id(event.event_id)),
        sample_family=FAMILY,
        created_at=iso(now),
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
            "resolution_quality_label": "unknown",
        },
        state={"plan_status": plan.status, **context_state(state)},
        feedback=Feedback(source="system", type="score", details=details, quality_label=quality),
        # an SA event has every field sample_meta reads (ids, time, project, payload)
        meta=sample_meta(
            event,  # type: ignore[arg-type]
            "not_reviewed",
            plan.plan_id,
            state,
            refs,
            score=_SCORES[quality],
            **extra_meta,
        ),
    )
