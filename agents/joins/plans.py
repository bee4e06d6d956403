"""Agent: plan snapshots -> plan_state (last writer wins, agents/joins/plan_join.py), then complete
parked joins."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

from faust.types import EventT, StreamT

from learnstream.agents.runtime import Runtime
from learnstream.agents.seams.lanes import run_in_lanes
from learnstream.streams.join.rules import plan_key
from learnstream.streams.mplp.decode import decode_plan
from learnstream.streams.mplp.fields import InputNotes

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the plans agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        msg = event.message
        source = (msg.topic, msg.partition)
        if msg.value is None and msg.key:  # tombstone: the runtime deleted the plan
            await runtime.join.delete(plan_key(msg.key.decode()), source)
            return
        notes = InputNotes()
        snapshot = decode_plan(msg.value, notes)
        runtime.metrics.note_input(notes)
        key = plan_key(snapshot.plan.plan_id)
        await runtime.join.on_plan(key, snapshot, _event_time(event), source)

    @runtime.app.agent(runtime.topics.plans, name="learnstream.plans")
    async def plans(stream: StreamT[bytes]) -> None:
        await run_in_lanes(stream, partial(runtime.guarded, "plans", handle=handle))


def _event_time(event: EventT[bytes]) -> datetime:
    """Return the record's Kafka timestamp: the fallback time of a snapshot without one."""
    return datetime.fromtimestamp(event.message.timestamp, UTC)
