"""The LearningSample we write: MPLP core fields + the Learning & Feedback ``feedback`` block.

Free-form parts (``input``, ``output``, ``state``) are plain JSON objects; what each family
must put in them is checked by :func:`family_errors` (the MPLP family schemas).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from learnstream.streams.mplp.fields import Uuid4

__all__ = [
    "FAMILIES",
    "PROTOCOL_VERSION",
    "QUALITIES",
    "Family",
    "Feedback",
    "LearningSample",
    "Quality",
    "SampleMeta",
    "family_errors",
]

PROTOCOL_VERSION = "1.0.0"
Family = Literal[
    "intent_resolution",
    "confirm_decision",
    "error_correction",
    "delta_impact",
    "pipeline_outcome",
    "dialog_response",
    "multi_agent_coordination",
    "graph_evolution",
    "plan_optimization",
]
Quality = Literal["good", "acceptable", "poor"]
FAMILIES: tuple[str, ...] = Family.__args__  # type: ignore[attr-defined]
QUALITIES: tuple[str, ...] = Quality.__args__  # type: ignore[attr-defined]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class Feedback(BaseModel):
    """The feedback block of the Learning & Feedback spec (§3)."""

    model_config = _STRICT
    source: Literal["user", "system"]
    type: Literal["approval", "rejection", "correction", "score"]
    details: Any = None
    quality_label: Quality


class SampleMeta(BaseModel):
    """Provenance: source events, project, human label, producer, and the family's extras.

    Ids are UUIDs (``learnstream.streams.samples.ids.canonical_id`` of the runtime's id);
    ``id_refs`` maps the path of each one that stands in for a non-UUID runtime id (``plan_id``,
    ``source_event_ids[0]``, ``output.plan_id``) to the id the runtime sent.
    ``clarification_rounds`` / ``ambiguity_flags`` are the intent family's meta,
    ``impact_analysis_duration_ms`` / ``predicted_vs_actual_accuracy`` the delta family's.
    """

    model_config = _STRICT
    source_event_ids: list[Uuid4] = Field(min_length=1)
    project_id: Uuid4 | None = None
    human_feedback_label: Literal["approved", "rejected", "not_reviewed"]
    producer: str
    protocol_version: str = PROTOCOL_VERSION
    plan_id: Uuid4 | None = None
    event_time: str | None = None
    source_flow_id: str | None = None
    quality_score: float | None = Field(None, ge=0.0, le=1.0)
    clarification_rounds: int | None = Field(None, ge=0)
    ambiguity_flags: list[str] | None = None
    impact_analysis_duration_ms: int | None = Field(None, ge=0)
    predicted_vs_actual_accuracy: Literal["accurate", "underestimated", "overestimated"] | None = (
        None
    )
    id_refs: dict[str, str] | None = None


class LearningSample(BaseModel):
    """An MPLP LearningSample, core-schema valid, with feedback."""

    model_config = _STRICT
    sample_id: Uuid4
    sample_family: Family
    created_at: str = Field(
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"
    )
    input: dict[str, Any]
    output: dict[str, Any]
    state: dict[str, Any] | None = None
    feedback: Feedback
    meta: SampleMeta

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form: JSON types only, absent optionals left out."""
        return self.model_dump(mode="json", exclude_none=True)


_REQUIRED: dict[str, tuple[tuple[str, str, type], ...]] = {
    "intent_resolution": (
        ("input", "intent_id", str),
        ("input", "raw_request_summary", str),
        ("output", "final_intent_summary", str),
    ),
    "delta_impact": (
        ("input", "delta_id", str),
        ("input", "intent_id", str),
        ("input", "change_summary", str),
        ("output", "actual_impact_summary", str),
        ("output", "impact_scope", str),
    ),
}


def family_errors(sample: LearningSample) -> list[str]:
    """Return what the sample's MPLP family schema finds missing (empty when valid)."""
    errors = []
    for section, key, kind in _REQUIRED.get(sample.sample_family, ()):
        value = getattr(sample, section).get(key)
        if not isinstance(value, kind) or (isinstance(value, str) and not value):
            errors.append(f"{section}.{key} must be a non-empty {kind.__name__}")
    return errors
