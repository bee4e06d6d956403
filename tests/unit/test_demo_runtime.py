"""The demo's simulated runtime sends what every family needs, plan_optimization included:
completed executions of two plans of one intent and project (streams/io/demo_runtime.py)."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from learnstream.streams.io.demo_runtime import _plan_story
from learnstream.streams.sim.simulate import Simulator


class Published:
    """A publisher that keeps plans and stages."""

    def __init__(self) -> None:
        self.plans: list[dict[str, Any]] = []
        self.stages: list[dict[str, Any]] = []

    def publish_plan(self, snap: dict[str, Any]) -> bool:
        self.plans.append(snap)
        return True

    def publish_stage(self, event: dict[str, Any]) -> bool:
        self.stages.append(event)
        return True

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: True  # every other publish_*


def _completed(stage: dict[str, Any]) -> bool:
    status = stage.get("stage_status") or stage["payload"].get("status")
    return bool(status == "completed")


def test_completed_plans_are_replanned_for_their_intent_and_run_again() -> None:
    sim, rng, pub = Simulator(seed=42, pii_ratio=0.4), random.Random(42), Published()
    for _ in range(200):
        _plan_story(sim, pub, rng)  # type: ignore[arg-type]
    ran = {s["payload"]["plan_id"] for s in pub.stages if _completed(s)}
    by_intent: dict[tuple[str, str], set[str]] = defaultdict(set)
    for snap in pub.plans:
        if snap["plan"]["plan_id"] in ran:
            by_intent[(snap["project_id"], snap["intent"]["intent_id"])].add(
                snap["plan"]["plan_id"]
            )
    replanned = [plans for plans in by_intent.values() if len(plans) >= 2]
    assert len(replanned) >= 10  # about 0.8 * 0.5 * 0.8 * 0.4 of the stories: ~26 of 200
    assert all(s["payload"]["duration_ms"] > 0 for s in pub.stages if _completed(s))
