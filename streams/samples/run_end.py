"""pipeline_outcome of a run that ended: an SA step or a runtime execution.

The taxonomy's recommended fields: ``input`` pipeline_id (the SA, or the execution),
stage_id (the step, or the executor's role or kind), stage_config (the agent's role, or the
executor's kind and role); ``output`` status, duration_ms (from the start's event time, when
the start was seen), error_info, and the step's ``result`` as reported.

Labels: ``completed`` good, ``failed`` poor, ``cancelled`` acceptable (a run stopped from
outside says nothing of how well it ran; the default kto and sft exports leave acceptable
out). ``meta.quality_score`` 1.0, 0.0 and 0.5 respectively.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.parts import PRODUCER, IdRefs, iso, present
from learnstream.streams.samples.sample import Feedback, LearningSample, Quality, SampleMeta

__all__ = ["RunEnd", "build_run_outcome"]

_LABELS: dict[str, tuple[Quality, float]] = {
    "completed": ("good", 1.0),
    "failed": ("poor", 0.0),
    "cancelled": ("acceptable", 0.5),
}


@dataclass(frozen=True)
class RunEnd:
    """The event that ended a run, as the sample needs it."""

    status: Literal["completed", "failed", "cancelled"]
    event_id: str
    at: datetime
    pipeline_id: str
    stage_id: str | None
    #: ``sa_step`` or ``runtime_execution``: which collection point made the sample.
    kind: str
    plan_id: str | None = None
    project_id: str | None = None
    flow_id: str | None = None
    error: Any = None
    result: Any = None
    config: dict[str, Any] = field(default_factory=dict)
    #: The ``config`` field that names the role (filled from the start when the end lacks it).
    role_field: str = "role"


def build_run_outcome(
    end: RunEnd, started_at: datetime | None, now: datetime, role: str | None = None
) -> LearningSample:
    """Build the pipeline_outcome sample of a run that ended (its id is the end event's);
    ``started_at`` and ``role`` are what its start said, if it was seen."""
    refs = IdRefs()
    label, score = _LABELS[end.status]
    duration = None if started_at is None else int((end.at - started_at).total_seconds() * 1000)
    config = present({**end.config, end.role_field: end.config.get(end.role_field) or role})
    return LearningSample(
        sample_id=sample_id("pipeline_outcome", canonical_id(end.event_id)),
        sample_family="pipeline_outcome",
        created_at=iso(now),
        input=present(
            {
                "pipeline_id": end.pipeline_id,
                "stage_id": end.stage_id,
                "stage_config": config or None,
                "source": end.kind,
            }
        ),
        output=present(
            {
                "status": end.status,
                "duration_ms": duration if duration is None or duration >= 0 else None,
                "error_info": end.error,
                "result": end.result,
            }
        ),
        feedback=Feedback(source="system", type="score", quality_label=label),
        meta=SampleMeta(
            source_event_ids=[refs.uuid("source_event_ids[0]", end.event_id)],
            project_id=refs.uuid("project_id", end.project_id) if end.project_id else None,
            human_feedback_label="not_reviewed",
            producer=PRODUCER,
            plan_id=refs.uuid("plan_id", end.plan_id) if end.plan_id else None,
            event_time=iso(end.at),
            source_flow_id=end.flow_id,
            quality_score=score,
            id_refs=dict(refs) or None,
        ),
    )
