"""Agent: plan snapshots -> plan_state (last writer wins), then complete parked joins."""

from __future__ import annotations

from datetime import UTC, datetime

from faust.types import EventT, StreamT

from agents.runtime import Runtime, now
from streams.decode import decode_decision, decode_delta, decode_plan, decode_stage
from streams.dlq import DlqRecord
from streams.join import Outcome, ParkedEvent, in_event_order, on_decision, on_delta, on_stage
from streams.plan_state import PlanState, merge_snapshot
from streams.samples import LearningSample

__all__ = ["register", "replay_parked"]


def _outcome(entry: ParkedEvent, state: PlanState, decision_type: str) -> Outcome:
    data = entry.raw.encode()
    if entry.source == "decisions":
        return on_decision(decode_decision(data, decision_type), state, now(), first_seen=False)
    if entry.source == "deltas":
        return on_delta(decode_delta(data), state, now())
    return on_stage(decode_stage(data), state, now())


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
            failed.append(
                DlqRecord(
                    "builder_error",
                    f"{type(exc).__name__}: {exc}",
                    entry.topic,
                    entry.partition,
                    entry.offset,
                )
            )
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
            runtime.forget_plan(msg.key.decode())
            return
        snapshot = decode_plan(msg.value)
        plan_id = snapshot.plan.plan_id
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
