"""Agent: delta intents (user corrections) -> error_correction, delta_impact.

Reading a correction also moves the join's watermark (streams/join/watermark.py): decisions and
executes waiting for the corrections made before them are completed after it.
"""

from __future__ import annotations

from functools import partial

from faust.types import StreamT

from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.lanes import run_in_lanes

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the deltas agent on the runtime's app."""

    @runtime.app.agent(runtime.topics.deltas, name="learnstream.deltas")
    async def deltas(stream: StreamT[bytes]) -> None:
        await run_in_lanes(stream, partial(runtime.guarded, "deltas", handle=runtime.join.process))
