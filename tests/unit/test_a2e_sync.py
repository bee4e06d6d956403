"""The synchronous learn client and the LearnPlugin hooks, in one process, no broker."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from learnstream.streams.a2e.client import LearnFailed
from learnstream.streams.a2e.models import Experience, Feedback, SkillPerformanceRecord
from learnstream.streams.a2e.plugin import LearnPlugin, MemoryLearn
from learnstream.streams.a2e.sync_client import SyncLearnAPI

T0 = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _client(plugin: LearnPlugin, opened: list[str] | None = None) -> SyncLearnAPI:
    @asynccontextmanager
    async def open_transport() -> AsyncIterator[LearnPlugin]:
        if opened is not None:
            opened.append("open")
        yield plugin
        if opened is not None:
            opened.append("closed")

    return SyncLearnAPI(open_transport, timeout=5)


def test_the_sync_client_does_what_the_seed_shows() -> None:
    clock, opened = Clock(), []
    host = MemoryLearn(clock)
    with _client(host, opened) as learn:
        resp = learn.feedback(
            polarity="POSITIVE", score=0.9, dimension="CORRECTNESS", confidence=0.95,
            prompt="What is 2+2?", response="4", source="HUMAN", comment="Correct answer",
            skill_name="my_skill",
        )  # fmt: skip
        assert resp.accepted == 1
        step = {"state": {"count": 0}, "action": {"type": "inc"}, "reward": 1.0,
                "next_state": {"count": 1}, "done": False}  # fmt: skip
        assert learn.experience([step]) == 1
        assert learn.store_experience([step, step]) == 2
        learn.reward(skill_name="other_skill", value=-1.0, correlation_id="req_123")
        records = learn.adapt(skill_name="new_skill", strategy="ucb1")  # as the seed calls it
        # The untried skill first; then the exploration floor (4 %, drawn from the unseeded
        # request's correlation id) may put either tried skill next.
        assert [r.name for r in records][0] == "new_skill"
        assert sorted(r.name for r in records[1:]) == ["my_skill", "other_skill"]
        calm = {"floor": 0.0, "alarm": 0.0}
        records = learn.adapt(skill_name="new_skill", strategy="ucb1", params=calm)
        assert [r.name for r in records] == ["new_skill", "my_skill", "other_skill"]
        skills, tools = learn.stats(skill_name="my_skill")
        assert [(s.name, s.calls_success, s.avg_score) for s in skills] == [("my_skill", 1, 0.9)]
        assert tools == []
        assert len(learn.get_stats()[0]) == 2
        with pytest.raises(LearnFailed, match="unknown_strategy"):
            learn.adapt(strategy="custom", custom="none-such")
    assert opened == ["open", "closed"]
    assert len(host.experiences) == 3
    assert not any(t.name == "learnstream-learn-api" for t in threading.enumerate())
    with pytest.raises(RuntimeError, match="closed"):
        learn.stats()
    learn.close()  # again: nothing


def test_a_transport_that_cannot_open_leaves_no_thread() -> None:
    @asynccontextmanager
    async def refuses() -> AsyncIterator[LearnPlugin]:
        raise ConnectionError("no worker there")
        yield  # pragma: no cover

    with pytest.raises(ConnectionError):
        SyncLearnAPI(refuses)
    assert not any(t.name == "learnstream-learn-api" for t in threading.enumerate())


def test_rolling_stats_follow_a_skill_that_breaks() -> None:
    clock = Clock()
    host = MemoryLearn(clock, half_life_s=600)
    with _client(host) as learn:
        for i in range(40):
            learn.reward("old", 1.0, f"a{i}")
            learn.reward("new", 1.0 if i % 4 else -1.0, f"b{i}")
        # No exploration draw (floor, alarm 0): each ranking is the rolling scores' alone,
        # where an unseeded draw could put the other skill first.
        calm = {"floor": 0.0, "alarm": 0.0}
        assert learn.adapt(strategy="ucb1", params=calm)[0].name == "old"
        clock.now += 3600  # an hour on, "old" breaks
        for i in range(10):
            learn.reward("old", -1.0, f"c{i}")
            learn.reward("new", 1.0, f"d{i}")
        ranked = learn.adapt(strategy="ucb1", params=calm)
        assert [r.name for r in ranked] == ["new", "old"]
        assert ranked[1].calls_total == 50  # exact counts stay


class FixedOrder(LearnPlugin):
    """A host's own storage and strategy: every hook its own."""

    def __init__(self) -> None:
        self.feedbacks: list[Feedback] = []

    def _record_feedback(self, feedbacks: Any) -> tuple[int, dict[str, Any]]:
        self.feedbacks.extend(feedbacks)
        return len(feedbacks), {"stored": len(self.feedbacks)}

    def _store_experiences(self, experiences: list[Experience]) -> int:
        return 0

    def _adapt(self, skill_name: Any, strategy: str, params: Any, seed: Any) -> list[Any]:
        return [SkillPerformanceRecord(name=n) for n in ("b", "a")]

    def _get_stats(self, skill_name: Any, tool_name: Any) -> dict[str, Any]:
        return {"skills": [SkillPerformanceRecord(name="b", calls_total=3)], "tools": []}


def test_a_host_plugs_in_its_own_hooks() -> None:
    with pytest.raises(TypeError, match="abstract"):
        LearnPlugin()  # type: ignore[abstract]
    plugin = FixedOrder()
    assert (plugin.name, plugin.priority) == ("learn", 5)
    with _client(plugin) as learn:
        result = learn.feedback(correlation_id="t1", polarity="NEUTRAL", score=0.0)
        assert (result.accepted, result.details) == (1, {"stored": 1})
        step = {"state": {}, "action": {}, "reward": 0.0, "next_state": {}}
        assert learn.experience([step]) == 0
        assert [r.name for r in learn.adapt()] == ["b", "a"]
        assert learn.stats()[0][0].calls_total == 3
