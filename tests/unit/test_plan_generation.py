"""plan_generation: an SAPlanEvaluated joined with its plan (streams/samples/generation.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from learnstream.streams.encoding.codecs import AvroSampleCodec, JsonSampleCodec
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.export.common import common_record
from learnstream.streams.join.expiry import partition_of
from learnstream.streams.join.rules import plan_key
from learnstream.streams.join.runs import decide_sa, sa_route
from learnstream.streams.mplp.run_events import decode_sa_event
from learnstream.streams.samples.collection import collection_point
from learnstream.streams.samples.generation import build_plan_generation, evaluation_quality
from learnstream.streams.samples.replans import plan_of
from learnstream.streams.sim.simulate import Simulator
from tests.support.avro_consumer import plain_read
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.mplp_learning import learning_validators, mplp_errors
from tests.support.worker import RunningWorker, running_worker, sent_samples
from tests.unit.test_builders import PLAN_ID, PROJECT_ID, plan_state

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def evaluated(plan_id: str | None = PLAN_ID, **payload: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_id": "5b0c7d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e",
        "event_type": "SAPlanEvaluated",
        "timestamp": "2026-03-01T12:00:05Z",
        "sa_id": "7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b",
        "payload": payload,
    }
    return event | ({"plan_id": plan_id} if plan_id else {})


def decoded(event: dict[str, Any]) -> Any:
    return decode_sa_event(orjson.dumps(event))


@pytest.fixture(scope="module")
def validators(mplp_schemas: Path) -> dict[str, Any]:
    return learning_validators(mplp_schemas / "learning")


def test_an_evaluated_plan_is_an_intent_resolution_of_the_system_valid_in_both_formats(
    validators: dict[str, Any],
) -> None:
    sample = build_plan_generation(decoded(evaluated()), plan_state(), T).to_dict()
    assert sample["sample_family"] == "intent_resolution"
    assert sample["input"]["intent_id"] == "intent-42"
    assert sample["output"]["plan_step_count"] == 1
    assert sample["output"]["resolution_quality_label"] == "unknown"
    assert "corrections_so_far" not in sample["state"]  # not settled: a replay could differ
    assert sample["feedback"]["source"] == "system"
    assert sample["feedback"]["quality_label"] == "acceptable"
    meta = sample["meta"]
    assert (meta["human_feedback_label"], meta["quality_score"]) == ("not_reviewed", 0.5)
    assert meta["project_id"] == PROJECT_ID  # the plan's: consent is decided for it
    assert validate_sample(sample) == []
    assert sample["feedback"]["details"]["evaluation"] == {}  # the payload's verdict fields only
    for codec, read in ((JsonSampleCodec(), json.loads), (AvroSampleCodec(), plain_read)):
        consumed = read(codec.encode(sample))
        assert consumed == sample
        assert mplp_errors(validators, consumed) == []


@pytest.mark.parametrize(
    ("payload", "quality"),
    [
        ({}, "acceptable"),
        ({"status": "passed"}, "acceptable"),
        ({"status": "FAILED"}, "poor"),
        ({"result": "invalid"}, "poor"),
        ({"valid": False}, "poor"),
        ({"passed": True}, "acceptable"),
    ],
)
def test_what_the_evaluation_says_of_the_plan_sets_the_label(
    payload: dict[str, Any], quality: str
) -> None:
    assert evaluation_quality(payload) == quality
    sample = build_plan_generation(decoded(evaluated(**payload)), plan_state(), T)
    assert sample.feedback.quality_label == quality
    assert sample.meta.quality_score == (0.0 if quality == "poor" else 0.5)


def test_it_counts_as_plan_generation_and_makes_no_replan_pair() -> None:
    sample = build_plan_generation(decoded(evaluated()), plan_state(), T)
    assert collection_point(sample) == "plan_generation"
    assert plan_of(sample) == "undecided"


def test_only_the_verdict_of_the_open_payload_is_copied() -> None:
    event = decoded(evaluated(status="failed", notes="call Jane at 555-0100", valid=False))
    details = build_plan_generation(event, plan_state(), T).feedback.details
    assert details["evaluation"] == {"status": "failed", "valid": False}


@pytest.mark.parametrize(("payload", "success"), [({}, True), ({"status": "failed"}, False)])
def test_the_common_export_counts_a_plan_the_evaluation_did_not_refuse_a_success(
    payload: dict[str, Any], success: bool
) -> None:
    sample = build_plan_generation(decoded(evaluated(**payload)), plan_state(), T)
    assert common_record(sample)["success_flag"] is success


def test_it_joins_its_plan_or_waits_for_it_and_without_a_plan_it_joins_nothing() -> None:
    route = sa_route()
    event = decoded(evaluated())
    assert route.key(event) == plan_key(PLAN_ID)
    assert decide_sa(event, None, T, None, True).park
    joined = decide_sa(event, plan_state(), T, None, True)
    assert [s.sample_family for s in joined.samples] == ["intent_resolution"]
    alone = decoded(evaluated(plan_id=None))
    assert route.key(alone) is None
    assert decide_sa(alone, None, T, None, True).samples == []


# --- through the worker ---------------------------------------------------------------------


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[RunningWorker]:
    async with running_worker(tmp_path, T) as built:
        yield built


async def test_the_worker_parks_an_evaluation_until_its_plan_comes(worker: RunningWorker) -> None:
    runtime, mocks, feed, _ = worker
    sim, topics = Simulator(seed=5, pii_ratio=0.0), runtime.settings.topics
    snapshot = sim.plan(T)
    plan_id = snapshot["plan"]["plan_id"]
    where = {"key": plan_id.encode(), "partition": partition_of(plan_id, topics.partitions)}
    events = sim.sa_run(T, plan_id=plan_id, steps=1)
    evaluation = next(e for e in events if e["event_type"] == "SAPlanEvaluated")
    await feed.put("runs", topics.name("sa_events"), orjson.dumps(evaluation), **where)
    assert sent_samples(mocks) == []  # it waits for its plan
    await feed.put("plans", topics.name("plans"), orjson.dumps(snapshot), **where)
    (sample,) = [s for s in sent_samples(mocks) if s["sample_family"] == "intent_resolution"]
    assert sample["output"]["plan_id"] == plan_id
    assert sample["meta"]["project_id"] == snapshot["project_id"]
    assert sample["feedback"]["source"] == "system"
    assert mocks["dlq"].await_count == 0
