"""The demo's simulated agent runtime: a steady, realistic mix of MPLP events.

Per plan: ~60 % approved, ~20 % rejected, ~20 % corrected (a delta, sometimes carrying its
impact, else now and then followed by an ImpactAnalysisEvent on ``mplp.core_events``);
about half the approved/corrected plans are executed (one in five fails), and two in five of
the completed ones are replanned for the same intent and run again (plan_optimization). Now
and then a MAP session, a single agent's steps, a runtime execution, a graph change or a
cost_budget event.
Some decisions arrive before their plan, a few plans never arrive (join misses), and ~2 %
of records are malformed, so every path of the pipeline shows up. Beside the runtime, a user
rates one of the agent's answers every 2 s through the A2E learn API (dialog_response).
"""

from __future__ import annotations

import asyncio
import logging
import random
from datetime import UTC, datetime
from typing import Any

from learnstream.streams.a2e.client import LearnAPI, LearnFailed
from learnstream.streams.a2e.correlate import LearnTimeout
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.a2e_transport import KafkaTransport
from learnstream.streams.io.connection import Broker
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.sim.simulate import BAD_RECORDS, Simulator

__all__ = ["simulate_feedback", "simulate_runtime"]

log = logging.getLogger("learnstream.demo")

#: Turns a user of the demo's agent rates, through the A2E learn API (dialog_response).
_TURNS = (
    ("Why is checkout slow?", "The orders query scans the whole table; add an index."),
    ("Summarise the failed deploy", "The migration timed out after 30 s on the users table."),
    ("Which test is flaky?", "test_refund_webhook: it sleeps instead of polling the queue."),
)


def _now() -> datetime:
    return datetime.now(UTC)


def _plan_story(sim: Simulator, pub: RuntimePublisher, rng: random.Random) -> str | None:
    """Publish one plan's events; return the plan's id if the plan was published."""
    snap, roll = sim.plan(_now()), rng.random()
    early = rng.random() < 0.05  # decision published before its plan
    missing = rng.random() < 0.01  # the plan never arrives
    if roll < 0.6 or roll >= 0.8:
        decision = sim.decision(snap, approved=roll < 0.6, when=_now())
        if early or missing:
            pub.publish_decision(decision)
    if not missing:
        pub.publish_plan(snap)
    if roll < 0.6 and not (early or missing):
        pub.publish_decision(decision)
    elif 0.6 <= roll < 0.8:
        carries = rng.random() < 0.3
        delta = sim.delta(snap, _now(), impact=carries)
        pub.publish_delta(delta)
        if not carries and rng.random() < 0.5:  # its impact analysis, as a core event
            pub.publish_core_event(
                sim.impact_analysis(delta, _now(), rolled_back=rng.random() < 0.2)
            )
    elif not (early or missing):
        pub.publish_decision(decision)
    if roll < 0.8 and not missing and rng.random() < 0.5:
        failed = rng.random() < 0.2
        _execute(sim, pub, snap, failed)
        if not failed and rng.random() < 0.4:  # replanned for the same intent, and run again
            replan = sim.plan(_now(), snap["project_id"], intent=snap["intent"])
            pub.publish_plan(replan)
            pub.publish_decision(sim.decision(replan, approved=True, when=_now()))
            _execute(sim, pub, replan, failed=False)
    return None if missing else str(snap["plan"]["plan_id"])


def _execute(sim: Simulator, pub: RuntimePublisher, snap: dict[str, Any], failed: bool) -> None:
    """Publish a plan's execute stage, started then ended (with its duration): two completed
    executions of one intent make a plan_optimization sample."""
    pub.publish_stage(sim.stage(snap, "started", _now()))
    pub.publish_stage(sim.stage(snap, "failed" if failed else "completed", _now()))


async def simulate_runtime(pub: RuntimePublisher, rate: float, seed: int = 42) -> None:
    """Publish plan stories at ``rate`` plans per second until cancelled."""
    sim, rng = Simulator(seed=seed, pii_ratio=0.4), random.Random(seed)
    graph, graph_new = sim.uuid(), True  # the demo project's one state graph
    interval = 1.0 / rate
    while True:
        plan_id = _plan_story(sim, pub, rng)
        if rng.random() < 0.1:  # now and then a multi-agent session, played out at once
            outcome = rng.choice(["success", "success", "partial", "failed"])
            for event in sim.map_session(_now(), outcome=outcome):
                pub.publish_map_event(event)
        if rng.random() < 0.1:  # a single agent's steps, and a tool run by the runtime
            # the agent that generated the story's plan: its SAPlanEvaluated joins the plan
            steps, fails = rng.randint(1, 3), rng.random() < 0.3
            for event in sim.sa_run(_now(), plan_id=plan_id, steps=steps, fail_last=fails):
                pub.publish_sa_event(event)
            status = rng.choice(["completed", "completed", "failed", "cancelled"])
            for event in sim.execution(_now(), status=status, seconds=rng.uniform(0.2, 5.0)):
                pub.publish_execution(event)
        if rng.random() < 0.05:  # the project's graph changes (the first time: from nothing)
            deltas = [("node_add", rng.randint(1, 4), 0), ("edge_add", 0, rng.randint(1, 5))]
            for event in sim.graph_updates(_now(), deltas, graph_id=graph, created=graph_new):
                pub.publish_graph_update(event)
            graph_new = False
        if rng.random() < 0.05:  # what a run cost (naming no plan: counted as incomplete)
            usage = {"total_tokens": rng.randint(200, 8000), "budget_tokens": 10_000}
            pub.publish_core_event(sim.core_event("cost_budget", _now(), usage))
        if rng.random() < 0.02:
            field, value, _ = rng.choice(BAD_RECORDS)
            pub.publish_raw(field, b"demo-bad", value)
        await asyncio.sleep(interval)


async def simulate_feedback(
    broker: Broker, topics: TopicSettings, every: float = 2.0, seed: int = 43
) -> None:
    """Rate one of the agent's answers through the A2E learn API every ``every`` seconds,
    as a user of the runtime would, until cancelled (each is a dialog_response sample)."""
    rng = random.Random(seed)
    requests, responses = topics.name("learn_requests"), topics.name("learn_responses")
    async with KafkaTransport(broker, requests, responses) as transport:
        api = LearnAPI(transport)
        while True:
            prompt, response = rng.choice(_TURNS)
            liked = rng.random() < 0.7
            try:
                await api.feedback(
                    polarity="POSITIVE" if liked else "NEGATIVE",
                    score=round(rng.uniform(0.3, 1.0) * (1 if liked else -1), 2),
                    prompt=prompt,
                    response=response,
                    skill_name="answer_ops_question",
                )
            except (LearnTimeout, LearnFailed) as exc:  # the demo goes on; the view shows it
                log.info("demo feedback not answered: %s", exc)
            await asyncio.sleep(every)
