"""Agent: pipeline stage events (execute completed / failed) -> pipeline_outcome."""

from __future__ import annotations

from datetime import datetime

from faust.types import StreamT

from agents.join import Route
from agents.runtime import Runtime
from streams.decode import RecordOrigin, decode_stage
from streams.fields import InputNotes
from streams.join import Outcome, ParkedEvent, on_stage
from streams.models import StageEvent
from streams.plan_state import PlanState
from streams.settings import Settings

__all__ = ["register", "routes"]


def _decode(data: bytes | None, origin: RecordOrigin, notes: InputNotes | None) -> StageEvent:
    return decode_stage(data, origin=origin, notes=notes)


def _decide(
    event: StageEvent,
    state: PlanState | None,
    moment: datetime,
    _parked: ParkedEvent | None,
    settled: bool,
) -> Outcome:
    return on_stage(event, state, moment, settled=settled)


def routes(settings: Settings) -> dict[str, Route]:
    """Return the join's route of the stages topic ("after a delta" waits for corrections)."""
    return {settings.topics.name("pipeline_stage"): Route("stages", _decode, _decide, True)}


def register(runtime: Runtime) -> None:
    """Register the outcomes agent on the runtime's app."""

    @runtime.app.agent(runtime.topics.stages, name="learnstream.outcomes")
    async def outcomes(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("stages", event, runtime.join.process)
