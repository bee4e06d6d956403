"""Agent: delta intents (user corrections) -> error_correction, delta_impact.

Reading a correction also moves the join's watermark (agents/watermark.py): decisions and
executes waiting for the corrections made before them are completed after it.
"""

from __future__ import annotations

from datetime import datetime

from faust.types import StreamT

from agents.plan_join import Route
from agents.runtime import Runtime
from streams.config.settings import Settings
from streams.join.plan_state import PlanState
from streams.join.rules import Outcome, ParkedEvent, on_delta
from streams.mplp.decode import RecordOrigin, decode_delta
from streams.mplp.fields import InputNotes
from streams.mplp.models import DeltaIntentEvent

__all__ = ["register", "routes"]


def _decode(data: bytes | None, origin: RecordOrigin, notes: InputNotes | None) -> DeltaIntentEvent:
    return decode_delta(data, origin=origin, notes=notes)


def _decide(
    event: DeltaIntentEvent,
    state: PlanState | None,
    moment: datetime,
    _parked: ParkedEvent | None,
    _settled: bool,
) -> Outcome:
    return on_delta(event, state, moment)


def routes(settings: Settings) -> dict[str, Route]:
    """Return the join's route of the corrections topic."""
    return {settings.topics.name("delta_intents"): Route("deltas", _decode, _decide)}


def register(runtime: Runtime) -> None:
    """Register the deltas agent on the runtime's app."""

    @runtime.app.agent(runtime.topics.deltas, name="learnstream.deltas")
    async def deltas(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("deltas", event, runtime.join.process)
