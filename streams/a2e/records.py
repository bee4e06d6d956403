"""The A2E learn records' fields: a feedback's, Experience, SkillPerformanceRecord and the
reward sample.

Wire names are the A2E spec's. Validation errors name the field and what it accepts, never
the value (feedback text is personal data until the privacy step has run). The feedback's
seed-003 calls (``to_preference_pair``, ``to_reward_sample``) build samples, so
:class:`learnstream.streams.a2e.models.Feedback` adds them over :class:`FeedbackFields` there:
the sample builders (streams/a2e/samples.py) read these fields and import nothing above them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.config import JsonDict

from learnstream.streams.mplp.fields import RuntimeId

__all__ = [
    "DIMENSIONS",
    "POLARITIES",
    "SOURCES",
    "STRATEGIES",
    "Dimension",
    "Experience",
    "FeedbackFields",
    "Name",
    "Polarity",
    "RatedTurn",
    "RewardSample",
    "SkillPerformanceRecord",
    "Source",
    "Strategy",
]

Polarity = Literal["POSITIVE", "NEGATIVE", "NEUTRAL", "CORRECTIVE"]
Dimension = Literal["CORRECTNESS", "HELPFULNESS", "SAFETY", "TONE", "PLAN_QUALITY"]
Source = Literal["HUMAN", "ENV", "SELF"]
Strategy = Literal["ucb1", "epsilon_greedy", "softmax", "thompson", "custom"]
POLARITIES: tuple[str, ...] = Polarity.__args__  # type: ignore[attr-defined]
DIMENSIONS: tuple[str, ...] = Dimension.__args__  # type: ignore[attr-defined]
SOURCES: tuple[str, ...] = Source.__args__  # type: ignore[attr-defined]
STRATEGIES: tuple[str, ...] = Strategy.__args__  # type: ignore[attr-defined]

MAX_TEXT = 65_536
#: A skill or tool name: 1 to 128 characters without whitespace.
Name = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^\S+$")]
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT)]
_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RatedTurn(BaseModel):
    """The prompt/response pair a feedback rates."""

    model_config = _STRICT
    prompt: Text
    response: Text


#: The model validator's rule, for JSON Schema readers: CORRECTIVE needs a correction.
_CORRECTIVE_RULE: JsonDict = {
    "if": {"properties": {"polarity": {"const": "CORRECTIVE"}}, "required": ["polarity"]},
    "then": {
        "required": ["correction"],
        "properties": {"correction": {"type": "string", "minLength": 1}},
    },
}


class FeedbackFields(BaseModel):
    """The fields of one feedback signal on an agent's turn (A2E Feedback model).

    ``skill_name``/``tool_name`` are learnstream extensions: they let the score count in
    that skill's ``avg_score``. So is ``project_id``: the runtime's project, whose consent
    (the consent topic) decides whether the feedback's sample, pair and reward sample are
    kept, and whose erasure (``learnstream erase``) removes them.
    """

    model_config = ConfigDict(**_STRICT, json_schema_extra=_CORRECTIVE_RULE)
    correlation_id: RuntimeId
    polarity: Polarity
    score: float = Field(ge=-1.0, le=1.0)
    dimension: Dimension = "CORRECTNESS"
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    comment: Text | None = None
    correction: Text | None = None
    correction_span: dict[str, Any] | None = None
    source: Source = "HUMAN"
    annotator_id: Annotated[str, StringConstraints(max_length=256)] | None = None
    rated_turn: RatedTurn | None = None
    skill_name: Name | None = None
    tool_name: Name | None = None
    project_id: RuntimeId | None = None

    @model_validator(mode="after")
    def _corrective_has_correction(self) -> FeedbackFields:
        if self.polarity == "CORRECTIVE" and not self.correction:
            raise ValueError("correction is required when polarity is CORRECTIVE")
        return self


class RewardSample(BaseModel):
    """A reward-model training sample: (prompt, response) scored in [-1, 1]."""

    model_config = _STRICT
    prompt: Text
    response: Text
    reward: float = Field(ge=-1.0, le=1.0)
    dimension: Dimension
    source: Source
    correlation_id: RuntimeId


class Experience(BaseModel):
    """One RL transition for replay (A2E Experience model).

    ``project_id`` is a learnstream extension, as on :class:`Feedback`: a project that opted
    out on the consent topic has its transitions dropped.
    """

    model_config = _STRICT
    state: dict[str, Any]
    action: dict[str, Any]
    reward: float
    next_state: dict[str, Any]
    done: bool = False
    project_id: RuntimeId | None = None


class SkillPerformanceRecord(BaseModel):
    """Rolling performance of one skill or tool (A2E SkillPerformanceRecord)."""

    model_config = _STRICT
    name: Name
    calls_total: int = Field(0, ge=0)
    calls_success: int = Field(0, ge=0)
    calls_failed: int = Field(0, ge=0)
    avg_duration_ms: float = Field(0.0, ge=0.0)
    avg_score: float = Field(0.0, ge=-1.0, le=1.0)
    p95_duration_ms: float = Field(0.0, ge=0.0)
