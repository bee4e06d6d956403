"""A known workload and what it must produce: the generator/verifier pair of the
reliability suite and the benchmarks (after Kafka Streams' EOS system test).

The expectation is written from the docs/architecture.md §4 table directly, not from the builders,
so a builder bug shows up as a missing or unexpected sample.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from learnstream.streams.samples.ids import sample_id
from learnstream.streams.sim.simulate import Simulator

__all__ = ["Record", "Verdict", "Workload", "build_workload", "verify"]


@dataclass(frozen=True)
class Record:
    """One record to publish: topic field (TopicSettings), key, value."""

    topic: str
    key: bytes
    value: bytes


@dataclass
class Workload:
    """Records in publish order and the sample ids they must yield."""

    records: list[Record] = field(default_factory=list)
    expected: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (family, quality)
    plans: int = 0

    def add(self, topic: str, event: dict[str, Any], key: str) -> None:
        """Append a record."""
        self.records.append(Record(topic, key.encode(), orjson.dumps(event)))

    def expect(self, family: str, quality: str, event: dict[str, Any]) -> None:
        """Expect the sample of ``family`` derived from ``event``."""
        self.expected[sample_id(family, event["event_id"])] = (family, quality)

    def expect_session(self, quality: str, session_id: str) -> None:
        """Expect the multi_agent_coordination sample of a MAP session."""
        family = "multi_agent_coordination"
        self.expected[sample_id(family, session_id)] = (family, quality)


def _decision(
    w: Workload, sim: Simulator, snap: dict[str, Any], approved: bool, when: datetime
) -> dict[str, Any]:
    event = sim.decision(snap, approved, when)
    quality = "good" if approved else "poor"
    w.expect("confirm_decision", quality, event)
    w.expect("intent_resolution", quality, event)
    return event


def _story(
    w: Workload, sim: Simulator, rng: random.Random, when: datetime
) -> tuple[str, dict[str, Any] | None]:
    """Add one plan's records: plan, a decision or a correction, maybe an execution; return
    the plan's id and the correction (its delta intent), if any.

    Mix: 60 % approved, 20 % corrected, 20 % rejected; half the approved plans execute
    (one in five fails); one decision in ten is published before its plan.
    """
    snap, roll = sim.plan(when), rng.random()
    pid = snap["plan"]["plan_id"]
    early = rng.random() < 0.1  # the decision is published before its plan
    decided = roll < 0.6 or roll >= 0.8
    if decided and early:
        w.add(
            "plan_approved" if roll < 0.6 else "plan_rejected",
            _decision(w, sim, snap, roll < 0.6, when),
            pid,
        )
    w.add("plans", snap, pid)
    corrected = 0.6 <= roll < 0.8
    if decided and not early:
        w.add(
            "plan_approved" if roll < 0.6 else "plan_rejected",
            _decision(w, sim, snap, roll < 0.6, when),
            pid,
        )
    delta = None
    if corrected:
        delta = sim.delta(snap, when)
        w.expect("error_correction", "acceptable", delta)
        w.add("delta_intents", delta, pid)
    # Only approved plans run: whether an execution counts as "after a delta" depends on
    # the order two topics are consumed in, which a replay after a crash does not keep.
    if roll < 0.6 and rng.random() < 0.5:
        failed = rng.random() < 0.2
        stage = sim.stage(snap, "failed" if failed else "completed", when)
        w.expect("pipeline_outcome", "poor" if failed else "good", stage)
        w.add("pipeline_stage", sim.stage(snap, "started", when), pid)
        w.add("pipeline_stage", stage, pid)
    return pid, delta


#: A MAP session's outcome, as the simulator plays it, and the quality its sample gets.
_SESSION_QUALITY = {"success": "good", "partial": "acceptable", "failed": "poor"}


def _session(w: Workload, sim: Simulator, rng: random.Random, when: datetime) -> None:
    """Add one MAP session's records, keyed by its session id, ended by its completion."""
    outcome = rng.choice(sorted(_SESSION_QUALITY))
    events = sim.map_session(
        when, outcome=outcome, roles=rng.randint(2, 4), turns=rng.randint(2, 6)
    )
    session_id = events[0]["session_id"]
    w.expect_session(_SESSION_QUALITY[outcome], session_id)
    for event in events:
        w.add("map_events", event, session_id)


def _runs(w: Workload, sim: Simulator, rng: random.Random, when: datetime, plan_id: str) -> None:
    """Add the steps of the single agent that generated plan ``plan_id`` (the last one fails
    now and then; its SAPlanEvaluated joins the plan: plan_generation) and one runtime
    execution, each keyed as a runtime keys them."""
    steps, fails = rng.randint(1, 3), rng.random() < 0.3
    events = sim.sa_run(when, plan_id=plan_id, steps=steps, fail_last=fails)
    for event in events:
        w.add("sa_events", event, event["plan_id"])
        if event["event_type"] == "SAPlanEvaluated":
            w.expect("intent_resolution", "acceptable", event)
        if event["event_type"] in ("SAStepCompleted", "SAStepFailed"):
            good = event["event_type"] == "SAStepCompleted"
            w.expect("pipeline_outcome", "good" if good else "poor", event)
    status = rng.choice(["completed", "completed", "failed", "cancelled"])
    execution = sim.execution(when, status=status)
    quality = {"completed": "good", "failed": "poor", "cancelled": "acceptable"}[status]
    w.expect("pipeline_outcome", quality, execution[-1])
    for event in execution:
        w.add("runtime_executions", event, event["execution_id"])


def _core_events(
    w: Workload,
    sim: Simulator,
    rng: random.Random,
    delta: dict[str, Any] | None,
    when: datetime,
    plan_id: str,
) -> None:
    """Add the impact analysis of a correction (a rollback now and then), which completes its
    delta_impact, and an intent and a cost_budget event of the plan, which make no sample of
    their own (they join the plan's state); all keyed by their plan id, as they must be."""
    if delta is not None:
        rolled_back = rng.random() < 0.3
        analysis = sim.impact_analysis(delta, when, rolled_back=rolled_back)
        w.expect("delta_impact", "poor" if rolled_back else "good", analysis)
        w.add("core_events", analysis, delta["payload"]["plan_id"])
    intent = {"plan_id": plan_id, "intent_id": sim.uuid(), "text": "Summarise the backlog"}
    w.add("core_events", sim.core_event("intent", when, intent), plan_id)
    tokens = {"plan_id": plan_id, "total_tokens": rng.randint(100, 5000)}
    w.add("core_events", sim.core_event("cost_budget", when, tokens), plan_id)


def build_workload(
    min_events: int, seed: int = 1, pii_ratio: float = 0.3, sessions: float = 0.0
) -> Workload:
    """Return a workload of at least ``min_events`` records over as many plans as needed;
    after each plan, with probability ``sessions``, a MAP session, the steps of the single
    agent that generated the plan, a runtime execution and core events (the impact analysis
    of the plan's correction, if it had one; an intent and a cost_budget event of the plan)
    too."""
    sim, rng, workload = Simulator(seed, pii_ratio), random.Random(seed), Workload()
    start = datetime.now(UTC)
    while len(workload.records) < min_events:
        when = start + timedelta(milliseconds=len(workload.records))
        plan_id, delta = _story(workload, sim, rng, when)
        workload.plans += 1
        if sessions and rng.random() < sessions:
            moment = start + timedelta(milliseconds=len(workload.records))
            _session(workload, sim, rng, moment)
            _runs(workload, sim, rng, moment, plan_id)
            _core_events(workload, sim, rng, delta, moment, plan_id)
    return workload


@dataclass(frozen=True)
class Verdict:
    """What the verifier found."""

    missing: dict[str, tuple[str, str]]
    wrong: dict[str, tuple[tuple[str, str], tuple[str, str]]]
    unexpected: list[str]
    duplicated: dict[str, int]

    @property
    def delivered(self) -> bool:
        """Return True when every expected sample is there, right, and nothing else."""
        return not (self.missing or self.wrong or self.unexpected)

    def report(self) -> str:
        """Return ``ALL-RECORDS-DELIVERED`` or exactly what is missing / duplicated."""
        if self.delivered and not self.duplicated:
            return "ALL-RECORDS-DELIVERED"
        return (
            f"missing={len(self.missing)} {list(self.missing.items())[:5]} "
            f"wrong={list(self.wrong.items())[:5]} unexpected={self.unexpected[:5]} "
            f"duplicated={len(self.duplicated)} (identical ids) "
            f"{list(self.duplicated.items())[:5]}"
        )


def verify(expected: dict[str, tuple[str, str]], samples: Iterable[dict[str, Any]]) -> Verdict:
    """Compare the samples read back with what the workload must yield."""
    seen: Counter[str] = Counter()
    got: dict[str, tuple[str, str]] = {}
    for sample in samples:
        seen[sample["sample_id"]] += 1
        got[sample["sample_id"]] = (sample["sample_family"], sample["feedback"]["quality_label"])
    return Verdict(
        missing={k: v for k, v in expected.items() if k not in got},
        wrong={k: (v, got[k]) for k, v in expected.items() if k in got and got[k] != v},
        unexpected=sorted(k for k in got if k not in expected),
        duplicated={k: n for k, n in seen.items() if n > 1},
    )
