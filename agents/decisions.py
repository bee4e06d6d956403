"""Agent: Confirm decisions -> confirm_decision and (joined) intent_resolution."""

from __future__ import annotations

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import decode_decision
from streams.join import on_decision

__all__ = ["register"]


def expected_type(runtime: Runtime, topic: str) -> str:
    """Return the event type the decision topic ``topic`` carries."""
    approved = runtime.settings.topics.name("plan_approved")
    return "plan_approved" if topic == approved else "plan_rejected"


def register(runtime: Runtime) -> None:
    """Register the decisions agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        decision = decode_decision(event.message.value, expected_type(runtime, event.message.topic))
        plan_id = decision.payload.plan_id
        outcome = on_decision(decision, runtime.plan_state(plan_id), now())
        await runtime.apply(plan_id, outcome, event, "decisions", decision.timestamp)

    @runtime.app.agent(runtime.topics.decisions, name="learnstream.decisions")
    async def decisions(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("decisions", event, handle)
