"""Agent: delta intents (user corrections) -> error_correction, delta_impact."""

from __future__ import annotations

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import RecordOrigin, decode_delta
from streams.fields import InputNotes
from streams.join import on_delta, plan_key

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the deltas agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        msg, notes = event.message, InputNotes()
        delta = decode_delta(msg.value, origin=RecordOrigin.of(msg), notes=notes)
        runtime.metrics.note_input(notes)
        key = plan_key(delta.payload.plan_id)
        outcome = on_delta(delta, runtime.plan_state(key), now())
        await runtime.apply(key, outcome, event, "deltas", delta.timestamp)

    @runtime.app.agent(runtime.topics.deltas, name="learnstream.deltas")
    async def deltas(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("deltas", event, handle)
