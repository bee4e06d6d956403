"""delta_impact completed by an ImpactAnalysisEvent (streams/join/impacts.py).

The delta says what changed (``input``: delta_id, intent_id, change_summary, delta_type), the
analysis what it did (``output``: actual_impact_summary, impact_scope, the compensation and
rollback flags, and ``impact_score`` when the analysis gives one; ``state``: risk_level,
affected_artifact_count, psg_complexity_score; ``meta``: impact_analysis_duration_ms,
predicted_vs_actual_accuracy). Label and score follow the rule of a delta carrying its impact
(streams/samples/builders.py ``impact_quality``, ``impact_score``).

The sample id is the analysis event's (the collection point's trigger), so a replay writes
the same sample whichever of the two came first.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict

from learnstream.streams.mplp.models import DeltaImpact
from learnstream.streams.samples.builders import impact_quality, impact_score
from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.parts import PRODUCER, IdRefs, impact_parts, iso, present
from learnstream.streams.samples.sample import Feedback, LearningSample, SampleMeta

__all__ = ["AnalysisPart", "DeltaPart", "build_analysed_impact"]

FAMILY = "delta_impact"


class DeltaPart(BaseModel):
    """What a delta intent contributes to its delta_impact sample."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    event_id: str
    delta_id: str
    intent_id: str
    plan_id: str
    change_summary: str
    delta_type: str | None = None
    project_id: str | None = None
    source_flow_id: str | None = None
    at: AwareDatetime


class AnalysisPart(BaseModel):
    """What an ImpactAnalysisEvent contributes: its outcome in the delta family's fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    event_id: str
    delta_id: str
    #: The plan the analysis names, if any (the sample's plan is the delta's).
    plan_id: str | None = None
    impact: dict[str, Any]
    impact_score: float | None = None
    project_id: str | None = None
    source_flow_id: str | None = None
    at: AwareDatetime


def build_analysed_impact(
    delta: DeltaPart, analysis: AnalysisPart, now: datetime
) -> LearningSample:
    """Build the delta_impact sample of ``delta`` completed by ``analysis``."""
    impact = DeltaImpact.model_validate(analysis.impact)
    output, before, extra_meta = impact_parts(impact)
    if analysis.impact_score is not None:
        output["impact_score"] = analysis.impact_score
    refs = IdRefs()
    project = delta.project_id or analysis.project_id
    return LearningSample(
        sample_id=sample_id(FAMILY, canonical_id(analysis.event_id)),
        sample_family=FAMILY,
        created_at=iso(now),
        input={
            "delta_id": delta.delta_id,
            "intent_id": delta.intent_id,
            "change_summary": delta.change_summary,
            "delta_type": delta.delta_type or "correction",
        },
        output=output,
        state=before or None,
        feedback=Feedback(
            source="system", type="score", details=output, quality_label=impact_quality(impact)
        ),
        meta=SampleMeta(
            source_event_ids=[
                refs.uuid("source_event_ids[0]", analysis.event_id),
                refs.uuid("source_event_ids[1]", delta.event_id),
            ],
            project_id=refs.uuid("project_id", project) if project else None,
            human_feedback_label="not_reviewed",
            producer=PRODUCER,
            plan_id=refs.uuid("plan_id", delta.plan_id),
            event_time=iso(max(delta.at, analysis.at)),
            source_flow_id=delta.source_flow_id or analysis.source_flow_id,
            quality_score=impact_score(impact),
            **present(extra_meta),
            id_refs=dict(refs) or None,
        ),
    )
