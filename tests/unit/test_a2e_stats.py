"""Skill stats: DDSketch accuracy against numpy on 100k samples, merge, JSON round trip."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from learnstream.streams.a2e.memory import (
    LONG_MEMORY,
    Z_DOWN,
    Z_UP,
    Counts,
    bounds_for,
    shift,
    z_score,
)
from learnstream.streams.a2e.sketch import RELATIVE_ACCURACY, DurationSketch
from learnstream.streams.a2e.stats import SkillStats, SourceRecord, StatsState

N = 100_000
QUANTILES = (0.5, 0.9, 0.95, 0.99, 0.999)


def distributions() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(12)
    return {
        "lognormal": rng.lognormal(mean=5.0, sigma=1.0, size=N),
        "exponential": rng.exponential(scale=250.0, size=N),
        "uniform": rng.uniform(1.0, 2000.0, size=N),
        "pareto": (rng.pareto(a=1.5, size=N) + 1.0) * 10.0,  # heavy tail
        # 30 % fast, 70 % slow: no quantile tested falls in the gap between the modes
        "bimodal": np.concatenate(
            [rng.normal(20.0, 2.0, 3 * N // 10), rng.normal(3000.0, 300.0, N - 3 * N // 10)]
        ).clip(min=0.0),
    }


DATA = distributions()


def sketch_of(values: np.ndarray) -> DurationSketch:
    sketch = DurationSketch()
    for value in values.tolist():
        sketch.add(value)
    return sketch


def relative_error(sketch: DurationSketch, values: np.ndarray, q: float, method: str) -> float:
    exact = float(np.percentile(values, q * 100, method=method))
    estimate = sketch.quantile(q)
    assert estimate is not None
    return abs(estimate - exact) / exact


@pytest.fixture(scope="module")
def sketches() -> dict[str, DurationSketch]:
    return {name: sketch_of(values) for name, values in DATA.items()}


@pytest.mark.parametrize("name", sorted(DATA))
def test_quantiles_within_one_percent_of_numpy(
    name: str, sketches: dict[str, DurationSketch]
) -> None:
    sketch, values = sketches[name], DATA[name]
    assert sketch.count == N
    for q in QUANTILES:
        # numpy "lower" is the order statistic at rank q(n-1): the value DDSketch bounds
        assert relative_error(sketch, values, q, "lower") <= RELATIVE_ACCURACY
        # and numpy's default (linear interpolation) agrees as closely at this n
        assert relative_error(sketch, values, q, "linear") <= RELATIVE_ACCURACY


@pytest.mark.parametrize("name", sorted(DATA))
def test_merge_of_two_halves_equals_the_whole(
    name: str, sketches: dict[str, DurationSketch]
) -> None:
    values = DATA[name]
    first, second = sketch_of(values[: N // 2]), sketch_of(values[N // 2 :])
    first.merge(second)
    assert first.count == N
    assert first.to_dict()["positive"] == sketches[name].to_dict()["positive"]  # same bins
    for q in QUANTILES:
        assert first.quantile(q) == pytest.approx(sketches[name].quantile(q), rel=1e-12)
        assert relative_error(first, values, q, "lower") <= RELATIVE_ACCURACY


def test_json_round_trip(sketches: dict[str, DurationSketch]) -> None:
    for sketch in sketches.values():
        data = sketch.to_json()
        restored = DurationSketch.from_json(data)
        assert restored.to_json() == data
        assert json.loads(data)["relative_accuracy"] == 0.01
        assert [restored.quantile(q) for q in QUANTILES] == [sketch.quantile(q) for q in QUANTILES]
    assert len(sketches["pareto"].to_json()) < 40_000  # bins, not the 100k values


def test_empty_and_zero_values() -> None:
    empty = DurationSketch()
    assert empty.quantile(0.95) is None
    assert DurationSketch.from_json(empty.to_json()).count == 0
    zeros = DurationSketch()
    for value in (0.0, 0.0, 5.0):
        zeros.add(value)
    restored = DurationSketch.from_json(zeros.to_json())
    assert restored.quantile(0.5) == 0
    assert restored.quantile(1.0) == pytest.approx(5.0, rel=0.01)


#: A sketch of STORED_VALUES in the JSON form the stats tables hold.
STORED_VALUES = (10.0, 10.05, 10.5, 0.0, -2.0)
STORED = {
    "relative_accuracy": 0.01,
    "bin_limit": 2048,
    "positive": {"min_key": 116, "counts": [2.0, 0.0, 1.0]},
    "negative": {"min_key": 35, "counts": [1.0]},
    "zero_count": 1.0,
    "count": 5.0,
    "sum": 28.55,
    "min": -2.0,
    "max": 10.5,
}


def test_the_stored_json_form_is_written_and_read_back_exactly() -> None:
    """Tables written by any release read back as the sketch that wrote them, which then
    goes on exactly as that sketch would: bins of both signs, zeros, sum, min and max."""
    sketch = DurationSketch()
    for value in STORED_VALUES:
        sketch.add(value)
    assert sketch.to_dict() == STORED
    restored = DurationSketch.from_dict(STORED)
    assert restored.to_dict() == STORED
    assert restored.quantile(0.5) == sketch.quantile(0.5)
    for same in (sketch, restored):
        for value in (0.0, -2.0, 11.0):
            same.add(value)
    assert restored.to_dict() == sketch.to_dict()
    assert restored.to_dict() == STORED | {
        "positive": {"min_key": 116, "counts": [2.0, 0.0, 1.0, 0.0, 1.0]},
        "negative": {"min_key": 35, "counts": [2.0]},
        "zero_count": 2.0,
        "count": 8.0,
        "sum": 37.55,
        "max": 11.0,
    }
    into_empty = DurationSketch()
    into_empty.merge(restored)
    assert into_empty.to_dict() == restored.to_dict()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[1, 2]", "expected a JSON object"),
        (b"{oops", "invalid JSON"),
        (b'{"count": "secret"}', "not a sketch: check"),
    ],
)
def test_bad_sketch_json(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        DurationSketch.from_json(data)
    assert "secret" not in str(caught.value)


def test_other_parameters_do_not_merge() -> None:
    data = DurationSketch().to_dict() | {"relative_accuracy": 0.02}
    with pytest.raises(ValueError, match="other parameters"):
        DurationSketch.from_dict(data)


def test_skill_stats_record() -> None:
    stats = SkillStats()
    for i, ok in enumerate((True, True, False, None)):
        stats.add_call(ok, duration_ms=100.0 * (i + 1))
    stats.add_call(True)  # no duration reported
    stats.add_score(0.5)
    stats.add_score(-1.0)
    record = stats.record("search")
    assert record.model_dump() == {
        "name": "search",
        "calls_total": 5,
        "calls_success": 3,
        "calls_failed": 1,
        "avg_duration_ms": 250.0,
        "avg_score": -0.25,
        # rank 0.95 * (4 - 1) = 2.85: the third duration, as numpy's "lower" method says
        "p95_duration_ms": pytest.approx(300.0, rel=0.01),
    }
    assert SkillStats().record("idle").p95_duration_ms == 0.0


def test_skill_stats_merge_and_json() -> None:
    rng = np.random.default_rng(3)
    durations = rng.lognormal(4.0, 0.8, 20_000)
    parts = [SkillStats() for _ in range(4)]  # e.g. one entry per source partition
    whole = SkillStats()
    for i, duration in enumerate(durations.tolist()):
        for stats in (parts[i % 4], whole):
            stats.add_call(i % 10 != 0, duration)
            stats.add_score(0.5 if i % 2 else -0.5)
    restored = [SkillStats.from_dict(json.loads(json.dumps(p.to_dict()))) for p in parts]
    merged = SkillStats.merged(restored).record("s")
    expected = whole.record("s")
    assert merged.model_dump(exclude={"avg_duration_ms", "p95_duration_ms"}) == expected.model_dump(
        exclude={"avg_duration_ms", "p95_duration_ms"}
    )
    assert merged.avg_duration_ms == pytest.approx(float(durations.mean()), rel=1e-9)
    exact_p95 = float(np.percentile(durations, 95, method="lower"))
    assert math.isclose(merged.p95_duration_ms, exact_p95, rel_tol=RELATIVE_ACCURACY)
    assert merged.p95_duration_ms == pytest.approx(expected.p95_duration_ms, rel=1e-12)


@pytest.mark.parametrize("duration", [-1.0, math.nan, math.inf])
def test_skill_stats_refuse_bad_values(duration: float) -> None:
    stats = SkillStats()
    with pytest.raises(ValueError, match="duration_ms must be a finite number >= 0"):
        stats.add_call(True, duration)
    with pytest.raises(ValueError, match=r"score must be within \[-1, 1\]"):
        stats.add_score(1.5)
    assert stats.calls_total == stats.score_count == 0
    with pytest.raises(ValueError, match="not skill stats: calls_total") as caught:
        SkillStats.from_dict({"calls_total": "secret"})
    assert "secret" not in str(caught.value)


# --- rolling counters, idempotence --------------------------------------------------------------

HOUR = 3600.0


def test_decayed_counters_halve_each_half_life_by_hand() -> None:
    stats = SkillStats(half_life_s=HOUR)
    stats.add_call(True, at=0.0)
    stats.add_call(False, at=HOUR)  # the first call now weighs 1/2
    assert stats.rolling() == pytest.approx([1.5, 0.5, 0, 0, 0])
    assert stats.rolling(now=3 * HOUR) == pytest.approx([0.375, 0.125, 0, 0, 0])
    arm = stats.arm("s", now=3 * HOUR, memory="recent")
    assert (arm.pulls, arm.total, arm.binary) == pytest.approx((0.375, 0.125, True))
    assert (stats.calls_total, stats.calls_success, stats.calls_failed) == (2, 1, 1)
    # the long memory halves every LONG_MEMORY hours: 2^(-1/LONG_MEMORY) per hour
    hour = 2 ** (-1 / LONG_MEMORY)
    assert stats.rolling(long=True) == pytest.approx([hour + 1, hour, 0, 0, 0])
    assert stats.rolling(now=3 * HOUR, long=True)[0] == pytest.approx((hour + 1) * hour**2)
    # two calls, one each way: nothing tells the memories apart, so the long one ranks
    assert stats.arm("s", now=3 * HOUR).pulls == pytest.approx((hour + 1) * hour**2)


def test_late_updates_weigh_as_if_in_order() -> None:
    forward, backward = SkillStats(HOUR), SkillStats(HOUR)
    for t, ok in ((0.0, True), (1800.0, False), (5400.0, True)):
        forward.add_call(ok, at=t)
    for t, ok in ((5400.0, True), (0.0, True), (1800.0, False)):
        backward.add_call(ok, at=t)
    assert backward.rolling(7200.0) == pytest.approx(forward.rolling(7200.0))
    assert backward.rolling(7200.0, long=True) == pytest.approx(forward.rolling(7200.0, long=True))
    assert backward.as_of == forward.as_of == 5400.0


def test_merge_of_partitions_equals_one_stats() -> None:
    whole, left, right = SkillStats(HOUR), SkillStats(HOUR), SkillStats(HOUR)
    for i in range(40):
        ok, t = i % 3 == 0, i * 600.0
        whole.add_call(ok, at=t)
        whole.add_score(0.5 if ok else -0.5, at=t)
        (left if i % 2 else right).add_call(ok, at=t)
        (left if i % 2 else right).add_score(0.5 if ok else -0.5, at=t)
    merged = SkillStats.merged([left, right])
    assert merged.rolling(30_000.0) == pytest.approx(whole.rolling(30_000.0))
    assert merged.rolling(30_000.0, long=True) == pytest.approx(whole.rolling(30_000.0, long=True))
    for reward in ("success", "score"):
        mine = merged.arm("s", now=30_000.0, reward=reward)
        theirs = whole.arm("s", now=30_000.0, reward=reward)
        assert (mine.pulls, mine.total, mine.squares) == pytest.approx(
            (theirs.pulls, theirs.total, theirs.squares)
        )
    assert merged.to_dict()["calls_total"] == 40


def test_score_arm_maps_scores_to_unit_rewards() -> None:
    stats = SkillStats()
    for score in (1.0, -1.0, 0.5):
        stats.add_score(score)
    exact = stats.arm("s", reward="score", rolling=False)
    # rewards 1, 0, 0.75: sum 1.75, squares 1 + 0 + 0.5625
    assert (exact.pulls, exact.total, exact.squares) == pytest.approx((3, 1.75, 1.5625))
    assert not exact.binary
    # no time given: nothing decays, and the rolling arm knows its recent pulls
    assert stats.arm("s", reward="score") == dataclasses.replace(exact, recent=3.0)


def test_a_replayed_record_counts_once() -> None:
    stats = SkillStats()
    first = SourceRecord("a2e.learn.requests", 3, 100)
    assert stats.add_call(True, 12.0, at=0.0, source=first)
    assert stats.add_score(0.5, at=0.0, source=first)  # a score and a call: both count
    assert not stats.add_call(True, 12.0, at=0.0, source=first)
    assert not stats.add_call(False, at=0.0, source=SourceRecord("a2e.learn.requests", 3, 99))
    assert stats.add_call(False, at=0.0, source=SourceRecord("a2e.learn.requests", 4, 99))
    assert stats.add_call(False, at=0.0, source=first._replace(item=1))  # 2nd item of 100
    assert (stats.calls_total, stats.score_count, stats.duration_count) == (3, 1, 1)
    assert stats.rolling()[:2] == stats.rolling(long=True)[:2] == [3.0, 1.0]
    assert len(stats.watermarks) == 3  # one mark per source partition and kind


def test_watermarks_survive_json_and_merge() -> None:
    stats = SkillStats()
    stats.add_call(True, at=10.0, source=SourceRecord("t", 0, 7))
    restored = SkillStats.from_dict(json.loads(json.dumps(stats.to_dict())))
    assert not restored.add_call(True, at=10.0, source=SourceRecord("t", 0, 7))
    other = SkillStats()
    other.add_call(True, at=20.0, source=SourceRecord("t", 0, 9))
    restored.merge(other)
    assert not restored.add_call(True, at=30.0, source=SourceRecord("t", 0, 8))
    assert restored.calls_total == 2
    assert restored.to_dict() == SkillStats.from_dict(restored.to_dict()).to_dict()


def test_exact_counts_stay_exact_over_many_calls() -> None:
    stats = SkillStats(half_life_s=60.0)
    for i in range(10_000):
        stats.add_call(i % 4 != 0, 5.0, at=i * 60.0, source=SourceRecord("t", 0, i))
        stats.add_call(True, 5.0, at=i * 60.0, source=SourceRecord("t", 0, i))  # replayed
    record = stats.record("s")
    assert (record.calls_total, record.calls_success, record.calls_failed) == (10_000, 7500, 2500)
    assert record.avg_duration_ms == 5.0
    assert stats.rolling()[0] == pytest.approx(2.0, rel=1e-3)  # sum of 2^-k: the memory is 2


def test_different_half_lives_do_not_merge() -> None:
    with pytest.raises(ValueError, match="half-lives"):
        SkillStats(60.0).merge(SkillStats(120.0))
    with pytest.raises(ValueError, match="half_life_s"):
        SkillStats(0.0)


def test_stats_stored_before_the_long_memory_load_with_it_equal_to_the_recent_one() -> None:
    stored = {
        "calls_total": 3,
        "calls_success": 2,
        "calls_failed": 1,
        "half_life_s": 1800.0,
        "as_of": 100.0,
        "decayed": [2.5, 1.75, 0.0, 0.0, 0.0],
        "watermarks": {"call|t|0": [7, 0]},
    }
    assert StatsState.model_validate(stored).long_decayed is None
    stats = SkillStats.from_dict(stored)
    assert stats.rolling(long=True) == stats.rolling() == [2.5, 1.75, 0.0, 0.0, 0.0]
    assert stats.to_dict()["long_decayed"] == [2.5, 1.75, 0.0, 0.0, 0.0]
    assert not stats.add_call(True, at=100.0, source=SourceRecord("t", 0, 7))
    assert SkillStats.from_dict(stats.to_dict()).to_dict() == stats.to_dict()


def test_z_score_by_hand() -> None:
    # recent 8/10 against older 20/40 (long 28/50): v = (28 - 50 * 0.56^2 + 0.25) / 51
    recent, long = Counts(10.0, 8.0, 8.0), Counts(50.0, 28.0, 28.0)
    v = (28 - 50 * 0.56**2 + 0.25) / 51
    assert z_score(recent, long) == pytest.approx(0.3 / math.sqrt(v * (1 / 10 + 1 / 40)))
    assert shift(recent, long) == "up"  # z = 1.73 > Z_UP 1.5
    assert shift(recent, long, up=2.0) is None
    worse = Counts(10.0, 4.0, 4.0)  # 4/10 against 24/40: z = -1.14 < -Z_DOWN
    assert shift(worse, Counts(50.0, 28.0, 28.0)) == "down"
    assert shift(worse, Counts(50.0, 28.0, 28.0), down=1.5) is None
    assert shift(Counts(0.0, 0.0, 0.0), long) is None  # no recent evidence
    assert shift(recent, recent) is None  # no older evidence
    # Thompson sampling's decline bound is 2: z = -1.14 is no shift for it
    assert bounds_for("thompson") == (Z_UP, 2.0)
    assert bounds_for("ucb1") == bounds_for(None) == (Z_UP, Z_DOWN)
    assert shift(worse, long, *bounds_for("thompson")) is None
    # epsilon-greedy's rise bound is 1.25: z = 1.4 is a rise for it, not for the others
    barely = Counts(3.0, 2.0, 2.0)  # 2/3 against 13/47 (an arm held poor): z = 1.43
    held = Counts(50.0, 15.0, 15.0)
    assert 1.25 < z_score(barely, held) < 1.5
    assert bounds_for("epsilon_greedy") == (1.25, Z_DOWN)
    assert shift(barely, held, *bounds_for("epsilon_greedy")) == "up"
    assert shift(barely, held, *bounds_for("softmax")) is None


def test_the_arm_names_its_shift_under_the_strategy_bounds() -> None:
    stats = SkillStats()
    for t in range(0, 36_000, 10):  # ten steady hours at 60 %, then 140 s of failures
        stats.add_call(t % 50 < 30 if t < 35_860 else False, at=float(t))
    (n, s, *_), (ln, ls, *_) = stats.rolling(36_000.0), stats.rolling(36_000.0, long=True)
    z = z_score(Counts(n, s, s), Counts(ln, ls, ls))
    assert z is not None
    assert -2.0 < z < -1.0  # -1.43
    default = stats.arm("s", now=36_000.0)
    thompson = stats.arm("s", now=36_000.0, bounds=bounds_for("thompson"))
    assert (default.shift, thompson.shift) == ("down", None)
    assert default == stats.arm("s", now=36_000.0, memory="recent")
    assert thompson.pulls == pytest.approx(stats.rolling(36_000.0, long=True)[0])
    assert stats.arm("s", rolling=False).shift is None


def test_a_skill_ranks_on_its_long_memory_until_its_recent_outcomes_disagree() -> None:
    stats = SkillStats()  # default half-life: 30 min, a call every 10 s
    for t in range(0, 36_000, 10):  # ten steady hours at 60 %
        stats.add_call(t % 50 < 30, at=float(t))
    steady = stats.arm("s", now=36_000.0)
    assert steady.pulls == pytest.approx(stats.rolling(36_000.0, long=True)[0])
    assert steady.pulls > 5 * stats.rolling(36_000.0)[0]  # many more pulls than recent ones
    for t in range(36_000, 36_600, 10):  # then ten minutes of failures
        stats.add_call(False, at=float(t))
    broken = stats.arm("s", now=36_600.0)
    assert broken == stats.arm("s", now=36_600.0, memory="recent")
    assert broken.total / broken.pulls < 0.5 < 0.55 < steady.total / steady.pulls
