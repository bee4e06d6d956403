"""Agent: delta intents (user corrections) -> error_correction, delta_impact."""

from __future__ import annotations

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import decode_delta
from streams.join import on_delta

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the deltas agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        delta = decode_delta(event.message.value)
        plan_id = delta.payload.plan_id
        outcome = on_delta(delta, runtime.plan_state(plan_id), now())
        await runtime.apply(plan_id, outcome, event, "deltas", delta.timestamp)

    @runtime.app.agent(runtime.topics.deltas, name="learnstream.deltas")
    async def deltas(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("deltas", event, handle)
