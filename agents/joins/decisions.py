"""Agent: Confirm decisions -> confirm_decision and (joined) intent_resolution.

What a decision comes to is the join's (streams/join/routes.py); this agent only hands each
record of the two decision topics to it.
"""

from __future__ import annotations

from functools import partial

from faust.types import StreamT

from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.lanes import run_in_lanes

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the decisions agent on the runtime's app."""

    @runtime.app.agent(runtime.topics.decisions, name="learnstream.decisions")
    async def decisions(stream: StreamT[bytes]) -> None:
        await run_in_lanes(
            stream, partial(runtime.guarded, "decisions", handle=runtime.join.process)
        )
