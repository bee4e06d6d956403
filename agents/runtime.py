"""What every agent shares: topics, tables, metrics, and the parts records leave through.

``Runtime`` composes small parts, each with one job: the plan-state store
(agents/planstore.py), the sample emitter (privacy, encoding, the consent fence and verdict;
agents/emitter.py), the dead letters (agents/deadletters.py) and the join
(agents/plan_join.py, set by ``agents.wiring.wire``). It keeps the two things every agent
shares: the
guard each record runs under, and the one way to produce a record. Nothing else touches Kafka.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import faust
from faust.types import EventT

from agents import faust_compat
from agents.deadletters import DeadLetters
from agents.emitter import Emitter, OnSent, Ready, now
from agents.planstore import PlanStore
from streams.config.settings import Settings
from streams.consent.fence import Fence
from streams.consent.view import ConsentView
from streams.dlq.errors import InvalidEvent, describe_failure
from streams.dlq.record import DlqRecord
from streams.encoding.codecs import SampleCodec
from streams.io.tables import Tables
from streams.io.topics import Topics
from streams.join.expiry import ExpiryIndex
from streams.join.plan_state import PlanState
from streams.observe.metrics import Metrics
from streams.offsets.progress import Progress
from streams.privacy import Anonymizer
from streams.samples.sample import LearningSample

if TYPE_CHECKING:
    from agents.learn_stats import SkillTable
    from agents.plan_join import Join

__all__ = ["Runtime", "now"]

log = logging.getLogger("learnstream")


@dataclass
class Runtime:
    """The agents' shared handles, the parts records leave through, and the record guard."""

    app: faust.App
    settings: Settings
    topics: Topics
    tables: Tables
    metrics: Metrics
    anonymizer: Anonymizer
    codec: SampleCodec
    #: Terminal plans by expiry time, for the sweeper (agents/sweeper.py).
    expiry: ExpiryIndex
    #: Records processed per partition; what offset commits take (streams/offsets/progress.py).
    progress: Progress
    #: Called with every sample sent (e.g. the windowed quality tables of agents/quality_tables.py).
    on_sample: list[Callable[[LearningSample], None]] = field(default_factory=list)
    #: Awaited with every sample sent, as written, in its source's transaction (the pairs miner).
    on_sent: list[OnSent] = field(default_factory=list)
    #: Called after every record, in its stream iteration (the quality windows' flush).
    after_record: list[Callable[[EventT[bytes]], None]] = field(default_factory=list)
    #: Every project's consent, read by this worker (agents/consent_reader.py feeds both).
    consent: ConsentView = field(default_factory=ConsentView)
    #: Holds samples until ``consent`` has read what was written before their record came.
    fence: Fence = field(default_factory=Fence)
    plans: PlanStore = field(init=False)
    emitter: Emitter = field(init=False)
    dead_letters: DeadLetters = field(init=False)
    #: The join of decisions, deltas and stages with plan state (set by ``agents.wiring.wire``).
    join: Join = field(init=False)
    #: The A2E skill/tool stats table (agents/learn_stats.py), declared by the first user.
    skill_stats: SkillTable | None = None

    def __post_init__(self) -> None:
        self.plans = PlanStore(self.tables.plan_state, self.expiry)
        self.emitter = Emitter(
            self.settings, self.topics, self.metrics, self.anonymizer, self.codec,
            self.produce, self.consent, self.fence, self.on_sample, self.on_sent,
        )  # fmt: skip
        self.dead_letters = DeadLetters(self.topics.dlq, self.metrics, self.produce)

    def plan_state(self, plan_id: str) -> PlanState | None:
        """Return the state of ``plan_id`` held in the table, if any."""
        return self.plans.get(plan_id)

    def store_plan(self, plan_id: str, state: PlanState) -> None:
        """Write ``state`` to the plan_state table if it changed (and note when it expires)."""
        self.plans.store(plan_id, state)

    def forget_plan(self, plan_id: str) -> None:
        """Delete ``plan_id`` from the plan_state table (a tombstone in its changelog)."""
        self.plans.forget(plan_id)

    def prepare(self, samples: list[LearningSample]) -> Ready:
        """Apply the global switch, privacy and encoding (may raise: before anything moves)."""
        return self.emitter.prepare(samples)

    async def send(self, ready: Ready, source: tuple[str, int], *, wait: bool = False) -> Ready:
        """Send prepared samples through consent for the record at ``source``; return those
        sent (what consent let through)."""
        return await self.emitter.send(ready, source, wait=wait)

    async def consented(self, projects: list[str | None]) -> list[bool]:
        """Return, after the consent fence, whether each project may be collected (records
        that are not samples: A2E experiences)."""
        return await self.emitter.consented(projects)

    async def dead_letter(self, record: DlqRecord, key: bytes | None, value: bytes | None) -> None:
        """Send the original bytes to the DLQ with headers saying why and from where."""
        await self.dead_letters.send(record, key, value)

    async def produce(
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
        that skips Faust's channel layer and send sensors, a per-send cost the worker uses
        nothing of (benchmarks/RESULTS.md, findings behind the design).
        """
        transactional_id = None
        if self.app.in_transaction:
            transactional_id = faust_compat.transactional_id(self.app, source[0], source[1])
        return await self.app.producer.send(
            topic.get_topic_name(),
            key,
            value,
            None,
            None,
            headers,
            transactional_id=transactional_id,
        )

    async def guarded(
        self, source: str, event: EventT[bytes], handle: Callable[[EventT[bytes]], Awaitable[None]]
    ) -> None:
        """Run ``handle`` on one record; any failure dead-letters it and the loop goes on.

        Skipped: a record processed before (handed over again after a seek), and one above a
        hole in its partition's offsets (it comes again once the hole is re-read). Then, still
        in the record's stream iteration, the ``after_record`` listeners run (a flush of the
        quality windows): the record counts as processed by then.
        """
        msg = event.message
        async with self.progress.record(msg.tp, msg.offset) as fresh:
            if fresh:
                await self._handle(source, event, handle)
            else:
                self.metrics.redelivered.inc()
        for listener in self.after_record:
            listener(event)

    async def _handle(
        self, source: str, event: EventT[bytes], handle: Callable[[EventT[bytes]], Awaitable[None]]
    ) -> None:
        msg = event.message
        self.metrics.child(self.metrics.events, source).inc()
        started = time.perf_counter()
        try:
            await handle(event)
        except InvalidEvent as exc:
            where = self.dead_letters.where(event, exc.reason, exc.detail)
            await self.dead_letter(where, msg.key, msg.value)
        except Exception as exc:  # a bug must not lose the record, nor re-read it forever
            record = self.dead_letters.where(event, "builder_error", describe_failure(exc))
            log.error("%s failed %s error=%s", source, record.location, record.error)
            await self.dead_letter(record, msg.key, msg.value)
        finally:
            processing = self.metrics.child(self.metrics.processing, source)
            processing.observe(time.perf_counter() - started)
