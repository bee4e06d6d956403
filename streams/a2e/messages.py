"""The eight learn/* messages: one envelope (type, correlation_id, payload), responses ok/error.

A request's ``correlation_id`` is the request id; its response carries the same one, so a
waiting caller finds its answer among everyone's on the shared responses topic.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from streams.a2e.models import Experience, Feedback, Name, SkillPerformanceRecord, Strategy
from streams.fields import RuntimeId

__all__ = [
    "ERROR_CODES",
    "REQUEST_TYPES",
    "RESPONSE_OF",
    "AdaptQuery",
    "AdaptResult",
    "ErrorCode",
    "ExperienceBatch",
    "ExperienceResult",
    "FeedbackBatch",
    "FeedbackResult",
    "LearnAdaptRequest",
    "LearnAdaptResponse",
    "LearnError",
    "LearnExperienceRequest",
    "LearnExperienceResponse",
    "LearnFeedbackRequest",
    "LearnFeedbackResponse",
    "LearnRequest",
    "LearnRequestMessage",
    "LearnResponse",
    "LearnResponseMessage",
    "LearnStatsRequest",
    "LearnStatsResponse",
    "StatsQuery",
    "StatsResult",
]

_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
ErrorCode = Literal["invalid_request", "unknown_strategy", "timeout", "unavailable", "internal"]
ERROR_CODES: tuple[str, ...] = ErrorCode.__args__  # type: ignore[attr-defined]


class FeedbackBatch(BaseModel):
    """learn/feedback/req payload: one or more feedbacks."""

    model_config = _STRICT
    feedbacks: list[Feedback] = Field(min_length=1, max_length=1000)


class FeedbackResult(BaseModel):
    """learn/feedback/resp payload: how many were accepted, and what the host derived."""

    model_config = _STRICT
    accepted: int = Field(ge=0)
    details: dict[str, Any] = Field(default_factory=dict)


class ExperienceBatch(BaseModel):
    """learn/experience/req payload: transitions to store for replay."""

    model_config = _STRICT
    experiences: list[Experience] = Field(min_length=1, max_length=10_000)


class ExperienceResult(BaseModel):
    """learn/experience/resp payload: how many transitions were stored."""

    model_config = _STRICT
    stored: int = Field(ge=0)


class AdaptQuery(BaseModel):
    """learn/adapt/req payload: rank skills with a strategy.

    ``params`` overrides the strategy's settings (``c``, ``epsilon``, ``temperature``);
    ``custom`` names the ``learnstream.strategies`` entry point when strategy is custom.
    """

    model_config = _STRICT
    skill_name: Name | None = None
    strategy: Strategy = "ucb1"
    params: dict[Name, float] = Field(default_factory=dict, max_length=16)
    custom: Name | None = None


class AdaptResult(BaseModel):
    """learn/adapt/resp payload: the skills, best first."""

    model_config = _STRICT
    records: list[SkillPerformanceRecord]


class StatsQuery(BaseModel):
    """learn/stats/req payload: a skill and/or tool to report (both None: all)."""

    model_config = _STRICT
    skill_name: Name | None = None
    tool_name: Name | None = None


class StatsResult(BaseModel):
    """learn/stats/resp payload: skill and tool records."""

    model_config = _STRICT
    skills: list[SkillPerformanceRecord] = Field(default_factory=list)
    tools: list[SkillPerformanceRecord] = Field(default_factory=list)


class LearnError(BaseModel):
    """Why a request failed: a code and a message that quotes no input value."""

    model_config = _STRICT
    code: ErrorCode
    message: str = Field(max_length=2000)


class _Envelope(BaseModel):
    model_config = _STRICT
    correlation_id: RuntimeId


class _Response(_Envelope):
    ok: bool = True
    error: LearnError | None = None

    @model_validator(mode="after")
    def _ok_xor_error(self) -> _Response:
        payload = getattr(self, "payload", None)
        if self.ok != (self.error is None) or self.ok != (payload is not None):
            raise ValueError("a response has ok=true and a payload, or ok=false and an error")
        return self


class LearnFeedbackRequest(_Envelope):
    """learn/feedback/req (agent to host)."""

    type: Literal["learn/feedback/req"] = "learn/feedback/req"
    payload: FeedbackBatch


class LearnFeedbackResponse(_Response):
    """learn/feedback/resp (host to agent)."""

    type: Literal["learn/feedback/resp"] = "learn/feedback/resp"
    payload: FeedbackResult | None = None


class LearnExperienceRequest(_Envelope):
    """learn/experience/req (agent to host)."""

    type: Literal["learn/experience/req"] = "learn/experience/req"
    payload: ExperienceBatch


class LearnExperienceResponse(_Response):
    """learn/experience/resp (host to agent)."""

    type: Literal["learn/experience/resp"] = "learn/experience/resp"
    payload: ExperienceResult | None = None


class LearnAdaptRequest(_Envelope):
    """learn/adapt/req (agent to host)."""

    type: Literal["learn/adapt/req"] = "learn/adapt/req"
    payload: AdaptQuery = Field(default_factory=AdaptQuery)


class LearnAdaptResponse(_Response):
    """learn/adapt/resp (host to agent)."""

    type: Literal["learn/adapt/resp"] = "learn/adapt/resp"
    payload: AdaptResult | None = None


class LearnStatsRequest(_Envelope):
    """learn/stats/req (agent to host)."""

    type: Literal["learn/stats/req"] = "learn/stats/req"
    payload: StatsQuery = Field(default_factory=StatsQuery)


class LearnStatsResponse(_Response):
    """learn/stats/resp (host to agent)."""

    type: Literal["learn/stats/resp"] = "learn/stats/resp"
    payload: StatsResult | None = None


_REQUESTS = (LearnFeedbackRequest, LearnExperienceRequest, LearnAdaptRequest, LearnStatsRequest)
REQUEST_TYPES: tuple[str, ...] = tuple(m.model_fields["type"].default for m in _REQUESTS)
LearnRequest = Annotated[
    LearnFeedbackRequest | LearnExperienceRequest | LearnAdaptRequest | LearnStatsRequest,
    Field(discriminator="type"),
]
LearnResponse = Annotated[
    LearnFeedbackResponse | LearnExperienceResponse | LearnAdaptResponse | LearnStatsResponse,
    Field(discriminator="type"),
]


class LearnRequestMessage(RootModel[LearnRequest]):
    """Any learn/*/req message (the JSON Schema of the requests topic)."""


class LearnResponseMessage(RootModel[LearnResponse]):
    """Any learn/*/resp message (the JSON Schema of the responses topic)."""


#: The response model answering each request type.
RESPONSE_OF: dict[str, type[_Response]] = {
    "learn/feedback/req": LearnFeedbackResponse,
    "learn/experience/req": LearnExperienceResponse,
    "learn/adapt/req": LearnAdaptResponse,
    "learn/stats/req": LearnStatsResponse,
}
