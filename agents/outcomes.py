"""Agent: pipeline stage events (execute completed / failed) -> pipeline_outcome."""

from __future__ import annotations

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import RecordOrigin, decode_stage
from streams.fields import InputNotes
from streams.join import on_stage, plan_key

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the outcomes agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        msg, notes = event.message, InputNotes()
        stage = decode_stage(msg.value, origin=RecordOrigin.of(msg), notes=notes)
        runtime.metrics.note_input(notes)
        if stage.payload.plan_id is None:
            return  # not an outcome stage (the model requires the plan id on those)
        key = plan_key(stage.payload.plan_id)
        outcome = on_stage(stage, runtime.plan_state(key), now())
        await runtime.apply(key, outcome, event, "stages", stage.timestamp)

    @runtime.app.agent(runtime.topics.stages, name="learnstream.outcomes")
    async def outcomes(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("stages", event, handle)
