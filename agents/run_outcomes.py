"""Agent: SA step and runtime execution events -> a pipeline_outcome per run that ends.

What such an event comes to is the join's (streams/join/runs.py, a key space of the join
unit); this agent only hands each record of the two topics to it.
"""

from __future__ import annotations

from faust.types import StreamT

from agents.runtime import Runtime

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the runs agent on the runtime's app."""

    @runtime.app.agent(runtime.topics.runs, name="learnstream.runs")
    async def runs(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("runs", event, runtime.join.process)
