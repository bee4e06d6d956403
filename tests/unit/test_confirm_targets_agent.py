"""Every Confirm decision through the decisions agent (agents/joins/plan_join.py ``Join.process``).

A decision on a context, trace, extension or other target joins no plan: its confirm_decision
goes out at once, through the same emitter as every sample (privacy, consent, the captured
event), and nothing is parked. A cancellation, sent as seed 002 §4.3 sends it
(``plan_rejected``), is one confirm_decision and never an intent_resolution.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from learnstream.streams.encoding.schemas import validate_sample
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.unit.test_agents import WHEN, Harness, harness, js, key_of

OTHER_TARGETS = ("context", "trace", "extension", "other")
TARGET_ID = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"


@pytest.fixture
async def h(tmp_path: Any) -> AsyncIterator[Harness]:
    async with harness(tmp_path) as built:
        yield built


def confirm(confirm_id: str, target_type: str, target_id: str, status: str) -> dict[str, Any]:
    """Return a Confirm after seed 002's ``addDecision(status)``."""
    return {
        "meta": {"protocolVersion": "1.0.0"},
        "confirm_id": confirm_id,
        "target_type": target_type,
        "target_id": target_id,
        "status": status,
        "requested_by_role": "role-planner-001",
        "requested_at": "2026-03-01T11:00:00Z",
        "decisions": [
            {
                "decision_id": f"decision-{confirm_id[:8]}",
                "status": status,
                "decided_by_role": "role-reviewer-001",
                "decided_at": "2026-03-01T11:29:00Z",
            }
        ],
    }


def process_decision(
    obj: dict[str, Any], project: str | None, *, riding: bool = True
) -> tuple[str, dict[str, Any]]:
    """Return (topic field, event) as seed 002 §4.3 emits them: no event id or timestamp,
    ``plan_id`` only for a plan target; ``riding``: the Confirm rides along."""
    status = obj["decisions"][-1]["status"]
    kind = "plan_approved" if status == "approved" else "plan_rejected"
    payload: dict[str, Any] = {"confirm_id": obj["confirm_id"], "decided_by": "role-reviewer-001"}
    if obj["target_type"] == "plan":
        payload["plan_id"] = obj["target_id"]
    if riding:
        payload["confirm"] = obj
    event: dict[str, Any] = {"event_family": "pipeline_stage", "event_type": kind}
    if project is not None:
        event["project_id"] = project
    return kind, event | {"payload": payload}


def summary(sample: dict[str, Any]) -> tuple[str, str | None, str, str, str]:
    return (
        sample["sample_family"],
        sample["input"].get("target_type"),
        sample["output"]["status"],
        sample["feedback"]["quality_label"],
        sample["meta"]["human_feedback_label"],
    )


def nothing_waits(h: Harness) -> None:
    assert h.dlq.await_count == 0
    assert not list(h.runtime.tables.pending.keys())
    assert h.metric("learnstream_dlq_total", reason="schema_violation") in (None, 0)


async def test_decisions_on_other_targets_are_sent_without_a_plan(h: Harness) -> None:
    project = h.sim.uuid()
    statuses = ("approved", "rejected", "cancelled", "approved")
    for target, status in zip(OTHER_TARGETS, statuses, strict=True):
        confirm_id = h.sim.uuid()
        kind, event = process_decision(confirm(confirm_id, target, TARGET_ID, status), project)
        assert "plan_id" not in event["payload"]
        await h.put(kind, js(event), key=confirm_id.encode())
    assert [summary(s) for s in h.sent()] == [
        ("confirm_decision", "context", "approved", "good", "approved"),
        ("confirm_decision", "trace", "rejected", "poor", "rejected"),
        ("confirm_decision", "extension", "cancelled", "acceptable", "not_reviewed"),
        ("confirm_decision", "other", "approved", "good", "approved"),
    ]
    for sample in h.sent():
        assert validate_sample(sample) == []
        assert "plan_id" not in sample["meta"]
        assert sample["input"]["target_id"] == TARGET_ID
        assert sample["meta"]["project_id"] == project
    events = [orjson.loads(c.kwargs["value"]) for c in h.events.await_args_list]
    assert [e["payload"]["sample_id"] for e in events] == [s["sample_id"] for s in h.sent()]
    nothing_waits(h)
    assert h.metric("learnstream_samples_total", family="confirm_decision", quality="good") == 2


async def test_seed_002_payload_without_the_confirm_or_a_plan_is_a_sample(h: Harness) -> None:
    """``{confirm_id, decided_by}``: what §4.3 sends for a context when no Confirm rides along."""
    confirm_id = h.sim.uuid()
    obj = confirm(confirm_id, "context", TARGET_ID, "approved")
    kind, event = process_decision(obj, h.sim.uuid(), riding=False)
    assert sorted(event["payload"]) == ["confirm_id", "decided_by"]
    await h.put(kind, js(event), key=confirm_id.encode())
    (sample,) = h.sent()
    assert sample["input"] == {
        "confirm_id": confirm_id,
        "target_type": "other",
        "risk_label": "unknown",
    }
    assert summary(sample)[2:] == ("approved", "good", "approved")
    nothing_waits(h)


async def test_a_cancelled_plan_decision_is_one_confirm_decision(h: Harness) -> None:
    snap = h.sim.plan(WHEN)
    plan_id = snap["plan"]["plan_id"]
    await h.put("plans", js(snap), key=key_of(snap))
    obj = confirm(h.sim.uuid(), "plan", plan_id, "cancelled")
    kind, event = process_decision(obj, snap["project_id"])
    assert kind == "plan_rejected"
    await h.put(kind, js(event), key=key_of(snap))
    assert [summary(s) for s in h.sent()] == [
        ("confirm_decision", "plan", "cancelled", "acceptable", "not_reviewed")
    ]
    assert validate_sample(h.sent()[0]) == []
    assert h.runtime.join.parked(plan_id) == []
    nothing_waits(h)


async def test_a_cancellation_before_its_plan_goes_out_at_once_and_waits_for_nothing(
    h: Harness,
) -> None:
    snap = h.sim.plan(WHEN)
    obj = confirm(h.sim.uuid(), "plan", snap["plan"]["plan_id"], "cancelled")
    kind, event = process_decision(obj, snap["project_id"])
    await h.put(kind, js(event), key=key_of(snap))
    assert h.families() == [("confirm_decision", "acceptable")]
    assert h.runtime.join.parked(snap["plan"]["plan_id"]) == []
    await h.put("plans", js(snap), key=key_of(snap))
    assert h.families() == [("confirm_decision", "acceptable")]  # no intent_resolution later
    nothing_waits(h)


async def test_consent_holds_for_decisions_that_join_no_plan(h: Harness) -> None:
    """Opted out: the event's project; a trace naming a plan the worker holds: its project."""
    snap = h.sim.plan(WHEN)
    project = snap["project_id"]
    await h.put("consent", js({"project_id": project, "enabled": False}), key=project.encode())
    await h.put("plans", js(snap), key=key_of(snap))
    named = confirm(h.sim.uuid(), "extension", TARGET_ID, "approved")
    kind, event = process_decision(named, project)
    await h.put(kind, js(event), key=TARGET_ID.encode())
    trace = confirm(h.sim.uuid(), "trace", TARGET_ID, "approved")
    kind, event = process_decision(trace, None)
    event["payload"]["plan_id"] = snap["plan"]["plan_id"]  # the plan the trace belongs to
    await h.put(kind, js(event), key=key_of(snap))
    assert h.samples.await_count == 0
    assert h.metric("learnstream_opted_out_total", reason="project") == 2
    nothing_waits(h)
