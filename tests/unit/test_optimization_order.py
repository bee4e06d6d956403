"""plan_optimization, one sample per pair of plans (streams/samples/optimizations.py): its
earliest qualifying pair of executions, whatever order the executions arrive in."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from learnstream.streams.samples.executions import Execution
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.optimizations import saving
from learnstream.streams.samples.replans import IntentPlans, match_execution
from learnstream.streams.samples.sample import LearningSample
from tests.unit.test_optimizations import MARGIN, NOW, T0, Intent, execution

_BASE = execution(Intent().executed(Intent().first, 1, 9000))
#: event id -> the sample id of its execution (``shown`` reads the pair back by them)
_RUNS: dict[str, str] = {}


def run(plan: str, seconds: int, duration: int, tokens: int | None = None, n: int = 0) -> Execution:
    """Return an execution of plan ``plan``, ``seconds`` after T0 (``n`` tells apart two of
    one plan at one time)."""
    label = f"{plan}-{seconds}-{n}"
    _RUNS[sample_id("event", label)] = label
    return _BASE.model_copy(
        update={
            "sample_id": label,
            "event_id": sample_id("event", label),
            "plan_ref": sample_id("plan", plan),
            "plan": {"plan_id": plan, "objective": f"objective of {plan}", "steps": []},
            "event_time": T0 + timedelta(seconds=seconds),
            "duration_ms": duration,
            "tokens": tokens,
            "token_usage": None if tokens is None else {"total_tokens": tokens},
        }
    )


def arrive(
    runs: list[Execution], held: IntentPlans | None = None
) -> tuple[list[LearningSample], IntentPlans]:
    """Match executions in arrival order; return every sample sent and the holdings."""
    sent: list[LearningSample] = []
    for one in runs:
        held, made, _ = match_execution(held, one, NOW, 1, MARGIN)
        sent += made
    assert held is not None
    return sent, held


def last_of_each(sent: list[LearningSample]) -> dict[str, LearningSample]:
    """Return what a topic compacted by sample id keeps: the last sample sent per id."""
    return {sample.sample_id: sample for sample in sent}


def expected(runs: list[Execution]) -> dict[tuple[str, str], tuple[str, str]]:
    """Return, by brute force, each (slow plan, optimized plan) and its earliest qualifying
    pair of executions (sample ids): the first fast run, then the first slow run it beat."""
    best: dict[tuple[str, str], tuple[Any, Any, str, str]] = {}
    for slow in runs:
        for fast in runs:
            if saving(slow, fast, MARGIN) is None:
                continue
            key = (str(slow.plan["plan_id"]), str(fast.plan["plan_id"]))
            found = (fast.order, slow.order)
            if key not in best or found < best[key][:2]:
                best[key] = (*found, slow.sample_id, fast.sample_id)
    return {key: (v[2], v[3]) for key, v in best.items()}


def shown(samples: dict[str, LearningSample]) -> dict[tuple[str, str], tuple[str, str]]:
    """Return each sample's plan pair and the executions it shows (their event ids)."""
    out = {}
    for sample in samples.values():
        key = (sample.input["plan"]["plan_id"], sample.output["plan"]["plan_id"])
        slow, fast = sample.meta.source_event_ids
        out[key] = (_RUNS[slow], _RUNS[fast])
    return out


# --- one sample per pair of plans -------------------------------------------------------------


def test_many_runs_of_a_slow_plan_and_one_fast_run_make_one_sample() -> None:
    slow = [run("slow", i, 9000 + i) for i in range(64)]
    fast = run("fast", 100, 3000)
    sent, held = arrive([*slow, fast])
    (sample,) = sent  # in event-time order: sent once
    assert sample.meta.source_event_ids == [slow[0].event_id, fast.event_id]
    assert len(held.executions) == 65
    late_first, _ = arrive([fast, *reversed(slow)])  # worst order: each run earlier than the last
    assert {s.sample_id for s in late_first} == {sample.sample_id}
    assert late_first[-1] == sample


def test_the_id_names_the_plans_not_the_runs() -> None:
    first, _ = arrive([run("a", 1, 9000), run("b", 5, 3000)])
    other, _ = arrive([run("a", 2, 9000, n=1), run("b", 6, 2000, n=1)])
    assert [s.sample_id for s in first] == [s.sample_id for s in other]
    assert first != other  # the runs it shows differ


def test_a_pair_shows_the_first_run_that_beat_an_earlier_one_and_the_first_it_beat() -> None:
    # b's first run beat only a's slow second run; b's second run beat both
    runs = [run("a", 1, 3000), run("a", 2, 9000), run("b", 5, 4000), run("b", 6, 1000)]
    sent, _ = arrive(runs)
    (sample,) = sent  # b's second run is later: its pairs come after the one found
    assert shown(last_of_each(sent)) == {("a", "b"): ("a-2-0", "b-5-0")}
    assert sample.output["improvement"] == {"duration_ms": 0.5556}


def test_both_directions_are_two_samples() -> None:
    runs = [run("a", 1, 9000), run("b", 5, 3000), run("b", 6, 9000, n=1), run("a", 9, 2000)]
    sent, _ = arrive(runs)
    assert set(shown(last_of_each(sent))) == {("a", "b"), ("b", "a")}


def test_a_replayed_run_sends_again_what_it_is_the_earliest_pair_of() -> None:
    runs = [run("a", 1, 9000), run("a", 2, 9500), run("b", 5, 3000)]
    sent, held = arrive(runs)
    (sample,) = sent
    assert arrive([runs[0]], held)[0] == [sample]  # part of the pair: sent again, the same
    assert arrive([runs[1]], held)[0] == []  # a later run of a: in no earliest pair


def test_the_intent_holds_its_earliest_runs_whatever_the_order() -> None:
    runs = [run("a", i, 9000, n=i) for i in range(200)]
    _, in_order = arrive(runs)
    _, reversed_ = arrive(list(reversed(runs)))
    assert [e.sample_id for e in in_order.executions] == [e.sample_id for e in runs[:128]]
    assert in_order.executions == reversed_.executions
    assert in_order.execution_size == reversed_.execution_size


# --- arrival order does not matter ------------------------------------------------------------

_RUN = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 12),  # seconds: equal times happen
    st.sampled_from([1000, 2000, 3000, 4000, 6000, 9000]),
    st.none() | st.sampled_from([500, 1000, 2000]),
)


@st.composite
def _arrivals(draw: st.DrawFn) -> tuple[list[Execution], list[Execution]]:
    drawn = draw(st.lists(_RUN, min_size=2, max_size=9))
    runs = [run(plan, at, ms, tokens, n=i) for i, (plan, at, ms, tokens) in enumerate(drawn)]
    return runs, draw(st.permutations(runs))


@settings(max_examples=300, deadline=None)
@given(_arrivals())
def test_any_arrival_order_leaves_the_same_samples(
    arrivals: tuple[list[Execution], list[Execution]],
) -> None:
    in_time, shuffled = sorted(arrivals[0], key=lambda e: e.order), arrivals[1]
    sent_in_time, held = arrive(in_time)
    sent, held_shuffled = arrive(shuffled)
    kept = last_of_each(sent)
    assert kept == last_of_each(sent_in_time)  # ids and contents
    assert shown(kept) == expected(in_time)  # each plan pair once, its earliest pair
    assert len(sent_in_time) == len(kept)  # in event-time order each is sent once
    assert held_shuffled.executions == held.executions
    # a replay of the whole stream over the state it left sends only what is kept
    replayed, _ = arrive(shuffled, held_shuffled)
    assert all(kept[s.sample_id] == s for s in replayed)
    assert {s.sample_id for s in replayed} == set(kept)
