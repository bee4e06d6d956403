"""The payloads of the learn/* messages: what each request asks and each response answers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from learnstream.streams.a2e.models import (
    Experience,
    Feedback,
    Name,
    SkillPerformanceRecord,
    Strategy,
)

__all__ = [
    "ERROR_CODES",
    "AdaptQuery",
    "AdaptResult",
    "ErrorCode",
    "ExperienceBatch",
    "ExperienceResult",
    "FeedbackBatch",
    "FeedbackResult",
    "LearnError",
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

    ``params`` overrides the strategy's settings (``c``, ``epsilon``, ``temperature``) and
    defaults (``floor``, ``alarm``; Thompson sampling's ``draw``);
    ``custom`` names the ``learnstream.strategies`` entry point when strategy is custom.
    ``seed`` fixes the ranking's randomness; without it the host derives one from the
    request's correlation id and the query, so the same request ranks the same on every
    worker and successive requests explore. ``as_of`` (epoch seconds) is when the rolling
    stats are weighed; without it the worker takes the request record's Kafka timestamp.
    """

    model_config = _STRICT
    skill_name: Name | None = None
    strategy: Strategy = "ucb1"
    params: dict[Name, float] = Field(default_factory=dict, max_length=16)
    custom: Name | None = None
    seed: int | None = Field(None, ge=0, lt=2**63)
    as_of: float | None = Field(None, ge=0)


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
