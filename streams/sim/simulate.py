"""Realistic MPLP events for the demo, the tests and the benchmarks (seeded, reproducible)."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta
from typing import Any

__all__ = ["BAD_RECORDS", "PII_SAMPLES", "Simulator"]

PII_SAMPLES = {
    "email": "dana.whitfield@example.org",
    "phone": "+1 415-555-0132",
    "card": "4111 1111 1111 1111",
    "ip": "10.20.30.40",
}
_REQUESTS = [
    (
        "Fix the login 500 error reported by {email}",
        ["Reproduce the error", "Patch the session handler", "Add a regression test"],
    ),
    (
        "Migrate billing for the card ending {card} to the new processor",
        ["Export invoices", "Map customer ids", "Switch the webhook"],
    ),
    (
        "Call {phone} back about the failed deploy and write a postmortem",
        ["Collect deploy logs", "Draft timeline", "Schedule review"],
    ),
    (
        "Block traffic from {ip} on the edge firewall",
        ["Confirm the source", "Add a deny rule", "Watch error rates"],
    ),
    (
        "Summarise last week's support tickets",
        ["Query the ticket store", "Cluster by topic", "Write the summary"],
    ),
    (
        "Add dark mode to the settings page",
        ["Add a theme toggle", "Update CSS variables", "Test contrast"],
    ),
]
_REJECT_REASONS = [
    "Too risky before the release freeze",
    "Missing a rollback step",
    "Wrong service: that is the legacy stack",
    "Please ask {email} first",
]
_DELTAS = [
    ("Add a rollback step before switching", "refinement"),
    ("Use the staging cluster, not production", "correction"),
    ("Also notify on-call at {phone}", "expansion"),
]
#: (topic field, value, expected DLQ reason) — one of each kind of bad record.
BAD_RECORDS: list[tuple[str, bytes, str]] = [
    ("plan_approved", b"\xff\xfe not utf-8", "undecodable"),
    ("delta_intents", b'{"event_id": "oops", ', "invalid_json"),
    ("plans", b'{"plan": {"plan_id": "not-a-uuid", "title": 7}}', "schema_violation"),
    (
        "pipeline_stage",
        b'{"event_family": "telemetry", "event_type": "cpu", "payload": {}}',
        "unknown_event_type",
    ),
]


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class Simulator:
    """Generate MPLP records the way an agent runtime would publish them."""

    def __init__(self, seed: int = 7, pii_ratio: float = 0.5) -> None:
        self.rng = random.Random(seed)
        self.pii_ratio = pii_ratio
        # Every other plan / stage event in the official MPLP spelling, the others in the
        # seeds' (docs/architecture.md §3): a counter, not the rng, so the alternation takes
        # no random draw and a seed's scenario does not depend on it.
        self._plans = self._stages = 0

    def uuid(self) -> str:
        """Return a reproducible UUID v4."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _text(self, template: str) -> str:
        if self.rng.random() < self.pii_ratio:
            return template.format(**PII_SAMPLES)
        return template.format(
            email="the reporter", phone="the owner", card="on file", ip="the bad host"
        )

    def plan(
        self,
        when: datetime,
        project_id: str | None = None,
        status: str = "proposed",
        intent: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Return a plan snapshot with its intent and a project context.

        ``intent`` (another snapshot's ``intent`` object): a new plan for that same intent,
        a replan, with its text and id; by default every plan resolves an intent of its own.
        """
        request, steps = self.rng.choice(_REQUESTS)
        text = self._text(request) if intent is None else intent["text"]
        plan_id = self.uuid()
        self._plans += 1
        version = (
            {"protocol_version": "1.0.0", "schema_version": "1.0.0"}
            if self._plans % 2 == 0
            else {"protocolVersion": "1.0.0"}
        )
        return {
            "plan": {
                "meta": {**version, "source": "demo-runtime", "updated_at": _iso(when)},
                "plan_id": plan_id,
                "context_id": self.uuid(),
                "title": text[:60],
                "objective": text,
                "status": status,
                "steps": [
                    {"step_id": self.uuid(), "description": s, "status": "pending"} for s in steps
                ],
            },
            "intent": dict(intent) if intent else {"intent_id": self.uuid(), "text": text},
            "context": {
                "repo": "acme/shop",
                "files": ["src/app.py", "config/prod.env", "keys/deploy.secret"],
                "owner": self._text("{email}"),
                "db.secret": "hunter2",
            },
            "project_id": project_id or self.uuid(),
        }

    def _event(
        self,
        family: str,
        kind: str,
        when: datetime,
        project_id: str | None,
        payload: dict[str, Any],
    ) -> dict[str, Any]:
        event = {
            "event_id": self.uuid(),
            "event_family": family,
            "event_type": kind,
            "timestamp": _iso(when),
            "payload": payload,
        }
        if project_id:
            event["project_id"] = project_id
        return event

    def decision(self, snap: dict[str, Any], approved: bool, when: datetime) -> dict[str, Any]:
        """Return a plan_approved / plan_rejected event for ``snap``."""
        reason = None if approved else self._text(self.rng.choice(_REJECT_REASONS))
        payload = {
            "plan_id": snap["plan"]["plan_id"],
            "confirm_id": self.uuid(),
            "decided_by_role": "role-reviewer-001",
        }
        if reason:
            payload["reason"] = reason
        kind = "plan_approved" if approved else "plan_rejected"
        return self._event("pipeline_stage", kind, when, snap.get("project_id"), payload)

    def delta(
        self,
        snap: dict[str, Any],
        when: datetime,
        impact: bool = False,
        changes: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Return a delta_intent event correcting ``snap`` (optionally with its impact).

        ``changes``: what the runtime applied, e.g. ``{"title": "..."}`` (a JSON merge patch of
        the plan, which makes a preference pair); by default ``{"steps_added": 1}`` (none).
        """
        summary, kind = self.rng.choice(_DELTAS)
        payload: dict[str, Any] = {
            "delta_id": self.uuid(),
            "intent_id": snap["intent"]["intent_id"],
            "plan_id": snap["plan"]["plan_id"],
            "delta_type": kind,
            "change_summary": self._text(summary),
            "feedback_text": self._text(summary),
            "corrected_fields": list(changes) if changes else ["steps"],
            "changes": changes or {"steps_added": 1},
        }
        if impact:
            payload["impact"] = {
                "actual_impact_summary": "Two services redeployed",
                "impact_scope": "module",
                "comp_plan_required": False,
                "rollback_used": False,
                "risk_level": "medium",
            }
        return self._event(
            "delta_intent", "delta_intent_created", when, snap.get("project_id"), payload
        )

    def impact_analysis(
        self, delta: dict[str, Any], when: datetime, *, rolled_back: bool = False
    ) -> dict[str, Any]:
        """Return the ImpactAnalysisEvent (core event, family ``impact_analysis``) of
        ``delta``: it names the delta and its plan, and says whether it was rolled back."""
        payload = {
            "delta_id": delta["payload"]["delta_id"],
            "plan_id": delta["payload"]["plan_id"],
            "impact": {
                "actual_impact_summary": self._text("Redeployed the service near {ip}"),
                "impact_scope": "module",
                "comp_plan_required": False,
                "rollback_used": rolled_back,
                "risk_level": "high" if rolled_back else "low",
            },
            "impact_score": 0.8 if rolled_back else 0.2,
        }
        project = delta.get("project_id")
        return self._event("impact_analysis", "impact_analysis_completed", when, project, payload)

    def core_event(
        self, family: str, when: datetime, payload: dict[str, Any], project_id: str | None = None
    ) -> dict[str, Any]:
        """Return a core event of ``family`` (``mplp-event-core``), e.g. an ``intent`` or a
        ``cost_budget`` one, which joins the plan its payload names (streams/state/facts.py)."""
        return self._event(family, f"{family}_recorded", when, project_id, payload)

    def stage(
        self, snap: dict[str, Any], status: str, when: datetime, stage: str = "execute"
    ) -> dict[str, Any]:
        """Return a pipeline_stage event of ``stage`` with ``status`` (``started``: running).

        Every other one in the official form (top-level ``pipeline_id``, ``stage_id``,
        ``stage_status``), the others with ``payload.stage`` / ``payload.status``.
        """
        payload: dict[str, Any] = {
            "plan_id": snap["plan"]["plan_id"],
            "duration_ms": self.rng.randint(50, 9000),
        }
        if status == "failed":
            payload["error"] = self._text("Timeout talking to {ip}")
        event = self._event(
            "pipeline_stage", f"stage_{status}", when, snap.get("project_id"), payload
        )
        self._stages += 1
        if self._stages % 2 == 0:
            official = "running" if status == "started" else status
            return event | {
                "pipeline_id": snap["plan"]["plan_id"],
                "stage_id": stage,
                "stage_status": official,
            }
        payload |= {"stage": stage, "status": status}
        return event

    def map_session(
        self, when: datetime, *, outcome: str | None = "success", roles: int = 3, turns: int = 4
    ) -> list[dict[str, Any]]:
        """Return the MAP events of one collaboration session, in order, a second apart.

        Turns go round the roles (a handoff each time the role changes); a conflict is
        detected and resolved halfway. ``outcome`` None leaves the session without its
        ``MAPSessionCompleted`` (it ends by the timeout); "partial" leaves the conflict open.
        """
        session, names = self.uuid(), [self.uuid() for _ in range(roles)]
        events: list[dict[str, Any]] = []

        def add(kind: str, payload: dict[str, Any], **extra: Any) -> None:
            moment = when + timedelta(seconds=len(events))
            event = {"event_id": self.uuid(), "event_type": kind, "timestamp": _iso(moment)}
            events.append({**event, "session_id": session, **extra, "payload": payload})

        mode = self.rng.choice(["round_robin", "orchestrated", "broadcast"])
        add("MAPSessionStarted", {"coordination_mode": mode}, initiator_role=names[0])
        add("MAPRolesAssigned", {"roles": [{"role_id": name} for name in names]})
        for turn in range(1, turns + 1):
            role = names[(turn - 1) % roles]
            add("MAPTurnDispatched", {"role_id": role, "turn_number": turn})
            add("MAPTurnCompleted", {"role_id": role, "turn_number": turn})
            if turn == turns // 2:
                add("MAPConflictDetected", {"role_id": role})
                if outcome != "partial":
                    add("MAPConflictResolved", {"role_id": role})
        add(
            "MAPBroadcastSent",
            {"broadcaster_role_id": names[0], "target_count": roles - 1},
            target_roles=names[1:],
        )
        if outcome is not None:
            add("MAPSessionCompleted", {"outcome": outcome})
        return events

    def sa_run(
        self, when: datetime, *, plan_id: str | None = None, steps: int = 2, fail_last: bool = False
    ) -> list[dict[str, Any]]:
        """Return a single agent's events, in order, a second apart: initialised, its plan
        evaluated, then each step started and completed (the last failed if ``fail_last``)."""
        sa_id, events = self.uuid(), list[dict[str, Any]]()

        def add(kind: str, payload: dict[str, Any] | None = None) -> None:
            moment = when + timedelta(seconds=len(events))
            event = {"event_id": self.uuid(), "event_type": kind, "timestamp": _iso(moment)}
            event |= {"sa_id": sa_id} | ({"plan_id": plan_id} if plan_id else {})
            events.append(event | ({"payload": payload} if payload is not None else {}))

        add("SAInitialized")
        add("SAPlanEvaluated")
        for number in range(steps):
            step = self.uuid()
            add("SAStepStarted", {"step_id": step, "agent_role": "executor"})
            if fail_last and number == steps - 1:
                add("SAStepFailed", {"step_id": step, "error": "tool timed out"})
            else:
                add("SAStepCompleted", {"step_id": step, "status": "completed", "result": {}})
        add("SACompleted")
        return events

    def execution(
        self, when: datetime, *, status: str = "completed", seconds: float = 2.0
    ) -> list[dict[str, Any]]:
        """Return a runtime execution's events: running, then ``status`` ``seconds`` later."""
        execution_id = self.uuid()
        base = {"event_family": "runtime_execution", "execution_id": execution_id}
        base |= {"executor_kind": "tool", "executor_role": "code_search"}
        return [
            base
            | {"event_id": self.uuid(), "event_type": f"execution_{state}", "status": state}
            | {"timestamp": _iso(when + timedelta(seconds=offset))}
            for state, offset in (("running", 0.0), (status, seconds))
        ]

    def graph_updates(
        self,
        when: datetime,
        deltas: list[tuple[str, int, int]],
        *,
        graph_id: str | None = None,
        created: bool = False,
    ) -> list[dict[str, Any]]:
        """Return GraphUpdateEvents of one graph, a second apart: one per (update_kind,
        node_delta, edge_delta); the first names the plan that caused the change and, with
        ``created``, says the graph is new (``graph_created``: its size before is 0)."""
        graph, plan = graph_id or self.uuid(), self.uuid()
        events = []
        for number, (kind, nodes, edges) in enumerate(deltas):
            event: dict[str, Any] = {"event_id": self.uuid(), "event_family": "graph_update"}
            named = "graph_created" if created and number == 0 else "graph_updated"
            event |= {"event_type": named, "graph_id": graph, "update_kind": kind}
            event |= {"node_delta": nodes, "edge_delta": edges, "source_module": "plan"}
            event["timestamp"] = _iso(when + timedelta(seconds=number))
            event["payload"] = {"plan_id": plan} if number == 0 else {}
            events.append(event)
        return events

    def at(self, base: datetime, seconds: float) -> datetime:
        """Return ``base`` shifted by ``seconds`` (helper for scenarios)."""
        return base + timedelta(seconds=seconds)
