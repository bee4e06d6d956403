"""plan_optimization (streams/samples/optimizations.py): two executions of one intent, the
later faster or cheaper by the margin, make a sample and a pair; pure, then through the worker."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from learnstream.streams.config.settings import Settings
from learnstream.streams.encoding.codecs import AvroSampleCodec, JsonSampleCodec
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.join.rules import on_stage
from learnstream.streams.mplp.decode import decode_plan, decode_stage
from learnstream.streams.samples.collection import collection_point
from learnstream.streams.samples.executions import Execution, execution_of
from learnstream.streams.samples.optimizations import saving
from learnstream.streams.samples.pairs import optimization_pair, pair_id, pair_sample
from learnstream.streams.samples.replans import (
    MAX_EXECUTION_BYTES,
    MAX_EXECUTIONS,
    MAX_PLAN_BYTES,
    MAX_PLANS,
    IntentPlans,
    Plan,
    match,
    match_execution,
    read_rekeyed,
)
from learnstream.streams.samples.sample import LearningSample, family_errors
from learnstream.streams.sim.simulate import Simulator
from learnstream.streams.state.plan import merge_snapshot
from tests.support.avro_consumer import plain_read
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.mplp_learning import learning_validators, mplp_errors
from tests.support.worker import RunningWorker, running_worker, sent_samples

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)
MARGIN = 0.2


class Intent:
    """Plans of one intent, and the pipeline_outcome samples of their executions."""

    def __init__(self, seed: int = 5) -> None:
        self.sim = Simulator(seed=seed, pii_ratio=0.0)
        self.first = self.sim.plan(T0)

    def plan(self) -> dict[str, Any]:
        """Return another plan for the same intent (a replan)."""
        return self.sim.plan(T0, project_id=self.first["project_id"], intent=self.first["intent"])

    def stage(
        self, snap: dict[str, Any], minutes: float, duration: int | None, **payload: Any
    ) -> dict[str, Any]:
        """Return the ``execute`` stage event of ``snap``, ``minutes`` after T0."""
        status = payload.pop("status", "completed")
        event = self.sim.stage(snap, status, T0 + timedelta(minutes=minutes))
        event["payload"] |= {"duration_ms": duration, **payload}
        return event

    def executed(
        self, snap: dict[str, Any], minutes: float, duration: int | None, **payload: Any
    ) -> LearningSample:
        """Return the pipeline_outcome sample of ``snap``'s execution, as the join builds it."""
        state = merge_snapshot(None, decode_plan(orjson.dumps(snap)), T0)
        event = decode_stage(orjson.dumps(self.stage(snap, minutes, duration, **payload)))
        (sample,) = on_stage(event, state, NOW).samples
        return sample


def execution(sample: LearningSample) -> Execution:
    """Return the execution the miner re-keys from a sample as written."""
    written = pair_sample(sample.to_dict())
    assert written is not None
    found = execution_of(written)
    assert isinstance(found, Execution)
    return found


def feed(*samples: LearningSample, margin: float = MARGIN) -> tuple[list[LearningSample], Any]:
    """Match executions in arrival order as one partition would; return samples and holdings."""
    held: IntentPlans | None = None
    out: list[LearningSample] = []
    for sample in samples:
        held, made, reason = match_execution(held, execution(sample), NOW, 1, margin)
        assert reason is None
        out += made
    return out, held


def slow_and_fast(fast_duration: int = 3000, **fast: Any) -> tuple[LearningSample, LearningSample]:
    intent = Intent()
    slow = intent.executed(intent.first, 1, 9000)
    return slow, intent.executed(intent.plan(), 5, fast_duration, **fast)


def optimization_samples() -> list[LearningSample]:
    """A good (3x faster) and an acceptable (25% cheaper in tokens) plan_optimization."""
    good, _ = feed(*slow_and_fast(3000))
    intent = Intent(seed=6)
    slow = intent.executed(intent.first, 1, 4000, token_usage={"total_tokens": 2000})
    cheaper = intent.executed(intent.plan(), 5, 4100, token_usage={"total_tokens": 1500})
    acceptable, _ = feed(slow, cheaper)
    return good + acceptable


# --- the rule -------------------------------------------------------------------------------


def test_a_later_plan_faster_by_the_margin_makes_a_sample_and_a_pair() -> None:
    slow, fast = slow_and_fast(3000)
    (sample,), held = feed(slow, fast)
    assert sample.sample_family == "plan_optimization"
    assert sample.input["intent_id"] == fast.input["intent_id"] == slow.input["intent_id"]
    assert sample.input["plan"]["plan_id"] == slow.input["plan_id"]
    assert sample.output["plan"]["plan_id"] == fast.input["plan_id"]
    assert sample.input["plan"]["steps"] == [s["description"] for s in slow.input["plan_structure"]]
    assert sample.input["execution"] == {
        "duration_ms": 9000,
        "completed_at": "2026-03-01T12:01:00Z",
    }
    assert sample.output["execution"]["duration_ms"] == 3000
    assert sample.output["improvement"] == {"duration_ms": 0.6667}
    assert sample.meta.quality_score == 0.6667
    assert sample.feedback.quality_label == "good"
    assert sample.meta.source_event_ids == [
        *slow.meta.source_event_ids,
        *fast.meta.source_event_ids,
    ]
    assert sample.meta.event_time == fast.meta.event_time
    assert sample.meta.plan_id == fast.meta.plan_id
    assert family_errors(sample) == []
    assert [e.sample_id for e in held.executions] == [slow.sample_id, fast.sample_id]

    pair = optimization_pair(sample, "2026-03-01T13:00:00Z")
    assert pair.kind == "optimization"
    assert pair.pair_id == pair_id("optimization", sample.sample_id, sample.sample_id)
    assert pair.rejected == sample.input["plan"]
    assert pair.chosen == sample.output["plan"]
    assert pair.prompt == {
        "intent_id": slow.input["intent_id"],
        "intent_text": slow.input["intent_text"],
    }
    assert pair.margin == sample.meta.quality_score


@pytest.mark.parametrize("fast_duration", [7300, 9000, 12000])
def test_a_later_plan_not_faster_by_the_margin_makes_nothing(fast_duration: int) -> None:
    assert feed(*slow_and_fast(fast_duration))[0] == []


def test_exactly_the_margin_is_enough_and_the_margin_is_the_setting() -> None:
    slow, fast = slow_and_fast(7200)  # 20% faster
    (sample,), _ = feed(slow, fast)
    assert sample.meta.quality_score == 0.2
    assert sample.feedback.quality_label == "acceptable"
    assert feed(slow, fast, margin=0.25)[0] == []


def test_event_time_decides_later_whichever_arrives_first() -> None:
    slow, fast = slow_and_fast(3000)
    assert feed(fast, slow)[0] == feed(slow, fast)[0]
    # the faster plan ran first: the later one is slower, no optimization either way
    intent = Intent()
    early_fast = intent.executed(intent.first, 1, 3000)
    late_slow = intent.executed(intent.plan(), 5, 9000)
    assert feed(early_fast, late_slow)[0] == feed(late_slow, early_fast)[0] == []


def test_equal_event_times_and_the_same_plan_make_nothing() -> None:
    intent = Intent()
    other = intent.plan()
    at_once = intent.executed(intent.first, 1, 9000), intent.executed(other, 1, 3000)
    assert feed(*at_once)[0] == []
    again = intent.executed(intent.first, 1, 9000), intent.executed(intent.first, 5, 3000)
    assert feed(*again)[0] == []


def test_failed_executions_and_other_stages_are_not_executions() -> None:
    intent = Intent()
    failed = intent.executed(intent.plan(), 5, 10, status="failed", error="timeout")
    assert failed.output["status"] == "failed"
    assert pair_sample(failed.to_dict()) is None
    state = merge_snapshot(None, decode_plan(orjson.dumps(intent.first)), T0)
    built = intent.sim.stage(intent.first, "completed", T0, stage="build")
    (build,) = on_stage(decode_stage(orjson.dumps(built)), state, NOW).samples
    assert pair_sample(build.to_dict()) is None


def test_an_execution_without_duration_or_tokens_compares_nothing() -> None:
    intent = Intent()
    sample = intent.executed(intent.first, 1, None)
    written = pair_sample(sample.to_dict())
    assert written is not None
    assert execution_of(written) == "no_metrics"


def test_cheaper_in_tokens_counts_and_costlier_by_more_than_the_margin_does_not() -> None:
    intent = Intent()
    slow = intent.executed(intent.first, 1, 4000, token_usage={"total_tokens": 2000})
    cheaper = intent.executed(
        intent.plan(), 5, 4100, token_usage={"prompt_tokens": 900, "completion_tokens": 300}
    )
    (sample,), _ = feed(slow, cheaper)
    assert sample.output["improvement"] == {"duration_ms": -0.025, "tokens": 0.4}
    assert sample.output["execution"]["token_usage"] == {  # the total added, as the schema's
        "total_tokens": 1200,
        "prompt_tokens": 900,
        "completion_tokens": 300,
    }
    assert sample.meta.quality_score == 0.4
    faster_but_costly = intent.executed(intent.plan(), 6, 1000, token_usage={"total_tokens": 2500})
    assert saving(execution(slow), execution(faster_but_costly), MARGIN) is None


def test_a_replayed_execution_makes_the_same_sample_and_is_held_once() -> None:
    slow, fast = slow_and_fast(3000)
    once, _ = feed(slow, fast)
    twice, held = feed(slow, fast, fast)
    assert twice == once * 2
    assert len(held.executions) == 2


def test_the_rekeyed_record_is_a_plan_or_an_execution() -> None:
    found = execution(slow_and_fast()[0])
    assert read_rekeyed(found.to_json()) == found


def test_a_pipeline_outcome_that_is_no_execution_is_skipped_unvalidated() -> None:
    assert pair_sample({"sample_family": "pipeline_outcome", "input": "not validated"}) is None


def test_the_family_has_its_own_collection_point() -> None:
    (sample,), _ = feed(*slow_and_fast(3000))
    assert collection_point(sample) == "plan_optimization"
    assert Settings(collect={"off": ["plan_optimization"]}).collect.off == ("plan_optimization",)


def test_the_margin_is_a_share_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().pairs.optimization_margin == 0.2
    monkeypatch.setenv("LEARNSTREAM_PAIRS__OPTIMIZATION_MARGIN", "0.35")
    assert Settings().pairs.optimization_margin == 0.35
    for bad in ("0", "1", "-0.1"):
        monkeypatch.setenv("LEARNSTREAM_PAIRS__OPTIMIZATION_MARGIN", bad)
        with pytest.raises(ValidationError):
            Settings()


# --- bounds: executions have their own ------------------------------------------------------

#: What one changelog record may hold: the broker's message.max.bytes default (1 MiB).
BROKER_RECORD_BYTES = 1024 * 1024


def executions_of_one_plan(count: int, step_bytes: int = 10) -> list[Execution]:
    """Return ``count`` executions of one plan, a second apart, each with a step of
    ``step_bytes`` characters."""
    intent = Intent()
    found = execution(intent.executed(intent.first, 1, 9000))
    plan = found.plan | {"steps": ["x" * step_bytes]}
    return [
        found.model_copy(
            update={
                "sample_id": f"run-{i:04d}",
                "event_time": T0 + timedelta(seconds=i),
                "plan": plan,
            }
        )
        for i in range(count)
    ]


def decided(found: Execution, approved: bool, seconds: int, prompt_bytes: int = 10) -> Plan:
    """Return a decided plan of the executions' intent, ``seconds`` after T0."""
    return Plan(
        sample_id=f"{'approved' if approved else 'rejected'}-{seconds}",
        intent_id=found.intent_id,
        project_id=found.project_id,
        event_time=T0 + timedelta(seconds=seconds),
        approved=approved,
        prompt={"intent_text": "x" * prompt_bytes},
        completion={"plan_id": f"plan-{seconds}", "objective": "x" * prompt_bytes},
    )


@pytest.mark.parametrize(("count", "step_bytes"), [(MAX_EXECUTIONS + 20, 10), (200, 8 * 1024)])
def test_an_intent_executed_often_still_holds_and_pairs_its_plans(
    count: int, step_bytes: int
) -> None:
    runs = executions_of_one_plan(count, step_bytes)
    held: IntentPlans | None = None
    reasons = []
    for run in runs:
        held, _, reason = match_execution(held, run, NOW, 1, MARGIN)
        reasons.append(reason)
    assert held is not None
    assert "intent_full" in reasons  # the executions' own bound was reached
    assert len(held.executions) <= MAX_EXECUTIONS
    assert held.execution_size <= MAX_EXECUTION_BYTES
    held, _, reason = match(held, decided(runs[0], False, 10_000), NOW, 1)
    assert reason is None
    held, pairs, reason = match(held, decided(runs[0], True, 10_060), NOW, 1)
    assert reason is None
    assert [(p.rejected_sample_id, p.chosen_sample_id) for p in pairs] == [
        ("rejected-10000", "approved-10060")
    ]
    assert [p.sample_id for p in held.rejected + held.approved] == [
        "rejected-10000",
        "approved-10060",
    ]


def test_an_intent_full_of_plans_and_executions_fits_one_changelog_record() -> None:
    runs = executions_of_one_plan(MAX_EXECUTIONS * 2, step_bytes=4 * 1024)
    held: IntentPlans | None = None
    for run in runs:
        held, _, _ = match_execution(held, run, NOW, 1, MARGIN)
    for i in range(2 * MAX_PLANS + 10):
        plan = decided(runs[0], i % 2 == 1, i, prompt_bytes=4096)
        held, _, _ = match(held, plan, NOW, 1)
    assert held is not None
    assert held.size <= MAX_PLAN_BYTES
    assert held.size > MAX_PLAN_BYTES - 8 * 1024  # full: the plans' budget is used
    assert held.execution_size > MAX_EXECUTION_BYTES - 8 * 1024
    stored = orjson.dumps(held.model_dump(mode="json"))  # the table value, as Faust writes it
    assert len(stored) < BROKER_RECORD_BYTES - 64 * 1024
    assert IntentPlans.model_validate(orjson.loads(stored)) == held


def test_a_value_stored_with_one_budget_for_both_counts_its_executions_apart() -> None:
    slow, fast = (execution(s) for s in slow_and_fast())
    plan = decided(slow, False, 10)
    both = len(plan.to_json()) + len(slow.to_json()) + len(fast.to_json())
    raw = {
        "touched": NOW.isoformat(),
        "partition": 1,
        "size": both,
        "rejected": [plan.model_dump(mode="json")],
        "executions": [slow.model_dump(mode="json"), fast.model_dump(mode="json")],
    }
    held = IntentPlans.model_validate(raw)
    assert held.size == len(plan.to_json())
    assert held.execution_size == len(slow.to_json()) + len(fast.to_json())


# --- valid against the official schemas, both formats ---------------------------------------


@pytest.fixture(scope="module")
def validators(mplp_schemas: Path) -> dict[str, Any]:
    return learning_validators(mplp_schemas / "learning")


def test_the_samples_are_mplp_core_valid_in_json_and_avro(validators: dict[str, Any]) -> None:
    samples = optimization_samples()
    assert [s.feedback.quality_label for s in samples] == ["good", "acceptable"]
    for sample in samples:
        wire = sample.to_dict()
        for codec, read in ((JsonSampleCodec(), json.loads), (AvroSampleCodec(), plain_read)):
            consumed = read(codec.encode(wire))
            assert consumed == wire
            assert mplp_errors(validators, consumed) == []
        assert validate_sample(wire) == []  # ours too: learning_sample.json, the feedback block


# --- through the worker ---------------------------------------------------------------------


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[RunningWorker]:
    async with running_worker(tmp_path, NOW) as built:
        # The wall clock: a stage settles once an end-offset round of the corrections topic
        # started after it was read, which a stopped clock never sees.
        built[3].now = None
        yield built


async def test_the_worker_turns_two_executions_of_an_intent_into_a_sample_and_a_pair(
    worker: RunningWorker, validators: dict[str, Any]
) -> None:
    runtime, mocks, feed_, _ = worker
    intent = Intent(seed=9)
    plans = [(intent.first, 1, 9000), (intent.plan(), 5, 3000)]
    for snap, minutes, duration in reversed(plans):  # the faster, later one arrives first
        plan_id = snap["plan"]["plan_id"]
        where = {"key": plan_id.encode()}
        where["partition"] = partition_of(plan_id, runtime.settings.topics.partitions)
        await feed_.put("plans", runtime.settings.topics.name("plans"), orjson.dumps(snap), **where)
        event = intent.stage(snap, minutes, duration)
        name = runtime.settings.topics.name("pipeline_stage")
        await feed_.put("outcomes", name, orjson.dumps(event), **where)
    rekeyed = [c.kwargs for c in mocks["pair_intents"].await_args_list]
    first = intent.first
    key = f"{first['project_id']}:{first['intent']['intent_id']}"
    assert [r["key"] for r in rekeyed] == [key.encode()] * 2
    topic = runtime.topics.pair_intents.get_topic_name()
    for record in rekeyed:
        await feed_.put("replans", topic, record["value"], key=record["key"], partition=1)

    samples = sent_samples(mocks)
    outcomes = [s for s in samples if s["sample_family"] == "pipeline_outcome"]
    (sample,) = [s for s in samples if s["sample_family"] == "plan_optimization"]
    assert sample["input"]["plan"]["plan_id"] == plans[0][0]["plan"]["plan_id"]
    assert sample["output"]["plan"]["plan_id"] == plans[1][0]["plan"]["plan_id"]
    assert sample["meta"]["source_event_ids"] == [
        outcomes[1]["meta"]["source_event_ids"][0],
        outcomes[0]["meta"]["source_event_ids"][0],
    ]
    assert mplp_errors(validators, sample) == []
    (call,) = mocks["preference_pairs"].await_args_list
    pair = orjson.loads(call.kwargs["value"])
    assert pair["kind"] == "optimization"
    assert pair["chosen_sample_id"] == pair["rejected_sample_id"] == sample["sample_id"]
    assert pair["chosen"] == sample["output"]["plan"]
    assert pair["rejected"] == sample["input"]["plan"]
    metric = runtime.metrics.registry.get_sample_value
    assert metric("learnstream_preference_pairs_total", {"kind": "optimization"}) == 1
    labels = {"family": "plan_optimization", "quality": "good"}
    assert metric("learnstream_samples_total", labels) == 1
    assert mocks["dlq"].await_count == 0
