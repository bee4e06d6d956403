"""Agent: Confirm decisions -> confirm_decision and (joined) intent_resolution."""

from __future__ import annotations

from datetime import datetime
from functools import partial

from faust.types import StreamT

from agents.plan_join import Route
from agents.runtime import Runtime
from streams.config.settings import Settings
from streams.join.plan_state import PlanState
from streams.join.rules import Outcome, ParkedEvent, on_decision
from streams.mplp.decode import RecordOrigin, decode_decision
from streams.mplp.fields import InputNotes
from streams.mplp.models import DecisionEvent

__all__ = ["register", "routes"]

KINDS = ("plan_approved", "plan_rejected")


def _decode(
    kind: str, data: bytes | None, origin: RecordOrigin, notes: InputNotes | None
) -> DecisionEvent:
    return decode_decision(data, kind, origin=origin, notes=notes)


def _decide(
    event: DecisionEvent,
    state: PlanState | None,
    moment: datetime,
    parked: ParkedEvent | None,
    settled: bool,
) -> Outcome:
    confirmed = parked is not None and parked.confirmed(event)
    return on_decision(event, state, moment, confirmed=confirmed, settled=settled)


def routes(settings: Settings) -> dict[str, Route]:
    """Return the join's routes of the two decision topics (each carries its event type)."""
    return {
        settings.topics.name(kind): Route("decisions", partial(_decode, kind), _decide, True)
        for kind in KINDS
    }


def register(runtime: Runtime) -> None:
    """Register the decisions agent on the runtime's app."""

    @runtime.app.agent(runtime.topics.decisions, name="learnstream.decisions")
    async def decisions(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("decisions", event, runtime.join.process)
