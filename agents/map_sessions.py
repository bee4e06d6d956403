"""Agent: MAP session events -> one multi_agent_coordination sample per session.

What a MAP event comes to is the join's (streams/join/sessions.py, a key space of the join
unit); this agent only hands each record of the MAP events topic to it.
"""

from __future__ import annotations

from faust.types import StreamT

from agents.runtime import Runtime

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the MAP sessions agent on the runtime's app."""

    @runtime.app.agent(runtime.topics.map_events, name="learnstream.map_sessions")
    async def map_sessions(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("map_sessions", event, runtime.join.process)
