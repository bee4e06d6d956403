"""Agent: pipeline stage events (execute completed / failed) -> pipeline_outcome."""

from __future__ import annotations

from functools import partial

from faust.types import EventT, StreamT

from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.lanes import run_in_lanes
from learnstream.streams.mplp.decode import RecordOrigin, decode_stage

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the outcomes agent on the runtime's app."""
    stats = runtime.skill_stats

    async def handle(event: EventT[bytes]) -> None:
        await runtime.join.process(event)
        value = event.message.value
        # Decoded a second time only when it may name a skill: most stages do not.
        if value and (b"skill_name" in value or b"tool_name" in value):
            origin = RecordOrigin.of(event.message)
            stats.count_stage(decode_stage(value, origin=origin))

    @runtime.app.agent(runtime.topics.stages, name="learnstream.outcomes")
    async def outcomes(stream: StreamT[bytes]) -> None:
        await run_in_lanes(stream, partial(runtime.guarded, "stages", handle=handle))
