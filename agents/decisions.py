"""Agent: Confirm decisions -> confirm_decision and (joined) intent_resolution."""

from __future__ import annotations

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import RecordOrigin, decode_decision
from streams.fields import InputNotes
from streams.join import on_decision, plan_key

__all__ = ["register"]


def expected_type(runtime: Runtime, topic: str) -> str:
    """Return the event type the decision topic ``topic`` carries."""
    approved = runtime.settings.topics.name("plan_approved")
    return "plan_approved" if topic == approved else "plan_rejected"


def register(runtime: Runtime) -> None:
    """Register the decisions agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        msg, notes = event.message, InputNotes()
        kind = expected_type(runtime, msg.topic)
        decision = decode_decision(msg.value, kind, origin=RecordOrigin.of(msg), notes=notes)
        runtime.metrics.note_input(notes)
        key = plan_key(decision.payload.plan_id)
        outcome = on_decision(decision, runtime.plan_state(key), now())
        await runtime.apply(key, outcome, event, "decisions", decision.timestamp)

    @runtime.app.agent(runtime.topics.decisions, name="learnstream.decisions")
    async def decisions(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("decisions", event, handle)
