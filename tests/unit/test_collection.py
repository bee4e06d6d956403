"""Collection controls (streams/samples/collection.py, ``Emitter.collected``): each MPLP
collection point can be switched off, each family sampled at a rate decided by its id."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app
from learnstream.streams.join.rules import on_decision, on_delta, on_stage
from learnstream.streams.samples.collection import POINTS, collection_point, in_sample
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.sample import LearningSample
from tests.support.apps import close_consumer_loop
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.unit import test_builders as tb

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def samples() -> list[LearningSample]:
    state = tb.plan_state()
    return [
        *on_decision(tb.decision(), state, tb.NOW).samples,  # confirm + intent
        *on_delta(tb.delta(tb.IMPACT), state, tb.NOW).samples,  # correction + impact
        *on_stage(tb.stage("completed"), state, tb.NOW).samples,
        *on_stage(tb.stage("failed", error="timeout"), state, tb.NOW).samples,
    ]


def test_every_sample_has_its_taxonomy_collection_point() -> None:
    points = [(s.sample_family, collection_point(s)) for s in samples()]
    assert points == [
        ("confirm_decision", "user_feedback"),
        ("intent_resolution", "intent_resolution"),
        ("error_correction", "plan_revision"),
        ("delta_impact", "impact_analysis_completion"),
        ("pipeline_outcome", "execution_completion"),
        ("pipeline_outcome", "pipeline_failure"),
    ]
    assert {point for _, point in points} <= set(POINTS)


def test_the_rate_keeps_a_share_of_ids_and_always_the_same_ones() -> None:
    ids = [sample_id("pipeline_outcome", str(uuid.UUID(int=n, version=4))) for n in range(10_000)]
    kept = [i for i in ids if in_sample(i, 0.1)]
    assert 800 < len(kept) < 1_200
    assert kept == [i for i in ids if in_sample(i, 0.1)]  # a replay keeps the same ones
    assert all(in_sample(i, 0.5) for i in kept)  # a higher rate keeps a superset
    assert all(in_sample(i, 1.0) for i in ids)
    assert not any(in_sample(i, 0.0) for i in ids)


def test_unknown_points_families_and_rates_are_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="not collection points: graph_stuff"):
        Settings(collect={"off": ["graph_stuff"]})
    with pytest.raises(ValidationError, match="not sample families: outcomes"):
        Settings(collect={"rates": {"outcomes": 0.5}})
    with pytest.raises(ValidationError, match="a rate is a share: 0 to 1"):
        Settings(collect={"rates": {"pipeline_outcome": 1.5}})


async def test_the_emitter_skips_what_is_off_or_outside_its_rate_and_counts_it(
    tmp_path: Any,
) -> None:
    collect: dict[str, Any] = {"off": ["user_feedback"], "rates": {"pipeline_outcome": 0.0}}
    settings = Settings(store="memory://", data_dir=str(tmp_path), collect=collect)
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    try:
        runtime = wire(app, settings)
        ready = runtime.emitter.prepare(samples())
        assert [s.sample_family for s, _ in ready] == [
            "intent_resolution",
            "error_correction",
            "delta_impact",
        ]
        metric = runtime.metrics.registry.get_sample_value
        skipped = "learnstream_samples_skipped_total"
        assert metric(skipped, {"family": "confirm_decision", "reason": "point_off"}) == 1
        assert metric(skipped, {"family": "pipeline_outcome", "reason": "rate"}) == 2
    finally:
        close_consumer_loop(app)


async def test_by_default_everything_is_collected(tmp_path: Any) -> None:
    settings = Settings(store="memory://", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    try:
        built = samples()
        assert wire(app, settings).emitter.collected(built) == built
    finally:
        close_consumer_loop(app)
