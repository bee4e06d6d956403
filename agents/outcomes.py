"""Agent: pipeline stage events (execute completed / failed) -> pipeline_outcome."""

from __future__ import annotations

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import decode_stage
from streams.join import on_stage

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the outcomes agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        stage = decode_stage(event.message.value)
        plan_id = stage.payload.plan_id
        outcome = on_stage(stage, runtime.plan_state(plan_id), now())
        await runtime.apply(plan_id, outcome, event, "stages", stage.timestamp)

    @runtime.app.agent(runtime.topics.stages, name="learnstream.outcomes")
    async def outcomes(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("stages", event, handle)
