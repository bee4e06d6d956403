"""pipeline_outcome of a run that ended: an SA step or a runtime execution.

The taxonomy's recommended fields: ``input`` pipeline_id (the SA, or the execution),
stage_id (the step, or the executor's role or kind), stage_config (the agent's role, or the
executor's kind and role); ``output`` status, duration_ms, token_usage, error_info, and the
step's ``result`` as reported. ``duration_ms`` is the end's ``payload.duration_ms`` when it
reports one (a number >= 0), else the time from the start's event time, when the start was
seen; ``token_usage`` is ``payload.token_usage`` in the common schema's shape
(streams/export/token_usage.py); ``error_info`` is ``payload.error_info``, else
``payload.error``. The mplp-common export reads its ``execution_time_ms`` and
``token_usage`` from these (streams/export/common.py).

Labels: ``completed`` good, ``failed`` poor, ``cancelled`` acceptable (a run stopped from
outside says nothing of how well it ran; the default kto and sft exports leave acceptable
out). ``meta.quality_score`` 1.0, 0.0 and 0.5 respectively.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from learnstream.streams.export.token_usage import token_usage
from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.parts import PRODUCER, IdRefs, iso, present
from learnstream.streams.samples.sample import Feedback, LearningSample, Quality, SampleMeta

__all__ = ["RunEnd", "build_run_outcome", "run_duration"]

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
    #: What the end's payload reports (``duration_ms``, ``token_usage``), as sent.
    duration_ms: Any = None
    token_usage: Any = None


def _reported(value: Any) -> int | float | None:
    """Return a reported duration the sample can carry (a finite number >= 0), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def run_duration(reported: Any, started_at: datetime | None, ended_at: datetime) -> Any:
    """Return a run's or stage's duration in ms: the one reported, else from its start's
    event time (None: neither, or a start after the end)."""
    given = _reported(reported)
    if given is not None or started_at is None:
        return given
    measured = int((ended_at - started_at).total_seconds() * 1000)
    return measured if measured >= 0 else None


def build_run_outcome(
    end: RunEnd, started_at: datetime | None, now: datetime, role: str | None = None
) -> LearningSample:
    """Build the pipeline_outcome sample of a run that ended (its id is the end event's);
    ``started_at`` and ``role`` are what its start said, if it was seen."""
    refs = IdRefs()
    label, score = _LABELS[end.status]
    duration = run_duration(end.duration_ms, started_at, end.at)
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
                "duration_ms": duration,
                "token_usage": token_usage(end.token_usage),
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
