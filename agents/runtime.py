"""What every agent shares: topics, tables, metrics, and the parts records leave through.

``Runtime`` is built whole by ``learnstream.agents.wiring.wire`` from small parts, each with one
job: the plan-state store (agents/joins/planstore.py), the sample emitter (privacy,
encoding, the consent fence and verdict; agents/emitter.py), the dead letters
(agents/deadletters.py), the join (agents/joins/plan_join.py) and the one way a record leaves
(agents/sender.py). It keeps what every
agent shares: the guard each record runs under. Nothing is set on it after it is built; the
three lists are the hooks other agents register with (quality windows, the pairs miner).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import faust
from faust.types import EventT

from learnstream.agents.clock import Clock
from learnstream.agents.deadletters import DeadLetters
from learnstream.agents.emitter import Emitter, OnSent
from learnstream.agents.joins.plan_join import Join
from learnstream.agents.joins.planstore import PlanStore
from learnstream.agents.learning.stats import SkillTable
from learnstream.agents.seams.end_offsets import Ends
from learnstream.agents.sender import Sender
from learnstream.streams.config.settings import Settings
from learnstream.streams.consent.fence import Fence
from learnstream.streams.consent.view import ConsentView
from learnstream.streams.dlq.errors import InvalidEvent, describe_failure
from learnstream.streams.dlq.record import DlqRecord
from learnstream.streams.encoding.codecs import SampleCodec
from learnstream.streams.io.tables import Tables
from learnstream.streams.io.topics import Topics
from learnstream.streams.join.lead import LeadOrder
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.offsets.progress import Progress
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.samples.sample import LearningSample

__all__ = ["Runtime"]

log = logging.getLogger("learnstream")


@dataclass(frozen=True)
class Runtime:
    """The agents' shared handles, the parts records leave through, and the record guard."""

    app: faust.App
    settings: Settings
    topics: Topics
    tables: Tables
    metrics: Metrics
    anonymizer: Anonymizer
    codec: SampleCodec
    #: The time every part of the pipeline reads (agents/clock.py).
    clock: Clock
    #: Records processed per partition; what offset commits take (streams/offsets/progress.py).
    progress: Progress
    #: Every project's consent, read by this worker (agents/consent_reader.py feeds both).
    consent: ConsentView
    #: Holds samples until ``consent`` has read what was written before their record came.
    fence: Fence
    #: Where the consent and corrections topics end (agents/seams/end_offsets.py, or a test's).
    ends: Ends
    #: The one way a record leaves, in its source's transaction.
    produce: Sender
    plans: PlanStore
    emitter: Emitter
    dead_letters: DeadLetters
    #: The join of decisions, deltas and stages with plan state.
    join: Join
    #: The A2E skill/tool stats table (agents/learning/stats.py).
    skill_stats: SkillTable
    #: Called with every sample sent (e.g. the windowed quality tables of agents/quality_tables.py).
    on_sample: list[Callable[[LearningSample], None]]
    #: Awaited with every sample sent, as written, in its source's transaction (the pairs miner).
    on_sent: list[OnSent]
    #: Called after every record, with it as Faust's current event (the quality windows' flush).
    after_record: list[Callable[[EventT[bytes]], None]]
    #: Which input partitions wait for the plans and corrections to catch up
    #: (streams/join/lead.py; agents/joins/lead.py pauses them).
    lead: LeadOrder = field(default_factory=lambda: LeadOrder({}, 0, 0.0))
    #: Called when the last commit before the partitions go starts (a rebalance's or a
    #: stopping worker's): write what is held in memory, so the partitions' next owner
    #: does not read those records again (agents/joins/held.py).
    handover: list[Callable[[], object]] = field(default_factory=list)

    async def dead_letter(self, record: DlqRecord, key: bytes | None, value: bytes | None) -> None:
        """Send the original bytes to the DLQ with headers saying why and from where."""
        await self.dead_letters.send(record, key, value)

    async def guarded(
        self, source: str, event: EventT[bytes], handle: Callable[[EventT[bytes]], Awaitable[None]]
    ) -> None:
        """Run ``handle`` on one record; any failure dead-letters it and the loop goes on.

        Skipped: a record processed before (handed over again after a seek), and one above a
        hole in its partition's offsets (it comes again once the hole is re-read). Then, still
        with the record as Faust's current event (in its stream iteration, or in its lane:
        agents/seams/lanes.py), the ``after_record`` listeners run (a flush of the quality
        windows): the record counts as processed by then.
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
