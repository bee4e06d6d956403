"""What every agent shares: topics, tables, metrics, and the three ways a record leaves us.

A record leaves as samples (privacy and encoding in ``prepare``; the consent fence and
verdict in ``send``, which every sample passes), as a parked join entry, or as a dead
letter. Nothing else touches Kafka.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import faust
from faust.streams import current_event
from faust.types import EventT

from streams.codecs import SampleCodec
from streams.consent import ConsentView
from streams.dlq import DlqRecord, dlq_headers
from streams.eos import Progress
from streams.errors import InvalidEvent, describe_failure
from streams.expiry import ExpiryIndex
from streams.fence import Fence
from streams.join import Outcome, ParkedEvent, park
from streams.metrics import Metrics
from streams.outbox import Outgoing, consent_verdict, prepare
from streams.plan_state import PlanState
from streams.privacy import Anonymizer
from streams.samples import LearningSample
from streams.settings import Settings
from streams.tables import Tables
from streams.topics import Topics

__all__ = ["Runtime", "now"]

log = logging.getLogger("learnstream")

#: Validated plan states kept per worker (a lookup then costs a dict compare, not a parse).
STATE_CACHE_SIZE = 4096


def now() -> datetime:
    """Return the current time (the only clock read of the pipeline)."""
    return datetime.now(UTC)


@dataclass
class Runtime:
    """The agents' shared handles and their record-moving helpers."""

    app: faust.App
    settings: Settings
    topics: Topics
    tables: Tables
    metrics: Metrics
    anonymizer: Anonymizer
    codec: SampleCodec
    #: Terminal plans by expiry time, for the sweeper (agents/sweeper.py).
    expiry: ExpiryIndex
    #: Records processed per partition; what offset commits take (streams/eos.py).
    progress: Progress
    #: Called with every sample sent (e.g. the windowed quality tables of agents/quality.py).
    on_sample: list[Callable[[LearningSample], None]] = field(default_factory=list)
    #: Every project's consent, read by this worker (agents/consent.py feeds both).
    consent: ConsentView = field(default_factory=ConsentView)
    #: Holds samples until ``consent`` has read what was written before their record came.
    fence: Fence = field(default_factory=Fence)
    _states: OrderedDict[str, tuple[Any, PlanState]] = field(default_factory=OrderedDict)

    def plan_state(self, plan_id: str) -> PlanState | None:
        """Return the state of ``plan_id`` held in the table, if any.

        The table is the truth: a cached state is used only while the table still holds the
        very value it was parsed from.
        """
        raw = self.tables.plan_state.get(plan_id)
        if not raw:
            return None
        cached = self._states.get(plan_id)
        if cached is not None and (cached[0] is raw or cached[0] == raw):
            self._states.move_to_end(plan_id)
            return cached[1]
        state = PlanState.from_table(raw)
        self._remember(plan_id, raw, state)
        return state

    def store_plan(self, plan_id: str, state: PlanState) -> None:
        """Write ``state`` to the plan_state table (and note when it can expire)."""
        raw = state.to_table()
        self.tables.plan_state[plan_id] = raw
        self._remember(plan_id, raw, state)
        self.expiry.note(plan_id, state.terminal_since, state.snapshot.plan.plan_id)

    def forget_plan(self, plan_id: str) -> None:
        """Delete ``plan_id`` from the plan_state table (a tombstone in its changelog)."""
        self.tables.plan_state.pop(plan_id, None)
        self._states.pop(plan_id, None)

    def _remember(self, plan_id: str, raw: Any, state: PlanState) -> None:
        self._states[plan_id] = (raw, state)
        self._states.move_to_end(plan_id)
        if len(self._states) > STATE_CACHE_SIZE:
            self._states.popitem(last=False)

    def prepare(self, samples: list[LearningSample]) -> list[tuple[LearningSample, Outgoing]]:
        """Apply the global switch, privacy and encoding; may raise, before anything is stored
        or sent. Project consent is decided in ``send``, after the fence."""
        if not samples:
            return []
        if consent_verdict(self.settings.learning.enabled, None):
            self.metrics.child(self.metrics.opted_out, "global").inc(len(samples))
            return []
        return [(s, prepare(s, self.anonymizer, self.codec, now())) for s in samples]

    async def admit(
        self, ready: list[tuple[LearningSample, Outgoing]]
    ) -> list[tuple[LearningSample, Outgoing]]:
        """Wait until the consent view has read every consent record written before the
        current record came; return the samples whose project has not opted out."""
        if not ready:  # a record without samples never waits
            return ready
        event = current_event()
        arrived = event.message.time_in if event is not None else None  # Faust's monotonic
        started = time.perf_counter()
        await self.fence.wait(arrived)
        self.metrics.consent_fence.observe(time.perf_counter() - started)
        kept = []
        for sample, out in ready:
            if consent_verdict(True, self.consent.get(sample.meta.project_id)):
                self.metrics.child(self.metrics.opted_out, "project").inc()
            else:
                kept.append((sample, out))
        return kept

    async def send(
        self,
        ready: list[tuple[LearningSample, Outgoing]],
        source: tuple[str, int],
        *,
        wait: bool = False,
    ) -> None:
        """Send the prepared samples consent admits (every sample passes ``admit`` here), and
        their captured events, for the record at ``source`` (topic, partition); ``wait`` for
        the broker's acks."""
        admitted = await self.admit(ready)
        acks = [await self._send_one(sample, out, source) for sample, out in admitted]
        if wait:
            for ack in acks:
                if ack is not None:  # faust returns a future; test doubles may return None
                    await ack

    async def _send_one(
        self, sample: LearningSample, out: Outgoing, source: tuple[str, int]
    ) -> Awaitable[Any] | None:
        ack = await self._produce(self.topics.samples, out.key, out.value, source)
        await self._produce(self.topics.events, out.key, out.event_value, source)
        self.metrics.child(self.metrics.samples, out.family, out.quality).inc()
        for listener in self.on_sample:
            listener(sample)
        self._observe_latency(sample)
        for entity, count in out.pii.items():
            self.metrics.child(self.metrics.pii, entity).inc(count)
        return ack

    async def _produce(
        self,
        topic: faust.TopicT,
        key: bytes | None,
        value: bytes | None,
        source: tuple[str, int],
        headers: list[tuple[str, bytes]] | None = None,
    ) -> Awaitable[Any]:
        """Send one record; with exactly_once, inside the source partition's transaction.

        Faust picks a send's transaction from the *destination* partition, which it only
        knows for subscribed topics; our outputs are not subscribed, so Faust would send
        them outside any transaction (faust-streaming #177/#517: duplicates after a kill).
        We name the transaction that commits the source offset instead.

        Straight to the driver's producer, not through ``Topic.send``, in both guarantees:
        that skips Faust's channel layer and send sensors (16 % of the cost of sending a
        sample and its event in a worker profile).
        """
        transactional_id = None
        if self.app.in_transaction:
            group = self.app.assignor.group_for_topic(source[0])
            transactional_id = f"{self.app.conf.id}-{group}-{source[1]}"
        return await self.app.producer.send(
            topic.get_topic_name(),
            key,
            value,
            None,
            None,
            headers,
            transactional_id=transactional_id,
        )

    def _observe_latency(self, sample: LearningSample) -> None:
        if sample.meta.event_time:
            then = datetime.fromisoformat(sample.meta.event_time)
            lag = (now() - then).total_seconds()
            latency = self.metrics.child(self.metrics.latency, sample.sample_family)
            latency.observe(max(lag, 0.0))

    async def dead_letter(self, record: DlqRecord, key: bytes | None, value: bytes | None) -> None:
        """Send the original bytes to the DLQ with headers saying why and from where."""
        log.warning(
            "dead letter %s reason=%s error=%s", record.location, record.reason, record.error[:300]
        )
        source = (record.topic, record.partition)
        await self._produce(self.topics.dlq, key, value, source, dlq_headers(record))
        self.metrics.child(self.metrics.dlq, record.reason).inc()

    async def apply(
        self,
        plan_id: str,
        outcome: Outcome,
        event: EventT[bytes],
        source_name: str,
        event_time: datetime,
    ) -> None:
        """Carry out an Outcome: prepare the samples, store the state, park, send.

        Nothing is awaited before the state is stored: another agent may read the same plan
        meanwhile. So consent waits in ``send``, after ``prepare`` did the privacy work.
        """
        ready = self.prepare(outcome.samples)  # a failure here leaves the tables untouched
        source = (event.message.topic, event.message.partition)
        if outcome.new_state is not None:
            self.store_plan(plan_id, outcome.new_state)
        if outcome.park:
            self._park(plan_id, event, source_name, event_time)
        await self.send(ready, source)

    def _park(self, plan_id: str, event: EventT[bytes], source: str, event_time: datetime) -> None:
        msg = event.message
        entry = ParkedEvent(
            source=source,
            topic=msg.topic,
            partition=msg.partition,
            offset=msg.offset,
            key=msg.key.decode("utf-8", "replace") if msg.key else None,
            raw=(msg.value or b"").decode("utf-8"),
            event_time=event_time,
            parked_at=now(),
        )
        self.tables.pending[plan_id] = park(self.tables.pending.get(plan_id), entry)

    async def guarded(
        self, source: str, event: EventT[bytes], handle: Callable[[EventT[bytes]], Awaitable[None]]
    ) -> None:
        """Run ``handle`` on one record; any failure dead-letters it and the loop goes on.

        Skipped: a record processed before (handed over again after a seek), and one above a
        hole in its partition's offsets (it comes again once the hole is re-read).
        """
        msg = event.message
        async with self.progress.record(msg.tp, msg.offset) as fresh:
            if not fresh:
                self.metrics.redelivered.inc()
                return
            self.metrics.child(self.metrics.events, source).inc()
            started = time.perf_counter()
            try:
                await handle(event)
            except InvalidEvent as exc:
                where = self._where(event, exc.reason, exc.detail)
                await self.dead_letter(where, msg.key, msg.value)
            except Exception as exc:  # a builder bug must not lose the record: dead-letter it
                record = self._where(event, "builder_error", describe_failure(exc))
                log.error("builder failed %s error=%s", record.location, record.error)
                await self.dead_letter(record, msg.key, msg.value)
            finally:
                processing = self.metrics.child(self.metrics.processing, source)
                processing.observe(time.perf_counter() - started)

    @staticmethod
    def _where(event: EventT[bytes], reason: str, error: str) -> DlqRecord:
        msg = event.message
        return DlqRecord(
            reason=reason, error=error, topic=msg.topic, partition=msg.partition, offset=msg.offset
        )
