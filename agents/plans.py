"""Agent: plan snapshots -> plan_state (last writer wins), then complete parked joins."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import RecordOrigin, decode_decision, decode_delta, decode_plan, decode_stage
from streams.dlq import DlqRecord
from streams.errors import InvalidEvent
from streams.fields import InputNotes
from streams.join import (
    Outcome,
    ParkedEvent,
    in_event_order,
    on_decision,
    on_delta,
    on_stage,
    plan_key,
)
from streams.plan_state import PlanState, merge_snapshot
from streams.samples import LearningSample

__all__ = ["register", "replay_parked"]

log = logging.getLogger("learnstream")


def _outcome(entry: ParkedEvent, state: PlanState, decision_type: str) -> Outcome:
    data = entry.raw.encode()
    # The time it was parked under: what a record without its own timestamp was given then.
    origin = RecordOrigin(entry.topic, entry.partition, entry.offset, entry.event_time)
    if entry.source == "decisions":
        decision = decode_decision(data, decision_type, origin=origin)
        return on_decision(decision, state, now(), first_seen=False)
    if entry.source == "deltas":
        return on_delta(decode_delta(data, origin=origin), state, now())
    return on_stage(decode_stage(data, origin=origin), state, now())


def _failure(entry: ParkedEvent, exc: Exception) -> DlqRecord:
    """Return the dead letter of a parked event that failed (no input value in its text)."""
    if isinstance(exc, InvalidEvent):
        reason, error = exc.reason, exc.detail
    else:  # an exception's own text may quote the input (pydantic's does): name its type
        reason, error = "builder_error", f"{type(exc).__name__} while building its samples"
        log.error("parked event failed %s:%s:%s", entry.topic, entry.partition, entry.offset)
    return DlqRecord(reason, error, entry.topic, entry.partition, entry.offset)


def replay_parked(
    runtime: Runtime, state: PlanState, parked: list[ParkedEvent]
) -> tuple[list[LearningSample], PlanState, list[DlqRecord]]:
    """Return the samples of parked events (event-time order), the final state, failures."""
    samples: list[LearningSample] = []
    failed: list[DlqRecord] = []
    approved = runtime.settings.topics.name("plan_approved")
    for entry in parked:
        kind = "plan_approved" if entry.topic == approved else "plan_rejected"
        try:
            outcome = _outcome(entry, state, kind)
        except Exception as exc:  # one bad parked event must not hold back the others
            failed.append(_failure(entry, exc))
            continue
        samples.extend(outcome.samples)
        state = outcome.new_state or state
    return samples, state, failed


def register(runtime: Runtime) -> None:
    """Register the plans agent on the runtime's app."""
    pending = runtime.tables.pending

    async def handle(event: EventT[bytes]) -> None:
        msg = event.message
        if msg.value is None and msg.key:  # tombstone: the runtime deleted the plan
            runtime.forget_plan(plan_key(msg.key.decode()))
            return
        notes = InputNotes()
        snapshot = decode_plan(msg.value, notes)
        runtime.metrics.note_input(notes)
        plan_id = plan_key(snapshot.plan.plan_id)
        state = merge_snapshot(runtime.plan_state(plan_id), snapshot, _event_time(event))
        if state is None:
            return  # an older snapshot than the one we hold
        parked = pending.get(plan_id)
        if parked:
            entries = in_event_order(parked)
            samples, state, failed = replay_parked(runtime, state, entries)
            ready = runtime.prepare(samples)
            runtime.store_plan(plan_id, state)
            # Samples must be on the broker before the buffer entry is forgotten.
            await runtime.send(ready, (msg.topic, msg.partition), wait=True)
            by_place = {(e.topic, e.partition, e.offset): e for e in entries}
            for record in failed:
                entry = by_place[(record.topic, record.partition, record.offset)]
                key = entry.key.encode() if entry.key else None
                await runtime.dead_letter(record, key, entry.raw.encode())
            del pending[plan_id]
        else:
            runtime.store_plan(plan_id, state)

    @runtime.app.agent(runtime.topics.plans, name="learnstream.plans")
    async def plans(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("plans", event, handle)


def _event_time(event: EventT[bytes]) -> datetime:
    """Return the record's Kafka timestamp: the fallback time of a snapshot without one."""
    return datetime.fromtimestamp(event.message.timestamp, UTC)
