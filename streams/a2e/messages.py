"""The eight learn/* messages: one envelope (type, correlation_id, payload), responses ok/error.

The payload models live in :mod:`learnstream.streams.a2e.payloads` and are re-exported here.

A request's ``correlation_id`` is the request id; its response carries the same one, so a
waiting caller finds its answer among everyone's on the shared responses topic.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from learnstream.streams.a2e.payloads import (
    ERROR_CODES,
    AdaptQuery,
    AdaptResult,
    ErrorCode,
    ExperienceBatch,
    ExperienceResult,
    FeedbackBatch,
    FeedbackResult,
    LearnError,
    StatsQuery,
    StatsResult,
)
from learnstream.streams.mplp.fields import RuntimeId

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
