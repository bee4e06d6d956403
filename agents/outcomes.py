"""Agent: pipeline stage events (execute completed / failed) -> pipeline_outcome."""

from __future__ import annotations

from datetime import datetime

from faust.types import EventT, StreamT

from agents.learn_stats import SkillTable
from agents.plan_join import Route
from agents.runtime import Runtime
from streams.config.settings import Settings
from streams.join.plan_state import PlanState
from streams.join.rules import Outcome, ParkedEvent, on_stage
from streams.mplp.decode import RecordOrigin, decode_stage
from streams.mplp.fields import InputNotes
from streams.mplp.models import StageEvent

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
    stats = SkillTable.of(runtime)

    async def handle(event: EventT[bytes]) -> None:
        await runtime.join.process(event)
        value = event.message.value
        # Decoded a second time only when it may name a skill: most stages do not.
        if value and (b"skill_name" in value or b"tool_name" in value):
            origin = RecordOrigin.of(event.message)
            stats.count_stage(decode_stage(value, origin=origin))

    @runtime.app.agent(runtime.topics.stages, name="learnstream.outcomes")
    async def outcomes(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("stages", event, handle)
