"""``LearnPlugin``: seed 003's four hooks, and learnstream's in-process implementation.

A host plugs in its own storage or strategy by subclassing :class:`LearnPlugin` (record
feedback, store experiences, adapt, get stats); :meth:`LearnPlugin.answer` turns a learn/*
request into its response through those hooks, and :meth:`LearnPlugin.request` makes any
plugin a transport of :class:`~learnstream.streams.a2e.client.LearnAPI` (or of
:class:`~learnstream.streams.a2e.sync_client.SyncLearnAPI`), with no broker. :class:`MemoryLearn` is
learnstream's own: rolling per-skill stats (streams/a2e/stats.py) and the built-in
strategies, as of an injected clock; the Kafka worker keeps the same stats in a table.

``_adapt`` may be overridden with learnstream's signature ``(skill_name, strategy, params,
seed)`` or with seed 003's as written, ``(skill_name, strategy)``: the plugin reads the
override's signature once and calls it with the arguments it takes.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, cast

from learnstream.streams.a2e.messages import (
    RESPONSE_OF,
    AdaptResult,
    ExperienceResult,
    FeedbackResult,
    LearnAdaptRequest,
    LearnError,
    LearnExperienceRequest,
    LearnFeedbackRequest,
    LearnRequest,
    LearnResponse,
    StatsResult,
)
from learnstream.streams.a2e.models import Experience, Feedback, SkillPerformanceRecord
from learnstream.streams.a2e.payloads import AdaptQuery
from learnstream.streams.a2e.stats import DEFAULT_HALF_LIFE_S, SkillStats
from learnstream.streams.a2e.stats_view import adapt_seed, rank_skills
from learnstream.streams.a2e.strategies import StrategyError

__all__ = ["LearnPlugin", "MemoryLearn"]


class LearnPlugin(ABC):
    """The learn capability as four hooks; answer protocol messages through them."""

    name = "learn"
    priority = 5
    #: Base of the seed derived for an adapt request that gives none (stats_view.adapt_seed).
    seed = 0

    @abstractmethod
    def _record_feedback(self, feedbacks: Sequence[Feedback]) -> tuple[int, dict[str, Any]]:
        """Record feedbacks; return (accepted, details of what was derived)."""

    @abstractmethod
    def _store_experiences(self, experiences: Sequence[Experience]) -> int:
        """Store transitions for replay; return how many were stored."""

    @abstractmethod
    def _adapt(
        self, skill_name: str | None, strategy: str, params: dict[str, float], seed: int
    ) -> list[SkillPerformanceRecord]:
        """Return the skills ranked best first (raise StrategyError for an unknown one);
        ``seed`` is the request's, else one derived from its correlation id. An override may
        take only ``(skill_name, strategy)``, as seed 003 writes it."""

    @abstractmethod
    def _get_stats(self, skill_name: str | None, tool_name: str | None) -> dict[str, Any]:
        """Return ``{"skills": [records], "tools": [records]}`` for the names given."""

    def answer(self, request: LearnRequest) -> LearnResponse:
        """Return the response to ``request``; an unknown strategy is an error response."""
        model = RESPONSE_OF[request.type]
        try:
            payload = self._payload(request)
        except StrategyError as exc:
            error = LearnError(code="unknown_strategy", message=str(exc))
            return cast(
                LearnResponse, model(correlation_id=request.correlation_id, ok=False, error=error)
            )
        return cast(LearnResponse, model(correlation_id=request.correlation_id, payload=payload))

    async def request(self, message: LearnRequest) -> LearnResponse:
        """Answer ``message`` in process (the transport protocol of LearnAPI)."""
        return self.answer(message)

    def _payload(self, request: LearnRequest) -> Any:
        if isinstance(request, LearnFeedbackRequest):
            accepted, details = self._record_feedback(request.payload.feedbacks)
            return FeedbackResult(accepted=accepted, details=details)
        if isinstance(request, LearnExperienceRequest):
            return ExperienceResult(stored=self._store_experiences(request.payload.experiences))
        if isinstance(request, LearnAdaptRequest):
            adapt = request.payload
            seed = adapt_seed(adapt, self.seed, request.correlation_id)
            ranked = self._call_adapt(adapt.skill_name, adapt.strategy, dict(adapt.params), seed)
            return AdaptResult(records=ranked)
        stats = request.payload
        return StatsResult.model_validate(self._get_stats(stats.skill_name, stats.tool_name))

    def _call_adapt(
        self, skill_name: str | None, strategy: str, params: dict[str, float], seed: int
    ) -> list[SkillPerformanceRecord]:
        """Call ``_adapt`` with the arguments its signature takes: all four, or seed 003's
        ``(skill_name, strategy)``."""
        method: Callable[..., list[SkillPerformanceRecord]] = self._adapt
        if _adapt_arity(method) == 2:
            return method(skill_name, strategy)
        return method(skill_name, strategy, params, seed)


def _adapt_arity(method: Callable[..., Any]) -> int:
    """Return how many arguments an ``_adapt`` takes (4, else 2); raise TypeError if neither."""
    function = getattr(method, "__func__", None)
    if function is None:  # a callable set on the instance: no self to skip
        return _arity(method, False)
    return _arity(function, True)


@cache
def _arity(function: Callable[..., Any], bound: bool) -> int:
    signature = inspect.signature(function)
    lead: tuple[None, ...] = (None,) if bound else ()
    for count in (4, 2):
        try:
            signature.bind(*lead, *([None] * count))
        except TypeError:
            continue
        return count
    name = getattr(function, "__qualname__", repr(function))
    raise TypeError(
        f"{name}{signature} must take (skill_name, strategy, params, seed) or, as seed 003 "
        "writes it, (skill_name, strategy)"
    )


class MemoryLearn(LearnPlugin):
    """Learnstream's plugin in one process: rolling skill stats, built-in strategies."""

    def __init__(
        self, clock: Callable[[], float], half_life_s: float = DEFAULT_HALF_LIFE_S, seed: int = 0
    ) -> None:
        self.clock, self.half_life_s, self.seed = clock, half_life_s, seed
        self.stats: dict[tuple[str, str], SkillStats] = {}
        self.experiences: list[Experience] = []

    def _stats_of(self, kind: str, name: str) -> SkillStats:
        return self.stats.setdefault((kind, name), SkillStats(self.half_life_s))

    def _record_feedback(self, feedbacks: Sequence[Feedback]) -> tuple[int, dict[str, Any]]:
        at = self.clock()
        for f in feedbacks:
            for kind, name in (("skill", f.skill_name), ("tool", f.tool_name)):
                if name:
                    stats = self._stats_of(kind, name)
                    stats.add_call(f.score > 0 if f.score else None, at=at)
                    stats.add_score(f.score, at=at)
        return len(feedbacks), {}

    def _store_experiences(self, experiences: Sequence[Experience]) -> int:
        self.experiences.extend(experiences)
        return len(experiences)

    def _adapt(
        self, skill_name: str | None, strategy: str, params: dict[str, float], seed: int
    ) -> list[SkillPerformanceRecord]:
        query = AdaptQuery(skill_name=skill_name, strategy=strategy, params=params, seed=seed)
        skills = {n: s for (k, n), s in sorted(self.stats.items()) if k == "skill"}
        return rank_skills(skills, query, params, seed, self.clock())

    def _get_stats(self, skill_name: str | None, tool_name: str | None) -> dict[str, Any]:
        both = skill_name is None and tool_name is None
        out: dict[str, Any] = {}
        for kind, name in (("skill", skill_name), ("tool", tool_name)):
            found = sorted((n, s) for (k, n), s in self.stats.items() if k == kind)
            out[f"{kind}s"] = [s.record(n) for n, s in found if both or n == name]
        return out
