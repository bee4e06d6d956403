"""Experience replay: uniform, most-recent window and |reward|-prioritized draws, seeded."""

from __future__ import annotations

from collections import Counter

import pytest

from learnstream.streams.a2e.models import Experience
from learnstream.streams.a2e.replay import priority, sample

EXPERIENCES = [
    Experience(state={"t": t}, action={"a": t % 3}, reward=r, next_state={"t": t + 1})
    for t, r in enumerate([0.0, 1.0, -4.0, 0.5, 0.0, 2.0, -1.0, 0.0, 3.0, 0.5])
]
RUNS = 20_000


def steps(batch: list[Experience]) -> list[int]:
    return [e.state["t"] for e in batch]


@pytest.mark.parametrize("strategy", ["uniform", "recent", "prioritized"])
def test_seeded_distinct_and_capped(strategy: str) -> None:
    first = sample(EXPERIENCES, 4, strategy, seed=5)
    assert first == sample(EXPERIENCES, 4, strategy, seed=5)
    assert len(first) == len({id(e) for e in first}) == 4
    assert {tuple(steps(sample(EXPERIENCES, 4, strategy, seed=s))) for s in range(30)} != {
        tuple(steps(first))
    }
    everything = sample(EXPERIENCES, 1000, strategy, seed=1)
    assert sorted(steps(everything)) == list(range(10))
    assert sample(EXPERIENCES, 0, strategy) == []
    assert sample([], 3, strategy) == []


def test_uniform_draws_every_experience_equally() -> None:
    counts = Counter(t for s in range(RUNS) for t in steps(sample(EXPERIENCES, 3, seed=s)))
    for t in range(10):
        assert counts[t] / RUNS == pytest.approx(3 / 10, abs=0.015)


def test_recent_window() -> None:
    assert sorted(steps(sample(EXPERIENCES, 3, "recent", seed=2))) == [7, 8, 9]
    seen = {
        t for s in range(200) for t in steps(sample(EXPERIENCES, 2, "recent", seed=s, window=4))
    }
    assert seen == {6, 7, 8, 9}
    assert len(sample(EXPERIENCES, 5, "recent", window=2)) == 2  # the window caps the batch


def test_priority_by_hand() -> None:
    assert priority(EXPERIENCES[2]) == pytest.approx(4.001)
    assert priority(EXPERIENCES[2], alpha=0.5) == pytest.approx(4.001**0.5)
    assert priority(EXPERIENCES[0]) == pytest.approx(1e-3)


def test_prioritized_first_pick_is_proportional_to_abs_reward() -> None:
    weights = [priority(e) for e in EXPERIENCES]
    firsts = Counter(steps(sample(EXPERIENCES, 1, "prioritized", seed=s))[0] for s in range(RUNS))
    for t, w in enumerate(weights):
        assert firsts[t] / RUNS == pytest.approx(w / sum(weights), abs=0.012)
    assert firsts[2] > firsts[8] > firsts[5] > firsts[1]  # |-4| > |3| > |2| > |1|


def test_prioritized_with_alpha_zero_is_uniform() -> None:
    firsts = Counter(
        steps(sample(EXPERIENCES, 1, "prioritized", seed=s, alpha=0))[0] for s in range(RUNS)
    )
    assert all(count / RUNS == pytest.approx(0.1, abs=0.01) for count in firsts.values())
    assert len(firsts) == 10


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": -1}, "n must be >= 0"),
        ({"n": 1, "window": 0}, "window must be >= 1"),
        ({"n": 1, "alpha": -1}, "alpha must be >= 0"),
        ({"n": 1, "strategy": "lifo"}, "strategy must be one of uniform, recent, prioritized"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample(EXPERIENCES, **kwargs)  # type: ignore[arg-type]
