"""Samples leave here: global switch, privacy and encoding, then consent, then the topics."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from faust.streams import current_event

from learnstream.agents.clock import Clock
from learnstream.agents.deadletters import Produce
from learnstream.streams.config.settings import Settings
from learnstream.streams.consent.fence import Fence
from learnstream.streams.consent.view import ConsentView
from learnstream.streams.encoding.codecs import SampleCodec
from learnstream.streams.io.topics import Topics
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.samples.collection import collection_point, in_sample
from learnstream.streams.samples.outbox import Outgoing, consent_verdict, prepare
from learnstream.streams.samples.sample import LearningSample

__all__ = ["ACK_WARN_S", "Emitter", "OnSent", "Ready", "await_acks"]

log = logging.getLogger("learnstream")

#: Seconds sends may wait for the broker's acks before the worker says so (and again after).
ACK_WARN_S = 10.0

Ready = list[tuple[LearningSample, Outgoing]]
#: Called with each sample sent, as written, and its source record's (topic, partition);
#: returns the acks of what it sent in turn (waited for with the sample's own).
OnSent = Callable[[Outgoing, tuple[str, int]], Awaitable[list[Awaitable[Any] | None]]]


async def await_acks(acks: list[Awaitable[Any] | None], warn_after: float = ACK_WARN_S) -> None:
    """Wait for every ack (None: a test double's send); say so while some take long.

    An ack that never comes would otherwise hold the join and the next commit without a
    word: the producer's own request timeout is long.
    """
    pending = {asyncio.ensure_future(ack) for ack in acks if ack is not None}
    waited = 0.0
    while pending:
        done, pending = await asyncio.wait(pending, timeout=warn_after)
        for future in done:
            future.result()  # a failed send raises here, as awaiting it would
        if pending:
            waited += warn_after
            log.warning(
                "%d sample sends have waited %gs for the broker's acknowledgement",
                len(pending),
                waited,
            )


@dataclass
class Emitter:
    """Prepare samples (may raise, before anything is stored or sent), then send them.

    Every sample passes ``admit``: the consent fence and verdict. With
    ``topics.emit_captured`` off, no ``learning_sample_captured`` event goes out.
    """

    settings: Settings
    topics: Topics
    metrics: Metrics
    anonymizer: Anonymizer
    codec: SampleCodec
    produce: Produce
    consent: ConsentView
    fence: Fence
    clock: Clock
    on_sample: list[Callable[[LearningSample], None]] = field(default_factory=list)
    on_sent: list[OnSent] = field(default_factory=list)

    def prepare(self, samples: list[LearningSample]) -> Ready:
        """Apply the collection controls, the global switch, privacy and encoding; project
        consent waits for ``send``."""
        samples = self.collected(samples)
        if not samples:
            return []
        if consent_verdict(self.settings.learning.enabled, None):
            self.metrics.child(self.metrics.opted_out, "global").inc(len(samples))
            return []
        captured = self.settings.topics.emit_captured
        at = self.clock()
        return [
            (s, prepare(s, self.anonymizer, self.codec, at, captured=captured)) for s in samples
        ]

    def collected(self, samples: list[LearningSample]) -> list[LearningSample]:
        """Return the samples whose collection point is on and that fall inside their
        family's rate (``collect``); count the others by why they were skipped."""
        collect = self.settings.collect
        if not (collect.off or collect.rates):
            return samples
        kept = []
        for sample in samples:
            family = sample.sample_family
            if collection_point(sample) in collect.off:
                self.metrics.child(self.metrics.skipped, family, "point_off").inc()
            elif not in_sample(sample.sample_id, collect.rates.get(family, 1.0)):
                self.metrics.child(self.metrics.skipped, family, "rate").inc()
            else:
                kept.append(sample)
        return kept

    async def admit(self, ready: Ready) -> Ready:
        """Wait until the consent view has read every consent record written before the
        current record came; return the samples whose project has not opted out."""
        if not ready:  # a record without samples never waits
            return ready
        allowed = await self.consented([sample.meta.project_id for sample, _ in ready])
        return [item for item, keep in zip(ready, allowed, strict=True) if keep]

    async def consented(self, projects: list[str | None]) -> list[bool]:
        """Wait until the consent view has read every consent record written before the
        current record came; return, per project id (any spelling), whether it may be
        collected. Each refusal counts in ``learnstream_opted_out{reason="project"}``."""
        event = current_event()
        # monotonic, stamped when the record was handed over (agents/seams/faust_compat.py seam 11)
        arrived = event.message.time_in if event is not None else None
        started = time.perf_counter()
        await self.fence.wait(arrived)
        self.metrics.consent_fence.observe(time.perf_counter() - started)
        verdicts = [not consent_verdict(True, self.consent.get(project)) for project in projects]
        if refused := verdicts.count(False):
            self.metrics.child(self.metrics.opted_out, "project").inc(refused)
        return verdicts

    async def send(self, ready: Ready, source: tuple[str, int], *, wait: bool = False) -> Ready:
        """Send the samples consent admits for the record at ``source`` (topic, partition);
        ``wait`` for the broker's acks. Return the samples sent."""
        admitted = await self.admit(ready)
        acks = [ack for item in admitted for ack in await self._send_one(*item, source)]
        if wait:
            await await_acks(acks)
        return admitted

    async def _send_one(
        self, sample: LearningSample, out: Outgoing, source: tuple[str, int]
    ) -> list[Awaitable[Any] | None]:
        """Send one sample (and its captured event); return their acks."""
        acks: list[Awaitable[Any] | None] = [
            await self.produce(self.topics.samples, out.key, out.value, source, None)
        ]
        if out.event_value is not None:
            event = await self.produce(self.topics.events, out.key, out.event_value, source, None)
            acks.append(event)
        self.metrics.child(self.metrics.samples, out.family, out.quality).inc()
        for listener in self.on_sample:
            listener(sample)
        self._observe_latency(sample)
        for entity, count in out.pii.items():
            self.metrics.child(self.metrics.pii, entity).inc(count)
        for hook in self.on_sent:  # last: the sample is sent and counted whatever a hook does
            acks.extend(await hook(out, source))
        return acks

    def _observe_latency(self, sample: LearningSample) -> None:
        if sample.meta.event_time:
            then = datetime.fromisoformat(sample.meta.event_time)
            lag = (self.clock() - then).total_seconds()
            latency = self.metrics.child(self.metrics.latency, sample.sample_family)
            latency.observe(max(lag, 0.0))
