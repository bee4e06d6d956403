"""MPLP v1.0 input records: the events agent runtimes publish and we consume.

Only the fields learnstream reads are typed; MPLP objects may carry more (``extra="allow"``).
Ids are UUID v4 strings, timestamps ISO-8601 with a timezone, as MPLP requires.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field

__all__ = [
    "TERMINAL_PLAN_STATUSES",
    "Confirm",
    "ConsentRecord",
    "Decision",
    "DecisionEvent",
    "DecisionPayload",
    "DeltaImpact",
    "DeltaIntentEvent",
    "DeltaIntentPayload",
    "IntentRef",
    "Meta",
    "MplpEvent",
    "Plan",
    "PlanSnapshot",
    "PlanStep",
    "StageEvent",
    "StagePayload",
    "IsoTime",
    "Uuid4",
]


#: The canonical (hyphenated) form of an RFC 4122 UUID of version 4, any case.
_UUID4 = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.IGNORECASE
)


def _check_uuid4(value: str) -> str:
    # A regex, not uuid.UUID(): this runs for every id of every event and stored plan.
    if not _UUID4.fullmatch(value):
        raise ValueError(f"{value!r} is not a canonical UUID v4")
    return value.lower()  # lower case: an upper-case plan_id must still join


Uuid4 = Annotated[str, AfterValidator(_check_uuid4)]


def _iso_only(value: object) -> object:
    if isinstance(value, int | float | bool):  # pydantic would read a number as Unix time
        raise ValueError("timestamps are ISO-8601 strings with a timezone")
    return value


#: An ISO-8601 timestamp with a timezone (MPLP); numbers are refused, not read as Unix time.
IsoTime = Annotated[AwareDatetime, BeforeValidator(_iso_only)]
_OPEN = ConfigDict(extra="allow", frozen=True)

PlanStatus = Literal[
    "draft", "proposed", "approved", "in_progress", "completed", "cancelled", "failed"
]
TERMINAL_PLAN_STATUSES = frozenset({"completed", "cancelled", "failed"})


class Meta(BaseModel):
    """MPLP protocol metadata carried by every module object."""

    model_config = _OPEN
    protocolVersion: str = Field(pattern=r"^1\.\d+\.\d+$")
    source: str | None = None
    created_at: IsoTime | None = None
    updated_at: IsoTime | None = None


class PlanStep(BaseModel):
    """One step of an MPLP Plan."""

    model_config = _OPEN
    step_id: Uuid4
    description: str
    status: str = "pending"


class Plan(BaseModel):
    """MPLP Plan module object (the fields we use)."""

    model_config = _OPEN
    meta: Meta
    plan_id: Uuid4
    context_id: Uuid4
    title: str = Field(min_length=1)
    objective: str = Field(min_length=1)
    status: PlanStatus
    steps: list[PlanStep]


class IntentRef(BaseModel):
    """The user intent a plan resolves."""

    model_config = _OPEN
    intent_id: str = Field(min_length=1)
    text: str


class PlanSnapshot(BaseModel):
    """Value of ``mplp.plans``: the plan, with its project context and intent when known."""

    model_config = _OPEN
    plan: Plan
    context: dict[str, Any] | None = None
    intent: IntentRef | None = None
    project_id: Uuid4 | None = None


class Decision(BaseModel):
    """A Confirm decision record."""

    model_config = _OPEN
    decision_id: Uuid4
    status: Literal["approved", "rejected", "cancelled"]
    decided_by_role: str
    decided_at: IsoTime
    reason: str | None = None


class Confirm(BaseModel):
    """MPLP Confirm module object (HITL approval request and its decisions)."""

    model_config = _OPEN
    meta: Meta
    confirm_id: Uuid4
    target_type: Literal["context", "plan", "trace", "extension", "other"]
    target_id: Uuid4
    status: Literal["pending", "approved", "rejected", "cancelled"]
    requested_by_role: str
    requested_at: IsoTime
    reason: str | None = None
    decisions: list[Decision] = []


class MplpEvent(BaseModel):
    """MPLP observability event core."""

    model_config = _OPEN
    event_id: Uuid4
    event_family: str
    event_type: str = Field(min_length=1)
    timestamp: IsoTime
    project_id: Uuid4 | None = None
    payload: dict[str, Any]


class DecisionPayload(BaseModel):
    """Payload of ``plan_approved`` / ``plan_rejected``."""

    model_config = _OPEN
    plan_id: Uuid4
    confirm_id: Uuid4
    decided_by_role: str
    reason: str | None = None
    confirm: Confirm | None = None


class DecisionEvent(MplpEvent):
    """pipeline_stage event recording a human decision on a plan."""

    event_family: Literal["pipeline_stage"]
    event_type: Literal["plan_approved", "plan_rejected"]
    payload: DecisionPayload  # type: ignore[assignment]


class DeltaImpact(BaseModel):
    """Impact analysis attached to a delta intent (delta_impact family)."""

    model_config = _OPEN
    actual_impact_summary: str
    impact_scope: Literal["local", "module", "system", "global"]
    comp_plan_required: bool | None = None
    comp_plan_applied: bool | None = None
    rollback_used: bool | None = None
    risk_level: Literal["low", "medium", "high", "critical"] | None = None


class DeltaIntentPayload(BaseModel):
    """Payload of a delta_intent event: the user's correction of a plan."""

    model_config = _OPEN
    delta_id: Uuid4
    intent_id: str = Field(min_length=1)
    plan_id: Uuid4
    delta_type: Literal["refinement", "correction", "expansion", "reduction", "pivot"] | None = None
    change_summary: str = Field(min_length=1)
    feedback_text: str | None = None
    corrected_fields: list[str] | None = None
    changes: Any = None
    impact: DeltaImpact | None = None


class DeltaIntentEvent(MplpEvent):
    """delta_intent event."""

    event_family: Literal["delta_intent"]
    payload: DeltaIntentPayload  # type: ignore[assignment]


class StagePayload(BaseModel):
    """Payload of a pipeline stage event (execute started / completed / failed, ...)."""

    model_config = _OPEN
    plan_id: Uuid4
    stage: str = Field(min_length=1)
    status: Literal["started", "completed", "failed"]
    error: str | None = None
    duration_ms: int | None = Field(None, ge=0)


class StageEvent(MplpEvent):
    """pipeline_stage event of any stage other than the Confirm decisions."""

    event_family: Literal["pipeline_stage"]
    payload: StagePayload  # type: ignore[assignment]


class ConsentRecord(BaseModel):
    """Value of ``mplp.learning_consent``: a project's opt-in/opt-out."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    project_id: Uuid4
    enabled: bool
