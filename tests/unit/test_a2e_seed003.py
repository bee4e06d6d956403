"""Seed 003's calls as written: Feedback's conversions, a plugin's two-argument ``_adapt``,
and every built-in strategy on plain cumulative records (issue 44, point 6).

The seed is not in the repository (docs/seeds.md digests it): the few lines of its code a
test needs are copied here, as the seed writes them, and marked so.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks import bandits
from learnstream.streams.a2e.messages import LearnAdaptRequest
from learnstream.streams.a2e.models import (
    Feedback,
    RatedTurn,
    SkillPerformanceRecord,
)
from learnstream.streams.a2e.payloads import AdaptQuery
from learnstream.streams.a2e.plugin import LearnPlugin
from learnstream.streams.a2e.samples import build_dialog_response, dialog_pair
from learnstream.streams.a2e.strategies import DEFAULTS, EXACT_DEFAULTS, Arm, rank
from learnstream.streams.a2e.sync_client import SyncLearnAPI
from learnstream.streams.samples.pairs import PreferencePair

# --- Feedback's conversions without arguments ----------------------------------------------------


def corrective() -> Feedback:
    return Feedback(
        correlation_id="req_123",
        polarity="CORRECTIVE",
        score=-0.5,
        correction="4",
        rated_turn=RatedTurn(prompt="What is 2+2?", response="5"),
        source="HUMAN",
    )


def test_to_preference_pair_takes_the_clock_when_called_as_the_seed_writes_it() -> None:
    feedback = corrective()
    before = datetime.now(UTC)
    pair = feedback.to_preference_pair()  # seed 003's call, as written
    after = datetime.now(UTC)
    assert isinstance(pair, PreferencePair)
    assert (pair.chosen, pair.rejected) == ({"response": "4"}, {"response": "5"})
    assert pair.margin == 0.75
    assert before <= datetime.fromisoformat(pair.created_at) <= after
    assert pair.event_time == pair.created_at  # the sample built here is as new
    # a caller's time is kept, as before: the same pair but for its times
    then = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    dated = feedback.to_preference_pair(then)
    assert dated is not None
    assert datetime.fromisoformat(dated.created_at) == then
    times = {"created_at", "event_time"}
    assert dated.model_dump(exclude=times) == pair.model_dump(exclude=times)
    written = build_dialog_response(feedback, then, project_id="proj-1")
    assert feedback.to_preference_pair(then, written=written) == dialog_pair(written, then)


def test_to_reward_sample_works_as_the_seed_writes_it() -> None:
    reward = corrective().to_reward_sample()  # seed 003's call, as written
    assert reward is not None
    assert reward.model_dump() == {
        "prompt": "What is 2+2?",
        "response": "5",
        "reward": -0.5,
        "dimension": "CORRECTNESS",
        "source": "HUMAN",
        "correlation_id": "req_123",
    }


# --- a plugin written to the seed's hooks ---------------------------------------------------------


class SeedPlugin(LearnPlugin):
    """A host's plugin with seed 003's four hooks, their signatures as the seed writes them
    (the bodies are this test's): ``_adapt(self, skill_name, strategy)``."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, Any]] = []
        self.records = {
            "my_skill": SkillPerformanceRecord(name="my_skill", calls_total=10, calls_success=9),
            "other": SkillPerformanceRecord(name="other", calls_total=10, calls_success=2),
        }

    # the four signatures are seed 003's LearnPlugin hooks, as written
    def _record_feedback(self, feedbacks) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
        return len(feedbacks), {}

    def _store_experiences(self, experiences) -> int:  # type: ignore[no-untyped-def]
        return len(experiences)

    def _adapt(self, skill_name, strategy) -> list[SkillPerformanceRecord]:  # type: ignore[no-untyped-def, override]
        self.asked.append((skill_name, strategy))
        return rank(list(self.records.values()), strategy, seed=len(self.asked))

    def _get_stats(self, skill_name, tool_name) -> dict:  # type: ignore[no-untyped-def]
        return {"skills": list(self.records.values()), "tools": []}


def client(plugin: LearnPlugin) -> SyncLearnAPI:
    @asynccontextmanager
    async def open_transport() -> AsyncIterator[LearnPlugin]:
        yield plugin

    return SyncLearnAPI(open_transport, timeout=5)


def test_a_plugin_with_the_seeds_two_argument_adapt_answers_adapt() -> None:
    plugin = SeedPlugin()
    with client(plugin) as learn:
        records = learn.adapt(skill_name="my_skill", strategy="ucb1")  # seed 003's call
        again = learn.adapt(strategy="softmax")
    assert plugin.asked == [("my_skill", "ucb1"), (None, "softmax")]
    assert [r.name for r in records] == ["my_skill", "other"]
    assert records[0].calls_success == 9
    assert [r.name for r in again] == ["my_skill", "other"]


class Partial(SeedPlugin):
    def _adapt(self, skill_name, strategy, params):  # type: ignore[no-untyped-def, override]
        raise AssertionError("never called")


class Bare(SeedPlugin):
    def _adapt(self, skill_name):  # type: ignore[no-untyped-def, override]
        raise AssertionError("never called")


class Rich(SeedPlugin):
    def _adapt(self, skill_name, strategy, params, seed):  # type: ignore[no-untyped-def, override]
        self.asked.append((params, seed))
        return []


@pytest.mark.parametrize("plugin", [Partial, Bare])
def test_an_adapt_of_neither_signature_is_a_clear_type_error(plugin: type[LearnPlugin]) -> None:
    request = LearnAdaptRequest(correlation_id="r-1", payload=AdaptQuery(strategy="ucb1"))
    with pytest.raises(TypeError, match=r"_adapt\(.*\) must take \(skill_name, strategy, params"):
        plugin().answer(request)


def test_the_four_argument_adapt_still_gets_params_and_seed() -> None:
    plugin = Rich()
    query = AdaptQuery(strategy="ucb1", params={"c": 0.5}, seed=7)
    response = plugin.answer(LearnAdaptRequest(correlation_id="r-2", payload=query))
    assert response.ok
    assert plugin.asked == [({"c": 0.5}, 7)]


# --- every strategy on plain cumulative records ---------------------------------------------------

STRATEGIES = ["ucb1", "epsilon_greedy", "softmax", "thompson"]


#: Issue 44's probe: 7 skills, the best 0.65, the others 0.55 and below; the best one's name
#: sorts last, so ties never favour it.
MEANS = {"skill-g": 0.65, "skill-f": 0.55, "skill-e": 0.5, "skill-d": 0.45, "skill-c": 0.4}
MEANS |= {"skill-b": 0.35, "skill-a": 0.3}


def late_share(
    strategy: str, seed: int, params: dict[str, float] | None = None, pulls: int = 10_000
) -> float:
    """Play ``pulls`` pulls on plain cumulative records (what a script holds), one ranking a
    pull with its own seed, as a script would; return the best skill's share of the last
    500 pulls."""
    env = random.Random(seed)
    calls, wins, late = dict.fromkeys(MEANS, 0), dict.fromkeys(MEANS, 0), 0
    for t in range(pulls):
        records = [
            SkillPerformanceRecord(
                name=name, calls_total=calls[name], calls_success=wins[name],
                calls_failed=calls[name] - wins[name],
            )
            for name in MEANS
        ]  # fmt: skip
        chosen = rank(records, strategy, params, seed=t)[0].name
        calls[chosen] += 1
        wins[chosen] += env.random() < MEANS[chosen]
        late += t >= pulls - 500 and chosen == "skill-g"
    return late / 500


def test_exact_counts_take_the_textbook_ucb1_bonus() -> None:
    assert EXACT_DEFAULTS["ucb1"]["c"] == pytest.approx(2**0.5)
    assert DEFAULTS["ucb1"]["c"] == 0.4  # rolling stats keep the tuned one
    # arm b: mean 0.5 of 4 pulls, N = 104: 0.5 + sqrt(2) * sqrt(ln 104 / 4) = 2.02 beats a's
    # 0.9 + sqrt(2) * sqrt(ln 104 / 100) = 1.20; at c 0.4 a's 0.99 beats b's 0.93
    records = [
        SkillPerformanceRecord(name="a", calls_total=100, calls_success=90),
        SkillPerformanceRecord(name="b", calls_total=4, calls_success=2),
    ]
    assert [r.name for r in rank(records, "ucb1")] == ["b", "a"]
    assert [r.name for r in rank(records, "ucb1", {"c": 0.4})] == ["a", "b"]
    # the same counts as rolling stats (recent pulls known) rank with c 0.4 (floor off here)
    rolling = [Arm("a", 100, 90, 90, recent=50.0), Arm("b", 4, 2, 2, recent=1.0)]
    assert [r.name for r in rank(rolling, "ucb1", {"floor": 0.0})] == ["a", "b"]
    assert [r.name for r in rank(rolling, "ucb1", {"floor": 0.0, "c": 2**0.5})] == ["b", "a"]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", [3, 8])
def test_every_strategy_converges_on_cumulative_records(strategy: str, seed: int) -> None:
    """The best skill keeps >= 85 % of the late pulls on each seed (on seeds 3 and 8 the
    rolling stats' c, UCB1 0.4 or softmax 0.1, locked onto a worse skill here)."""
    assert late_share(strategy, seed) >= 0.85


def test_the_cumulative_suite_draws_its_arms_per_seed_and_plays_counts_only() -> None:
    cumulative = next(s for s in bandits.SUITES if s.cumulative_only)
    assert (cumulative.drawn, cumulative.target, cumulative.pulls) == (True, True, 20_000)
    draws = [cumulative.on(seed).means for seed in range(50)]
    assert len(set(draws)) == 50  # every seed its own arms
    for means in draws:
        best, second = sorted(means, reverse=True)[:2]
        assert len(means) == 7
        assert 0.3 <= best <= 0.9
        assert 0.1 - 1e-3 <= best - second <= 0.15 + 1e-3
        assert min(means) >= 0.0
    assert len({d.index(max(d)) for d in draws}) > 3  # the best arm's place is drawn too
    args = bandits._parser().parse_args(["--seeds", "2"])
    jobs = bandits._jobs(args, [cumulative])
    assert {job[0] for job in jobs} == {"cumulative"}
    assert sorted((job[2], job[3]) for job in jobs) == sorted(
        (strategy, seed) for strategy in STRATEGIES for seed in (0, 1)
    )
