"""The runtime publisher: what an agent runtime calls to send MPLP events to learnstream.

It validates with the models (every shape the worker accepts, docs/architecture.md §3), keys every
record by the runtime's plan_id (project_id for consent; a stage event without a plan by its
pipeline or event id), gives an event without ``event_id`` / ``timestamp`` a fresh UUID v4 / the
current time, and never blocks the caller: records go into a bounded buffer drained by a background
task. When the buffer is full the record is counted in ``dropped`` and ``publish_*`` returns False.
``close()`` flushes everything still buffered.

Kafka orders records within a partition only: two records sent back to back to different
topics can reach the broker in either order (``benchmarks/ordering.py`` measures how often;
RELIABILITY.md, findings behind the design).
The worker counts a correction for an execution only if the broker held it when the
execution was read, so a runtime that needs that order awaits ``flush()`` between the two.

The producer is idempotent (``acks=all``, ``enable_idempotence``), as Kafka's own clients are
by default: when a broker dies after writing a batch but before answering, the producer sends
the batch again, and without idempotence the new leader stores it twice. The worker turns
each input record into samples exactly once, so a decision stored twice gives its samples
twice, even under exactly_once (RELIABILITY.md, three brokers). The embedded broker has no
idempotent producers, so ``one_record_per_batch`` (its setting) turns idempotence off unless
``idempotent`` says otherwise; so does an ``acks`` other than ``all``, which idempotence
needs. On a broker that refuses idempotent producers (a Kafka older than 0.11; the embedded
broker failed a plain aiokafka idempotent producer with UnknownError, yet a probe of this
publisher there sent 20 of 20, so it is not tested either way) sends may fail with the
broker's error, logged as ``delivery failed`` and counted in ``stats.failed``: pass
``idempotent=False`` there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiokafka import AIOKafkaProducer
from pydantic import BaseModel

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.connection import Broker, connection_of
from learnstream.streams.mplp.core_events import CoreEvent
from learnstream.streams.mplp.fields import text_of
from learnstream.streams.mplp.graph_events import GraphUpdateEvent
from learnstream.streams.mplp.map_events import MapEvent
from learnstream.streams.mplp.models import (
    ConsentRecord,
    DecisionEvent,
    DeltaIntentEvent,
    PlanSnapshot,
    StageEvent,
)
from learnstream.streams.mplp.run_events import ExecutionEvent, SaEvent

__all__ = ["PublisherStats", "RuntimePublisher"]

log = logging.getLogger("learnstream.publisher")
_STOP = object()


@dataclass
class PublisherStats:
    """How many records were accepted, sent, dropped (buffer full) and failed (broker)."""

    accepted: int = 0
    sent: int = 0
    dropped: int = 0
    failed: int = 0


def _stamped(event: Any) -> Any:
    """Return an event dict with a missing event_id / timestamp given (a copy)."""
    if not isinstance(event, dict):
        return event
    found = {"event_id": str(uuid.uuid4()), "timestamp": datetime.now(UTC).isoformat()}
    return {**event, **{k: v for k, v in found.items() if event.get(k) is None}}


class RuntimePublisher:
    """Publish plans, decisions, deltas, stage events and consent, without blocking.

    ``broker`` is a bootstrap string (plaintext) or, for TLS / SASL, a KafkaConnection:
    ``KafkaConnection.of(Settings().broker, "kafka://host:9093")``.
    """

    def __init__(
        self,
        broker: Broker,
        topics: TopicSettings | None = None,
        *,
        buffer_size: int = 10_000,
        one_record_per_batch: bool = False,
        idempotent: bool | None = None,
        **producer_options: Any,
    ) -> None:
        self.topics = topics or TopicSettings()
        self.stats = PublisherStats()
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=buffer_size)
        if one_record_per_batch:  # the embedded broker counts batches, not records
            producer_options.setdefault("max_batch_size", 1)
        producer_options.setdefault("acks", "all")
        if idempotent is None:  # idempotence needs acks=all
            idempotent = not one_record_per_batch and producer_options["acks"] in ("all", -1)
        producer_options.setdefault("enable_idempotence", idempotent)
        options = {**connection_of(broker).client_options(), **producer_options}
        self._producer = AIOKafkaProducer(**options)
        self._drain: asyncio.Task[None] | None = None

    async def start(self) -> RuntimePublisher:
        """Connect to the broker and start draining the buffer."""
        await self._producer.start()
        self._drain = asyncio.create_task(self._drain_loop(), name="learnstream-publisher")
        return self

    async def close(self) -> None:
        """Send everything buffered, then disconnect."""
        if self._drain is not None:
            await self._queue.put(_STOP)
            await self._drain
            self._drain = None
        await self._producer.stop()

    async def flush(self) -> None:
        """Return once every record published so far is on the broker, or failed (counted
        in ``stats.failed``): what is published after this call lands after them."""
        if self._drain is None:
            raise RuntimeError("the publisher is not started")
        await self._queue.join()
        await self._producer.flush()

    async def __aenter__(self) -> RuntimePublisher:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def publish_plan(self, snapshot: PlanSnapshot | dict[str, Any]) -> bool:
        """Queue a plan snapshot (a bare MPLP Plan dict is wrapped)."""
        if isinstance(snapshot, dict) and "plan" not in snapshot:
            snapshot = {"plan": snapshot}
        model = PlanSnapshot.model_validate(snapshot)
        return self._put("plans", model.plan.plan_id, model)

    def publish_decision(self, event: DecisionEvent | dict[str, Any]) -> bool:
        """Queue a plan_approved / plan_rejected event on its own topic (keyed by its plan,
        else by its Confirm: a decision on another target may name no plan)."""
        model = DecisionEvent.model_validate(_stamped(event))
        return self._put(model.event_type, model.payload.plan_id or model.payload.confirm_id, model)

    def publish_delta(self, event: DeltaIntentEvent | dict[str, Any]) -> bool:
        """Queue a delta_intent event."""
        model = DeltaIntentEvent.model_validate(_stamped(event))
        return self._put("delta_intents", model.payload.plan_id, model)

    def publish_stage(self, event: StageEvent | dict[str, Any]) -> bool:
        """Queue a pipeline_stage event (execute started / completed / failed, ...)."""
        model = StageEvent.model_validate(_stamped(event))
        key = model.payload.plan_id or model.pipeline_id or model.event_id
        return self._put("pipeline_stage", key, model)

    def publish_map_event(self, event: MapEvent | dict[str, Any]) -> bool:
        """Queue a MAP session event, keyed by its session (one session, one partition)."""
        model = MapEvent.model_validate(event)
        return self._put("map_events", model.session_id, model)

    def publish_sa_event(self, event: SaEvent | dict[str, Any]) -> bool:
        """Queue a single-agent event, keyed by its plan (else its SA): one SA, one partition."""
        model = SaEvent.model_validate(event)
        return self._put("sa_events", model.plan_id or model.sa_id, model)

    def publish_execution(self, event: ExecutionEvent | dict[str, Any]) -> bool:
        """Queue a runtime execution event, keyed by its execution."""
        model = ExecutionEvent.model_validate(event)
        return self._put("runtime_executions", model.execution_id, model)

    def publish_graph_update(self, event: GraphUpdateEvent | dict[str, Any]) -> bool:
        """Queue a PSG graph update, keyed by its graph."""
        model = GraphUpdateEvent.model_validate(event)
        return self._put("graph_updates", model.graph_id, model)

    def publish_core_event(self, event: CoreEvent | dict[str, Any], key: str | None = None) -> bool:
        """Queue a core event (``mplp-event-core``: an impact analysis, an intent, a
        cost_budget ...), keyed by ``key``, else the plan its payload names, else itself. An
        impact analysis must reach its delta's partition: one whose payload names only the
        delta (``delta_id``, as the schema allows) is given its delta's plan id as ``key``."""
        model = CoreEvent.model_validate(_stamped(event))
        plan_id = text_of(model.payload, "plan_id")
        return self._put("core_events", key or plan_id or model.event_id, model)

    def publish_consent(self, project_id: str, enabled: bool) -> bool:
        """Queue a project's learning consent (opt-out when ``enabled`` is False)."""
        model = ConsentRecord(project_id=project_id, enabled=enabled)
        return self._put("consent", project_id, model)

    def publish_raw(self, topic_field: str, key: bytes | None, value: bytes | None) -> bool:
        """Queue bytes as they are (no validation): for replays, tests and fault injection."""
        return self._enqueue(self.topics.name(topic_field), key, value)

    def _put(self, topic_field: str, key: str, model: BaseModel) -> bool:
        value = model.model_dump_json(exclude_none=True).encode()
        return self._enqueue(self.topics.name(topic_field), key.encode(), value)

    def _enqueue(self, topic: str, key: bytes | None, value: bytes | None) -> bool:
        try:
            self._queue.put_nowait((topic, key, value))
        except asyncio.QueueFull:
            self.stats.dropped += 1
            return False
        self.stats.accepted += 1
        return True

    def _delivered(self, delivery: asyncio.Future[Any]) -> None:
        if delivery.cancelled() or delivery.exception() is not None:
            self.stats.failed += 1
            log.error("delivery failed: %s", None if delivery.cancelled() else delivery.exception())
        else:
            self.stats.sent += 1

    async def _drain_loop(self) -> None:
        while (item := await self._queue.get()) is not _STOP:
            topic, key, value = item
            try:
                delivery = await self._producer.send(topic, key=key, value=value)
                delivery.add_done_callback(self._delivered)
            except Exception:  # the caller never waits on us: count and log, don't die
                self.stats.failed += 1
                log.exception("publish to %s failed", topic)
            finally:
                self._queue.task_done()
        with contextlib.suppress(Exception):
            await self._producer.flush()
