"""Agents: the inputs that join a key space rather than a plan.

MAP session events (``learnstream.map_sessions``: one multi_agent_coordination sample per
session, streams/join/sessions.py) and SA step and runtime execution events
(``learnstream.runs``: a pipeline_outcome per run that ends, streams/join/runs.py), PSG graph
updates (``learnstream.graphs``: a graph_evolution per significant change,
streams/join/graphs.py), core events (``learnstream.core_events``: an impact analysis
completes its delta's delta_impact, streams/join/impacts.py). What such a record comes to is
the join's; each agent only hands its records to it.
"""

from __future__ import annotations

import faust
from faust.types import StreamT

from learnstream.agents.runtime import Runtime

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the MAP sessions and runs agents on the runtime's app."""
    _register(runtime, runtime.topics.map_events, "map_sessions")
    _register(runtime, runtime.topics.runs, "runs")
    _register(runtime, runtime.topics.graph_updates, "graphs")
    _register(runtime, runtime.topics.core_events, "core_events")


def _register(runtime: Runtime, topic: faust.TopicT, source: str) -> None:
    @runtime.app.agent(topic, name=f"learnstream.{source}")
    async def window_input(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded(source, event, runtime.join.process)
