"""MPLP v1.0 input records: the events agent runtimes publish and we consume.

Only the fields learnstream reads are typed; MPLP objects may carry more (``extra="allow"``). Both
spellings runtimes use are accepted (docs/architecture.md §3): the official schemas' and the seeds'
(``meta.protocol_version`` / ``protocolVersion``, ``decided_by_role`` / ``decided_by``, top-level
``stage_id`` / ``stage_status`` or ``payload.stage`` / ``status``). Ids and timestamps: see
:mod:`learnstream.streams.mplp.fields`.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from learnstream.streams.mplp.confirm_fill import fill_from_confirm
from learnstream.streams.mplp.fields import IsoTime, RuntimeId, Uuid4, check_uuid4

__all__ = [
    "ID_FIELDS",
    "OUTCOME_STAGE",
    "TIME_FIELDS",
    "TERMINAL_PLAN_STATUSES",
    "Confirm",
    "ConsentRecord",
    "Count",
    "Decision",
    "DecisionEvent",
    "DecisionPayload",
    "DecisionStatus",
    "DeltaImpact",
    "DeltaIntentEvent",
    "DeltaIntentPayload",
    "IntentRef",
    "IsoTime",
    "Meta",
    "MplpEvent",
    "Plan",
    "PlanSnapshot",
    "PlanStep",
    "RuntimeId",
    "StageEvent",
    "StagePayload",
    "TargetType",
    "Uuid4",
    "check_uuid4",
]

_OPEN = ConfigDict(extra="allow", frozen=True)
_SEMVER = r"^[0-9]+\.[0-9]+\.[0-9]+$"
#: A count: an integer >= 0, given as a JSON number (no strings, no booleans).
Count = Annotated[int, Field(ge=0, strict=True)]
PlanStatus = Literal[
    "draft", "proposed", "approved", "in_progress", "completed", "cancelled", "failed"
]
TERMINAL_PLAN_STATUSES = frozenset({"completed", "cancelled", "failed"})
#: What a Confirm decision may say, and what a Confirm may be about (mplp-confirm.schema.json).
DecisionStatus = Literal["approved", "rejected", "cancelled"]
TargetType = Literal["context", "plan", "trace", "extension", "other"]
#: The pipeline stage whose completion or failure makes a pipeline_outcome sample.
OUTCOME_STAGE = "execute"
#: Names of the id fields of the inputs (the label values of the non-UUID id counter).
ID_FIELDS = (
    "event_id",
    "project_id",
    "plan_id",
    "context_id",
    "step_id",
    "confirm_id",
    "target_id",
    "decision_id",
    "delta_id",
    "pipeline_id",
)
#: Names of the timestamp fields of the inputs (the label values of the naive-time counter).
TIME_FIELDS = ("timestamp", "created_at", "updated_at", "requested_at", "decided_at")
#: Integer fields a plan snapshot's project context may carry (MPLP intent family, state).
CONTEXT_COUNTS = ("psg_node_count", "existing_plan_count")


def _either(*alternatives: dict[str, Any]) -> dict[str, Any]:
    """Return the JSON Schema extra saying one of ``alternatives`` must hold."""
    return {"anyOf": list(alternatives)}


def _needs(key: str, *, in_payload: bool = False) -> dict[str, Any]:
    """Return the JSON Schema saying ``key`` (or ``payload.key``) must be present."""
    if not in_payload:
        return {"required": [key]}
    return {"required": ["payload"], "properties": {"payload": {"required": [key]}}}


class Meta(BaseModel):
    """MPLP protocol metadata carried by every module object (either version spelling)."""

    model_config = ConfigDict(
        extra="allow",
        frozen=True,
        json_schema_extra=_either(_needs("protocol_version"), _needs("protocolVersion")),
    )
    protocol_version: str | None = Field(None, pattern=_SEMVER)
    protocolVersion: str | None = Field(None, pattern=_SEMVER)
    schema_version: str | None = Field(None, pattern=_SEMVER)
    source: str | None = None
    created_at: IsoTime | None = None
    updated_at: IsoTime | None = None

    @model_validator(mode="after")
    def _has_a_version(self) -> Meta:
        if self.protocol_version is None and self.protocolVersion is None:
            raise ValueError("meta needs protocol_version (or protocolVersion), e.g. 1.0.0")
        return self


class PlanStep(BaseModel):
    """One step of an MPLP Plan."""

    model_config = _OPEN
    step_id: RuntimeId
    description: str
    status: str = "pending"


class Plan(BaseModel):
    """MPLP Plan module object (the fields we use)."""

    model_config = _OPEN
    meta: Meta
    plan_id: RuntimeId
    context_id: RuntimeId
    title: str = Field(min_length=1)
    objective: str = Field(min_length=1)
    status: PlanStatus
    steps: list[PlanStep]


class IntentRef(BaseModel):
    """The user intent a plan resolves, with what the intent family of samples asks for."""

    model_config = _OPEN
    intent_id: str = Field(min_length=1)
    text: str
    constraints_summary: str | None = None
    dialog_turns_count: Count | None = None
    clarification_rounds: Count | None = None
    ambiguity_flags: list[str] | None = None


class PlanSnapshot(BaseModel):
    """Value of ``mplp.plans``: the plan, with its project context and intent when known.

    ``context`` is free-form, but the keys samples read from it are checked:
    ``project_phase`` (string), ``psg_node_count`` and ``existing_plan_count`` (counts).
    """

    model_config = _OPEN
    plan: Plan
    context: dict[str, Any] | None = None
    intent: IntentRef | None = None
    project_id: RuntimeId | None = None

    @field_validator("context")
    @classmethod
    def _typed_context_keys(cls, context: dict[str, Any] | None) -> dict[str, Any] | None:
        for key in CONTEXT_COUNTS:
            value = (context or {}).get(key)
            if value is not None and (type(value) is not int or value < 0):
                raise ValueError(f"context.{key} must be an integer >= 0")
        phase = (context or {}).get("project_phase")
        if phase is not None and not isinstance(phase, str):
            raise ValueError("context.project_phase must be a string")
        return context


class Decision(BaseModel):
    """A Confirm decision record."""

    model_config = _OPEN
    decision_id: RuntimeId
    status: DecisionStatus
    decided_by_role: str
    decided_at: IsoTime
    reason: str | None = None


class Confirm(BaseModel):
    """MPLP Confirm module object (HITL approval request and its decisions).

    ``meta`` is optional here: seed 002's Python SDK model has none (seed 002 §6.2, in
    docs/seeds.md).
    """

    model_config = _OPEN
    meta: Meta | None = None
    confirm_id: RuntimeId
    target_type: TargetType
    target_id: RuntimeId
    status: Literal["pending", "approved", "rejected", "cancelled"]
    requested_by_role: str
    requested_at: IsoTime
    reason: str | None = None
    decisions: list[Decision] = []


class MplpEvent(BaseModel):
    """MPLP observability event core (``events/mplp-event-core.schema.json``)."""

    model_config = _OPEN
    event_id: RuntimeId
    event_family: str
    event_type: str  # the official schema allows any string, the empty one too
    timestamp: IsoTime
    project_id: RuntimeId | None = None
    payload: dict[str, Any] = {}

    @property
    def join_plan_id(self) -> str | None:
        """Return the plan whose state the event is joined with (None: it joins none)."""
        plan_id = getattr(self.payload, "plan_id", None)
        return plan_id if isinstance(plan_id, str) else None


class DecisionPayload(BaseModel):
    """Payload of ``plan_approved`` / ``plan_rejected``.

    What the payload leaves out is taken from the Confirm riding along (``confirm``):
    ``plan_id`` from its target (a plan), ``confirm_id``, and ``decided_by_role`` and
    ``reason`` from its last decision, the one that set its status (seed 002 §4.3; §5 takes the
    reason from the Confirm too, from its first decision). ``decided_by`` (§4.3) is read
    as ``decided_by_role`` (architecture §3). ``plan_id`` may be absent: seed 002 §4.3 sends
    ``target.plan_id`` for every target, which a context or an extension does not have.
    """

    # Its JSON Schema lists nothing as required: the Confirm may supply every field.
    model_config = ConfigDict(
        extra="allow", frozen=True, json_schema_extra=lambda schema: schema.pop("required", None)
    )
    plan_id: RuntimeId | None = None
    confirm_id: RuntimeId
    decided_by_role: str
    reason: str | None = None
    confirm: Confirm | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill(cls, data: Any) -> Any:
        return fill_from_confirm(data)


class DecisionEvent(MplpEvent):
    """pipeline_stage event recording a human Confirm decision, on a plan or another target.

    A cancellation has no event type of its own (seed 002 §4.3 sends it as ``plan_rejected``):
    only the Confirm riding along tells it, by its status ``cancelled``.
    """

    event_family: Literal["pipeline_stage"]
    event_type: Literal["plan_approved", "plan_rejected"]
    payload: DecisionPayload  # type: ignore[assignment]

    @property
    def decision(self) -> DecisionStatus:
        """Return what was decided: the Confirm's ``cancelled``, else the event type's."""
        confirm = self.payload.confirm
        if confirm is not None and confirm.status == "cancelled":
            return "cancelled"
        return "approved" if self.event_type == "plan_approved" else "rejected"

    @property
    def target_type(self) -> TargetType | None:
        """Return the kind of resource decided on: the Confirm's target, else ``plan`` when
        the payload names a plan (None: unknown, and not a plan)."""
        if self.payload.confirm is not None:
            return self.payload.confirm.target_type
        return "plan" if self.payload.plan_id is not None else None

    @property
    def judges_plan(self) -> bool:
        """Tell whether it approves or rejects a plan: only that resolves the plan's intent."""
        return self.target_type == "plan" and self.decision != "cancelled"

    @property
    def join_plan_id(self) -> str | None:
        """Return the plan it joins (a decision on a plan), None for any other target."""
        return self.payload.plan_id if self.target_type == "plan" else None


class DeltaImpact(BaseModel):
    """Impact analysis attached to a delta intent (delta_impact family).

    Besides the outcome, it may carry the family's state (``affected_artifact_count``,
    ``risk_level``, ``psg_complexity_score``) and meta (``impact_analysis_duration_ms``,
    ``predicted_vs_actual_accuracy``) fields, under those names.
    """

    model_config = _OPEN
    actual_impact_summary: str
    impact_scope: Literal["local", "module", "system", "global"]
    comp_plan_required: bool | None = None
    comp_plan_applied: bool | None = None
    rollback_used: bool | None = None
    risk_level: Literal["low", "medium", "high", "critical"] | None = None
    affected_artifact_count: Count | None = None
    psg_complexity_score: float | None = Field(None, ge=0, strict=True, allow_inf_nan=False)
    impact_analysis_duration_ms: Count | None = None
    predicted_vs_actual_accuracy: Literal["accurate", "underestimated", "overestimated"] | None = (
        None
    )


class DeltaIntentPayload(BaseModel):
    """Payload of a delta_intent event: the user's correction of a plan."""

    model_config = _OPEN
    delta_id: RuntimeId
    intent_id: str = Field(min_length=1)
    plan_id: RuntimeId
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


StageStatus = Literal["pending", "running", "completed", "failed", "skipped"]


#: What ``payload.status`` may say (``started`` is this form's older ``running``).
PAYLOAD_STATUSES = ("pending", "started", "running", "completed", "failed", "skipped")


class StagePayload(BaseModel):
    """Payload of a pipeline stage event: the plan id, and today's stage/status form.

    The payload is the runtime's (the official schema leaves it open), so only ``plan_id``
    is typed here; ``stage`` / ``status`` are checked by :class:`StageEvent` when the
    official fields are absent, ``error`` / ``duration_ms`` go into the sample as sent.
    """

    model_config = _OPEN
    plan_id: RuntimeId | None = None
    stage: Any = None
    status: Any = None
    error: Any = None
    duration_ms: Any = None
    #: The skill and tool the stage ran, if any: their A2E stats count its outcome.
    skill_name: str | None = Field(None, min_length=1, max_length=128)
    tool_name: str | None = Field(None, min_length=1, max_length=128)


class StageEvent(MplpEvent):
    """pipeline_stage event of any stage other than the Confirm decisions.

    Official form (``events/mplp-pipeline-stage-event.schema.json``): top-level
    ``pipeline_id``, ``stage_id``, ``stage_status``, ``stage_name`` (and ``stage_order``). Earlier
    form: ``payload.stage`` / ``payload.status``. The official fields win when both are set.
    The plan id is ``payload.plan_id`` (architecture §3); a stage that names none is a pipeline's
    outcome without a plan (the official schema does not require one).
    """

    model_config = ConfigDict(
        extra="allow",
        frozen=True,
        json_schema_extra={
            "allOf": [
                _either(_needs("stage_id"), _needs("stage", in_payload=True)),
                _either(_needs("stage_status"), _needs("status", in_payload=True)),
            ]
        },
    )
    event_family: Literal["pipeline_stage"]
    pipeline_id: RuntimeId | None = None
    stage_id: str | None = None
    stage_name: str | None = None
    stage_status: StageStatus | None = None
    # stage_order is kept as sent, untyped: integers past 64 bits reach us as floats.
    payload: StagePayload = StagePayload()  # type: ignore[assignment]

    @model_validator(mode="after")
    def _has_stage_and_status(self) -> StageEvent:
        legacy = self.payload
        if self.stage_id is None and not (isinstance(legacy.stage, str) and legacy.stage):
            raise ValueError("stage_id (or payload.stage, a non-empty string) is required")
        if self.stage_status is None and legacy.status not in PAYLOAD_STATUSES:
            raise ValueError(
                "stage_status (or payload.status: pending, started, running, completed, "
                "failed or skipped) is required"
            )
        return self

    @property
    def stage(self) -> str:
        """Return the stage id (official field first)."""
        return self.stage_id if self.stage_id is not None else str(self.payload.stage)

    @property
    def status(self) -> str:
        """Return the stage status (official field first)."""
        return self.stage_status if self.stage_status is not None else str(self.payload.status)

    @property
    def ends(self) -> bool:
        """Tell whether the stage ran to an end (completed or failed): a pipeline_outcome, if
        its stage is collected (``outcomes.stages``), and a stage of its plan's path."""
        return self.status in ("completed", "failed")

    @property
    def starts(self) -> bool:
        """Tell whether this says the stage started (``running``; the payload form's
        ``started`` too): an end that reports no duration runs from it."""
        return self.status in ("running", "started")

    @property
    def skipped(self) -> bool:
        """Tell whether the stage was skipped (a status of the official schema): a
        pipeline_outcome too, if collected, but no stage its plan ran (not in its path)."""
        return self.status == "skipped"

    @property
    def is_outcome(self) -> bool:
        """Tell whether this is the plan's execution ending (the ``execute`` stage): it must
        name its plan, and its outcome counts for the plan's skill stats."""
        return self.stage == OUTCOME_STAGE and self.ends


class ConsentRecord(BaseModel):
    """Value of ``mplp.learning_consent``: a project's opt-in/opt-out."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    project_id: RuntimeId
    enabled: StrictBool  # "no" or 0 must not read as a decision either way
