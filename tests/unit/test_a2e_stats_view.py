"""The stats view every worker answers from: changelog entries, own entries, ranking, seed."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from learnstream.streams.a2e.payloads import AdaptQuery
from learnstream.streams.a2e.stats import SkillStats, SourceRecord
from learnstream.streams.a2e.stats_view import (
    StatsView,
    adapt_seed,
    decode_entry,
    rank_skills,
    stats_key,
)
from learnstream.streams.a2e.strategies import Arm

T0 = 1_800_000_000.0


def _stats(wins: int, losses: int, at: float = T0, score: float | None = None) -> SkillStats:
    stats = SkillStats()
    for i in range(wins + losses):
        stats.add_call(i < wins, at=at + i, source=SourceRecord("req", 0, i))
    if score is not None:
        stats.add_score(score, at=at)
    return stats


def _entries() -> list[tuple[str, SkillStats]]:
    return [
        (stats_key("skill", "search", 0), _stats(8, 2)),
        (stats_key("skill", "search", 1), _stats(1, 1)),
        (stats_key("skill", "deploy", 2), _stats(3, 7)),
        (stats_key("tool", "search", 0), _stats(1, 0)),
    ]


def _view(entries: list[tuple[str, SkillStats]]) -> StatsView:
    view = StatsView()
    for key, stats in entries:
        view.apply(*decode_entry(key.encode(), orjson.dumps(stats.to_dict())))
    return view


def test_the_view_merges_every_partition_of_a_name() -> None:
    stats = _view(_entries()).stats("skill")
    assert list(stats) == ["deploy", "search"]
    search = stats["search"].record("search")
    assert (search.calls_total, search.calls_success, search.calls_failed) == (12, 9, 3)
    assert _view(_entries()).stats("tool", "search")["search"].calls_total == 1


def test_decode_entry_reads_json_keys_and_tombstones_and_rejects_others() -> None:
    assert decode_entry(b'"skill|a|0"', None) == ("skill|a|0", None)
    view = _view(_entries())
    view.apply(*decode_entry(stats_key("skill", "deploy", 2).encode(), None))
    assert list(view.stats("skill")) == ["search"]
    for key, value in ((None, b"{}"), (b"nobar", b"{}"), (b"skill|a|0", b"[1]")):
        with pytest.raises(ValueError, match="changelog"):
            decode_entry(key, value)


def test_own_entries_win_when_they_hold_more_updates() -> None:
    key = stats_key("skill", "search", 0)
    view = _view([(key, _stats(1, 0))])
    ahead, behind = _stats(2, 1).to_dict(), SkillStats().to_dict()
    assert view.stats("skill", local=[(key, ahead)])["search"].calls_total == 3
    assert view.stats("skill", local=[(key, behind)])["search"].calls_total == 1


def test_the_same_entries_rank_the_same_in_any_order_of_arrival() -> None:
    query = AdaptQuery(strategy="epsilon_greedy")
    seed = adapt_seed(query, 0, "req-1")
    first, second = _view(_entries()), _view(list(reversed(_entries())))
    for strategy in ("ucb1", "epsilon_greedy", "softmax", "thompson"):
        q = AdaptQuery(strategy=strategy, skill_name="fresh")
        ranked = [
            [r.name for r in rank_skills(v.stats("skill"), q, {}, seed, T0 + 60)]
            for v in (first, second)
        ]
        assert ranked[0] == ranked[1]
        assert ranked[0][0] == "fresh"  # untried first


def test_each_strategy_ranks_on_the_memories_its_change_test_bounds_pick(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stats = SkillStats()
    for t in range(0, 36_000, 10):  # ten steady hours at 60 %, then 140 s of failures: z -1.43
        stats.add_call(t % 50 < 30 if t < 35_860 else False, at=float(t))
    seen: dict[str, Arm] = {}

    def spy(records: list[object], strategy: str, *args: object, **kw: Any) -> list[object]:
        seen[strategy] = kw["arms"]["search"]
        return records

    monkeypatch.setattr("learnstream.streams.a2e.stats_view.rank", spy)
    for strategy in ("ucb1", "thompson"):
        rank_skills({"search": stats}, AdaptQuery(strategy=strategy), {}, 0, 36_000.0)
    # a decline of 1.43 standard errors is a shift for UCB1 (bound 1), not for Thompson (2)
    assert (seen["ucb1"].shift, seen["thompson"].shift) == ("down", None)
    assert seen["ucb1"] == stats.arm("search", now=36_000.0, memory="recent")
    assert seen["thompson"].pulls == pytest.approx(stats.rolling(36_000.0, long=True)[0])


def test_rolling_stats_let_a_recent_failure_outrank_old_success() -> None:
    old_good = _stats(50, 0, at=T0)
    new_good = _stats(5, 0, at=T0 + 20 * 3600)  # far fewer calls, all recent
    for i in range(30):  # the old favourite breaks today
        old_good.add_call(False, at=T0 + 20 * 3600 + i, source=SourceRecord("req", 1, i))
    stats = {"a": old_good, "b": new_good}
    query = AdaptQuery(strategy="ucb1")
    ranked = rank_skills(stats, query, {}, 0, T0 + 20 * 3600 + 60)
    assert [r.name for r in ranked] == ["b", "a"]
    assert ranked[1].calls_total == 80  # the records keep exact counts


def test_adapt_seed_is_the_requests_or_derived_from_the_request_and_query() -> None:
    assert adapt_seed(AdaptQuery(seed=7), 0, "req-1") == 7
    query = AdaptQuery(strategy="softmax", params={"c": 0.3})
    base = adapt_seed(query, 0, "req-1")
    assert base == adapt_seed(AdaptQuery(strategy="softmax", params={"c": 0.3}), 0, "req-1")
    assert base != adapt_seed(query, 0, "req-2")  # the next request draws afresh
    assert base != adapt_seed(AdaptQuery(strategy="softmax", params={"c": 0.4}), 0, "req-1")
    assert base != adapt_seed(query, 1, "req-1")
    assert 0 <= base < 2**63


def test_unseeded_requests_explore_from_request_to_request() -> None:
    """A seed fixed per query replays one coin: epsilon-greedy would never explore again."""
    stats = {"a": _stats(40, 0), "b": _stats(20, 20), "c": _stats(5, 35)}
    query = AdaptQuery(strategy="epsilon_greedy")
    params = {"epsilon": 0.5}
    firsts = [
        rank_skills(stats, query, params, adapt_seed(query, 0, f"req-{i}"), T0)[0].name
        for i in range(60)
    ]
    assert {"a", "b", "c"} <= set(firsts)  # explored
    assert firsts.count("a") > 30  # and mostly exploits
    again = rank_skills(stats, query, params, adapt_seed(query, 0, "req-0"), T0)
    assert again[0].name == firsts[0]  # the same request ranks the same anywhere


def test_stats_written_under_another_half_life_still_merge() -> None:
    key_a, key_b = stats_key("skill", "search", 0), stats_key("skill", "search", 1)
    old = SkillStats(half_life_s=3600)
    old.add_call(True, at=T0)
    view = StatsView(half_life_s=600)
    view.apply(*decode_entry(key_a.encode(), orjson.dumps(old.to_dict())))
    merged = view.stats("skill", local=[(key_b, _stats(1, 1).to_dict())])["search"]
    assert (merged.half_life_s, merged.calls_total) == (600, 3)
