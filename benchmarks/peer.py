"""The DIY peer: learnstream's pipeline hand-rolled on aiokafka, what a user would write instead.

It consumes the same five input topics, decodes with :mod:`learnstream.streams.mplp.decode`, joins
decisions, corrections and outcomes with plan snapshots in plain dicts under the same
grace rule (docs/architecture.md §5: a parked event waits for its plan, completed in
event-time order, dead-lettered as ``plan_state_missing`` after ``join.grace``), decides
with the same pure deciders and builders (:mod:`learnstream.streams.join.rules`,
:mod:`learnstream.streams.samples.builders`), anonymizes and encodes with
:func:`learnstream.streams.samples.outbox.prepare`, produces each sample and its
``learning_events`` copy with acks=all, and commits a batch's offsets only after every send of the
batch was acknowledged.

What it leaves out is what learnstream's Faust tables and agents pay for: no plan_state or
pending changelog (a restart forgets every plan and parked event), no consent topic (only
the global switch), no metrics, quality windows, plan expiry or exactly_once, and no
corrections watermark: samples see the plan as of their event (``PlanState.as_of``), but
a decision read before an earlier correction is not held back for it as the worker's is. Run by the
benchmark as ``python -m benchmarks.peer`` with a worker's LEARNSTREAM_* environment; it
prints ``ready`` once consuming, and SIGTERM stops it. Faust is not imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from learnstream.streams.config.settings import Settings
from learnstream.streams.dlq.errors import InvalidEvent, describe_failure
from learnstream.streams.dlq.record import DlqRecord, dlq_headers
from learnstream.streams.encoding.codecs import codec_for
from learnstream.streams.join import rules as join
from learnstream.streams.mplp.decode import (
    RecordOrigin,
    decode_decision,
    decode_delta,
    decode_plan,
    decode_stage,
)
from learnstream.streams.mplp.models import DecisionEvent, DeltaIntentEvent, StageEvent
from learnstream.streams.privacy.config import privacy_config
from learnstream.streams.privacy.pii import build_anonymizer
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.outbox import prepare
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.state.plan import PlanState, merge_snapshot

__all__ = ["Join", "Parked", "Peer", "complete", "main"]

log = logging.getLogger("learnstream.peer")

Event = DecisionEvent | DeltaIntentEvent | StageEvent
#: Input topic fields (learnstream.streams.config.settings.TopicSettings), the same five the worker
#: reads.
INPUT_FIELDS = ("plans", "plan_approved", "plan_rejected", "delta_intents", "pipeline_stage")


@dataclass(frozen=True)
class Parked:
    """An event waiting for its plan: the decoded event and where its bytes came from."""

    event: Event
    where: DlqRecord  # reason and error are filled in when it is dead-lettered
    key: bytes | None
    raw: bytes
    parked_at: datetime


def complete(
    event: Event, state: PlanState, now: datetime, confirmed: bool
) -> tuple[list[LearningSample], PlanState]:
    """Return the samples of ``event`` joined with ``state`` and the plan's new state.

    A decision or an execute sees the plan as of its own time (the corrections made at or
    before it, as the worker). ``confirmed``: its confirm_decision already went out.
    """
    if isinstance(event, DecisionEvent):
        outcome = join.on_decision(event, state, now, confirmed=confirmed)
    elif isinstance(event, StageEvent):
        outcome = join.on_stage(event, state, now)
    else:
        outcome = join.on_delta(event, state, now)
    return outcome.samples, outcome.new_state or state


@dataclass
class Join:
    """Plan states and parked events in two dicts keyed by canonical plan id (architecture §5)."""

    grace: timedelta
    states: dict[str, PlanState] = field(default_factory=dict)
    parked: dict[str, list[Parked]] = field(default_factory=dict)

    def on_event(self, entry: Parked, now: datetime) -> list[LearningSample]:
        """Return the samples of a decision, delta or stage; park it while its plan is unknown."""
        event = entry.event
        plan_id = event.payload.plan_id
        if plan_id is None or (isinstance(event, StageEvent) and not event.is_outcome):
            return []
        key = canonical_id(plan_id)
        state = self.states.get(key)
        if state is not None:
            samples, self.states[key] = complete(event, state, now, confirmed=False)
            return samples
        self.parked.setdefault(key, []).append(entry)
        if isinstance(event, DecisionEvent):  # its confirm_decision may need no plan
            return join.on_decision(event, None, now).samples
        return []

    def on_plan(
        self, state: PlanState | None, key: str, now: datetime
    ) -> tuple[list[LearningSample], list[Parked]]:
        """Store a merged plan state; return its parked events' samples and those that failed."""
        if state is None:
            return [], []  # an older snapshot than the one held
        samples: list[LearningSample] = []
        failed: list[Parked] = []
        waiting = self.parked.pop(key, [])
        for entry in sorted(waiting, key=_event_order):
            confirmed = (
                isinstance(entry.event, DecisionEvent) and entry.event.project_id is not None
            )
            try:
                more, state = complete(entry.event, state, now, confirmed)
            except Exception as exc:  # one bad parked event must not hold back the others
                failed.append(_failed(entry, "builder_error", describe_failure(exc)))
                continue
            samples.extend(more)
        self.states[key] = state
        return samples, failed

    def expire(self, now: datetime) -> list[Parked]:
        """Remove and return the parked events that waited ``grace`` or longer."""
        due: list[Parked] = []
        for key, entries in list(self.parked.items()):
            due += [p for p in entries if now - p.parked_at >= self.grace]
            self.parked[key] = [p for p in entries if now - p.parked_at < self.grace]
            if not self.parked[key]:
                del self.parked[key]
        error = "no plan state arrived within LEARNSTREAM_JOIN__GRACE"
        return [_failed(p, "plan_state_missing", error) for p in due]


def _failed(entry: Parked, reason: str, error: str) -> Parked:
    return replace(entry, where=replace(entry.where, reason=reason, error=error))


def _event_order(entry: Parked) -> tuple[datetime, str, int, int]:
    return entry.event.timestamp, entry.where.topic, entry.where.partition, entry.where.offset


class Peer:
    """Records in, sends out: the I/O around :class:`Join` (decode, privacy, produce)."""

    def __init__(self, settings: Settings, producer: AIOKafkaProducer) -> None:
        self.settings, self.producer = settings, producer
        self.join = Join(settings.join.grace)
        self.anonymizer = build_anonymizer(privacy_config(settings))
        self.codec = codec_for(settings.sample_format)
        self.kinds = {settings.topics.name(f): f for f in INPUT_FIELDS}
        self.out = {f: settings.topics.name(f) for f in ("samples", "events", "dlq")}

    async def handle(self, record: Any, now: datetime) -> list[Awaitable[Any]]:
        """Process one consumed record; return the acks of what it sent."""
        where = DlqRecord("", "", record.topic, record.partition, record.offset)
        try:
            samples, failed = self._samples(record, where, now)
            acks = await self.send(samples, now)
        except Exception as exc:  # a bad record goes to the DLQ, the loop goes on
            reason, error = (
                (exc.reason, exc.detail)
                if isinstance(exc, InvalidEvent)
                else ("builder_error", describe_failure(exc))
            )
            dead = replace(where, reason=reason, error=error)
            return [await self.dead_letter(dead, record.key, record.value)]
        return acks + [await self.dead_letter(p.where, p.key, p.raw) for p in failed]

    def _samples(
        self, record: Any, where: DlqRecord, now: datetime
    ) -> tuple[list[LearningSample], list[Parked]]:
        kind, value = self.kinds[record.topic], record.value
        moment = datetime.fromtimestamp(record.timestamp / 1000, UTC)  # the record's Kafka time
        if kind == "plans":
            if value is None and record.key:  # tombstone: the runtime deleted the plan
                self.join.states.pop(canonical_id(record.key.decode()), None)
                return [], []
            snapshot = decode_plan(value)
            key = canonical_id(snapshot.plan.plan_id)
            merged = merge_snapshot(self.join.states.get(key), snapshot, moment)
            return self.join.on_plan(merged, key, now)
        origin = RecordOrigin(record.topic, record.partition, record.offset, moment)
        event: Event
        if kind in ("plan_approved", "plan_rejected"):
            event = decode_decision(value, kind, origin=origin)
        elif kind == "delta_intents":
            event = decode_delta(value, origin=origin)
        else:
            event = decode_stage(value, origin=origin)
        return self.join.on_event(Parked(event, where, record.key, value, now), now), []

    async def send(self, samples: list[LearningSample], now: datetime) -> list[Awaitable[Any]]:
        """Prepare every sample first (privacy may raise), then send it and its event."""
        if not self.settings.learning.enabled:
            return []
        captured = self.settings.topics.emit_captured
        ready = [prepare(s, self.anonymizer, self.codec, now, captured=captured) for s in samples]
        acks = []
        for out in ready:
            acks.append(await self.producer.send(self.out["samples"], out.value, key=out.key))
            if out.event_value is not None:
                event = out.event_value
                acks.append(await self.producer.send(self.out["events"], event, key=out.key))
        return acks

    async def dead_letter(
        self, where: DlqRecord, key: bytes | None, value: bytes | None
    ) -> Awaitable[Any]:
        """Send the original bytes to the DLQ, with headers saying why (never the value)."""
        log.warning("dead letter %s reason=%s", where.location, where.reason)
        headers = dlq_headers(where)
        ack: Awaitable[Any] = await self.producer.send(
            self.out["dlq"], value, key=key, headers=headers
        )
        return ack

    async def sweep(self, now: datetime) -> list[Awaitable[Any]]:
        """Dead-letter the parked events that waited past the grace."""
        return [await self.dead_letter(p.where, p.key, p.raw) for p in self.join.expire(now)]


async def run(settings: Settings) -> None:
    """Consume, join, send, and commit each batch once its sends are acknowledged."""
    bootstrap = (settings.kafka_url or "").removeprefix("kafka://").rstrip("/").replace(";", ",")
    # The worker's producer settings (streams/io/app.py): acks=all, its batch size and linger.
    batch = 1 if settings.broker.one_record_per_batch else settings.broker.max_batch_bytes
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        max_batch_size=batch,
        linger_ms=settings.broker.linger_ms,
    )
    peer = Peer(settings, producer)
    consumer = AIOKafkaConsumer(
        *peer.kinds,
        bootstrap_servers=bootstrap,
        group_id=settings.app_id,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await producer.start()
    await consumer.start()
    print("ready", flush=True)
    swept = datetime.now(UTC)
    try:
        while True:
            batches = await consumer.getmany(timeout_ms=500, max_records=1_000)
            now = datetime.now(UTC)
            acks = []
            for records in batches.values():
                for record in records:
                    acks += await peer.handle(record, now)
            if (now - swept).total_seconds() >= settings.join.sweep_interval:
                acks += await peer.sweep(now)
                swept = now
            await asyncio.gather(*acks)
            if batches:
                await consumer.commit()
    finally:
        await consumer.stop()
        await producer.stop()


async def _run_until_signalled(settings: Settings) -> None:
    task = asyncio.create_task(run(settings))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def main() -> None:
    """Run the peer with the settings of the environment (LEARNSTREAM_*)."""
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(_run_until_signalled(Settings()))


if __name__ == "__main__":
    main()
