"""Preference pairs mined from the samples as they are written (streams/samples/pairs.py,
replans.py), and plan_optimization samples (streams/samples/optimizations.py).

Every sample the emitter sends, anonymized and admitted by consent, reaches ``mine`` (an
``on_sent`` hook) in its source record's transaction. A correction is a pair (or a counted
no-pair) at once. A decided plan (intent_resolution) goes on to ``learnstream.pair_intents``
keyed by its project and intent (``match_key``): two plans of one intent come from records of
different partitions until then. ``learnstream.replans`` matches them there, with the other
plans the intent holds under the same key: plans of two projects never meet, so a pair never
carries one project's plan under another's consent. Intents expire on ticks (a leader timer
sends an empty record to each partition of the re-key topic, as agents/joins/sweeper.py does) and
when a plan finds its intent expired. A tick reads only the intents due: an in-memory index
of when each was last touched, by partition and minute (streams/join/expiry.py, as the plans'
TTL and the MAP sessions use); an intent expires up to a minute after its TTL. Pairs leave
from inside the step that made them, in its source's transaction.

A completed execution of a plan (a pipeline_outcome of its ``execute`` stage) takes the same
way, keyed by its project and intent: there it meets the intent's other executions, and an
optimization found is a plan_optimization sample (one per pair of plans: the rule in
streams/samples/optimizations.py), sent through the emitter (collection controls, privacy,
consent) like any other. Its pair is then mined from it as written, by this same hook, as a
correction is.

**No changelog.** What an intent holds is a fold of its partition's re-keyed records, so the
intents live in memory only, per partition, and a worker assigned a partition folds the
records again (agents/joins/rekey_replay.py) before its first record: from ``pairs.ttl`` ago
up to that record, nothing sent, each record's timestamp standing for the time it was first
read. A table with a changelog wrote one record per decided plan (0.31 per input event on the
benchmark's workload) to restore what the re-key topic already holds. What this gives up: an
intent kept alive by plans less than ``pairs.ttl`` apart for longer than ``pairs.ttl`` comes
back on another worker without its plans older than that.

The hook sees what a reader of the samples topic would, without the round trip: reading the
topic back costs a Faust event (decode, validate, commit) per sample (benchmarks/RESULTS.md,
findings behind the design).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any

from faust.types import TP, EventT, StreamT

from learnstream.agents.joins.rekey_replay import RekeyReplay, Replay
from learnstream.agents.runtime import Runtime
from learnstream.streams.dlq.errors import InvalidEvent, describe_failure
from learnstream.streams.io.connection import app_connection
from learnstream.streams.join.expiry import EXPIRY_BUCKET, ExpiryIndex
from learnstream.streams.samples.executions import Execution, execution_of
from learnstream.streams.samples.outbox import Outgoing
from learnstream.streams.samples.pairs import (
    PreferencePair,
    correction_pair,
    optimization_pair,
    pair_sample,
)
from learnstream.streams.samples.parts import iso
from learnstream.streams.samples.replans import (
    IntentPlans,
    Plan,
    due,
    match,
    match_execution,
    match_key,
    plan_of,
    read_rekeyed,
)
from learnstream.streams.samples.sample import LearningSample

__all__ = ["register"]

log = logging.getLogger("learnstream")


class _Pairs:
    """The two agents' steps, over the runtime and the intents of this worker's partitions."""

    def __init__(self, runtime: Runtime, replay: Replay) -> None:
        self.runtime, self.metrics, self.replay = runtime, runtime.metrics, replay
        self.topic = runtime.topics.pair_intents.get_topic_name()
        self.ttl = runtime.settings.pairs.ttl
        #: partition -> intent key (``match_key``) -> what the matcher holds; a partition
        #: is here once restored since it was assigned (``restored``)
        self.intents: dict[int, dict[str, IntentPlans]] = {}
        #: When each intent was last touched, by partition and minute: a tick pops the due.
        self.quiet = ExpiryIndex(runtime.settings.topics.partitions)
        #: partition -> intent key -> the minute it was last noted under in ``quiet``: noted
        #: again only when it moves (dropped with the partition's index entries)
        self._noted: dict[int, dict[str, int]] = {}
        #: Counts revocations: a restore finished across one is not kept.
        self._epoch = 0

    async def mine(self, out: Outgoing, source: tuple[str, int]) -> list[Awaitable[Any] | None]:
        """Turn one sample as written into a pair, a re-keyed plan, or nothing (a family
        that makes no pair); return the acks of what it sent."""
        sample = pair_sample(out.clean)
        if sample is None or _evaluated_by_the_system(sample):
            return []
        found: PreferencePair | Plan | Execution | str
        family, created_at = sample.sample_family, iso(self.runtime.clock())
        if family == "error_correction":
            found = correction_pair(sample, created_at)
        elif family == "plan_optimization":
            found = optimization_pair(sample, created_at)
        elif family == "pipeline_outcome":
            found = execution_of(sample)
        else:
            found = plan_of(sample)
        if isinstance(found, Plan | Execution):
            topic, key = self.runtime.topics.pair_intents, match_key(found).encode()
            return [await self.runtime.produce(topic, key, found.to_json(), source, None)]
        if isinstance(found, PreferencePair):
            return [await self.send(found, source)]
        self.metrics.child(self.metrics.no_pair, found).inc()
        return []

    async def replan(self, event: EventT[bytes]) -> None:
        """Match one re-keyed plan or execution with its intent's others; a tick sweeps its
        partition. The partition's intents are restored first if it is new to this worker."""
        msg = event.message
        intents = await self.restored(msg.partition, msg.offset)
        if not msg.value:
            self.sweep(msg.partition, intents)
            return
        found, source = read_rekeyed(msg.value), (msg.topic, msg.partition)
        samples, pairs, reason = self.fold(intents, found, msg.partition, self.runtime.clock())
        if samples:
            await self.runtime.emitter.send(self.runtime.emitter.prepare(samples), source)
        for pair in pairs:
            await self.send(pair, source)
        if reason is not None:
            self.metrics.child(self.metrics.no_pair, reason).inc()

    def fold(
        self,
        intents: dict[str, IntentPlans],
        found: Plan | Execution,
        partition: int,
        moment: datetime,
        *,
        live: bool = True,
    ) -> tuple[list[LearningSample], list[PreferencePair], str | None]:
        """Add a plan or an execution to its intent in ``intents``; return the
        plan_optimization samples and the replan pairs it made, and why it was not held.
        An intent whose last plan came ``pairs.ttl`` before ``moment`` is dropped first
        (counted only ``live``: a restore folds again what an earlier owner counted)."""
        key = match_key(found)
        held = intents.get(key)
        if held is not None and due(held, moment, self.ttl):
            if live:
                self.expire(held)
            held = None
        samples: list[LearningSample] = []
        pairs: list[PreferencePair] = []
        if isinstance(found, Plan):
            held, pairs, reason = match(held, found, moment, partition)
        else:
            margin = self.runtime.settings.pairs.optimization_margin
            held, samples, reason = match_execution(held, found, moment, partition, margin)
        intents[key] = held
        self._note(key, held)
        return samples, pairs, reason

    async def restored(self, partition: int, offset: int) -> dict[str, IntentPlans]:
        """Return the intents of ``partition``, restored first if it was assigned since
        they were last known: its re-keyed records from ``pairs.ttl`` ago (and a minute, as
        an intent expires up to a minute late) up to ``offset``, the first record its agent
        was handed, folded again with their timestamps for time, nothing sent.

        A failed read is retried until it succeeds (the records after it wait): matching
        against a partial intent would lose pairs for good."""
        intents = self.intents.get(partition)
        if intents is not None:
            return intents
        epoch, started, pause = self._epoch, time.perf_counter(), 0.5
        since = self.runtime.clock() - self.ttl - EXPIRY_BUCKET
        intents, count = {}, 0
        while offset > 0:  # at offset 0 nothing comes before it
            intents, count = {}, 0
            try:
                async for _offset, timestamp, value in self.replay.read(
                    partition, int(since.timestamp() * 1000), offset
                ):
                    count += 1
                    self._refold(intents, partition, timestamp, value)
                break
            except Exception as exc:  # noqa: BLE001  (the broker comes back; retry)
                log.warning(
                    "pairs miner: restoring %s[%d] failed (%s); retrying in %.1fs",
                    self.topic, partition, describe_failure(exc), pause,
                )  # fmt: skip
                await asyncio.sleep(pause)
                pause = min(pause * 2, 10.0)
        self.metrics.pair_intents_restored.inc(count)
        if count:
            log.info(
                "pairs miner: %s[%d] restored from %d re-keyed records below offset %d in "
                "%.2fs: %d intents",
                self.topic, partition, count, offset, time.perf_counter() - started, len(intents),
            )  # fmt: skip
        if epoch == self._epoch:  # else revoked meanwhile: use it for this record only
            self.intents[partition] = intents
        return intents

    async def restore_ahead(self, tp: TP) -> None:
        """Restore the intents of ``tp``'s partition up to where its records start for this
        worker (the committed offset, asked of the broker), before its record is handled.

        Outside the record's handling, so under exactly_once a commit need not wait for the
        restore (``Progress.quiet`` waits for the records being handled); where the start is
        unknown, ``replan`` restores up to the record instead."""
        start = await self.runtime.progress.expected_now(tp)
        if start is not None:
            await self.restored(tp.partition, start)

    def _refold(
        self, intents: dict[str, IntentPlans], partition: int, timestamp: int, value: bytes
    ) -> None:
        """Fold one record read back into ``intents`` (a tick or a bad record: nothing)."""
        if not value:
            return
        try:
            found = read_rekeyed(value)
        except InvalidEvent:  # dead-lettered when it was read the first time
            return
        moment = datetime.fromtimestamp(timestamp / 1000, UTC)
        self.fold(intents, found, partition, moment, live=False)

    def _note(self, key: str, held: IntentPlans) -> None:
        minute, noted = (
            self.quiet.bucket_of(held.touched),
            self._noted.setdefault(held.partition, {}),
        )
        if noted.get(key) != minute:
            noted[key] = minute
            self.quiet.note(key, held.touched, partition=held.partition)

    def sweep(self, partition: int, intents: dict[str, IntentPlans]) -> None:
        """Drop the intents of ``partition`` whose last plan came ``pairs.ttl`` ago.

        The index says which may be due; the intent itself decides (one touched since is
        noted again under its new minute)."""
        moment, noted = self.runtime.clock(), self._noted.get(partition, {})
        for key in dict.fromkeys(self.quiet.due(partition, moment, self.ttl)):
            noted.pop(key, None)
            held = intents.get(key)
            if held is not None and due(held, moment, self.ttl):
                del intents[key]
                self.expire(held)

    def invalidate(self, partitions: set[int]) -> None:
        """Forget the intents of revoked ``partitions``: whoever reads them next restores them
        from the re-key topic (this worker too, if it gets them back)."""
        self._epoch += 1
        for partition in partitions:
            self.intents.pop(partition, None)
            self._noted.pop(partition, None)  # with the index's entries: they go together
            self.quiet.drop(partition)

    def expire(self, held: IntentPlans) -> None:
        """Count one intent dropped, by whether any of its plans was approved."""
        approved = "true" if held.approved else "false"
        self.metrics.child(self.metrics.pair_intents_expired, approved).inc()

    async def send(self, pair: PreferencePair, source: tuple[str, int]) -> Awaitable[Any]:
        """Send one pair (JSON, keyed by pair_id) in the transaction of ``source``; return
        its ack."""
        topic = self.runtime.topics.preference_pairs
        ack = await self.runtime.produce(topic, pair.key(), pair.to_json(), source, None)
        self.metrics.child(self.metrics.pairs, pair.kind).inc()
        return ack


def register(runtime: Runtime, replay: Replay | None = None) -> None:
    """Mine every sample sent; register the replans agent and its expiry timer (if pairs are
    on). ``replay`` reads the re-key topic back (default: a consumer of the app's broker)."""
    if not runtime.settings.pairs.enabled:
        return
    app, intents = runtime.app, runtime.topics.pair_intents
    if replay is None:
        exactly_once = runtime.settings.processing_guarantee == "exactly_once"
        reader = RekeyReplay(
            app_connection(app, runtime.settings.broker),
            intents.get_topic_name(),
            "read_committed" if exactly_once else "read_uncommitted",
        )
        app.add_dependency(reader)
        replay = reader
    steps = _Pairs(runtime, replay)
    runtime.on_sent.append(steps.mine)

    def on_revoked(*args: Any, **_kwargs: Any) -> None:
        # (app, revoked partitions): another worker may change the partitions we get back
        steps.invalidate({tp.partition for tp in args[1] if tp.topic == steps.topic})

    app.on_partitions_revoked.connect(on_revoked)

    @app.agent(intents, name="learnstream.replans")
    async def replans(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            if event.message.partition not in steps.intents:
                await steps.restore_ahead(event.message.tp)
            await runtime.guarded("pair_intents", event, steps.replan)

    interval = runtime.settings.pairs.sweep_interval

    @app.timer(interval, on_leader=True, name="learnstream.pair_tick")  # type: ignore[untyped-decorator]
    async def tick() -> None:
        # Triggers, not data: sent outside any transaction (see agents/joins/sweeper.py).
        for partition in range(runtime.settings.topics.partitions):
            await app.producer.send(intents.get_topic_name(), b"tick", b"", partition, None, None)


def _evaluated_by_the_system(sample: LearningSample) -> bool:
    """Tell a plan nobody judged (plan_generation: an intent_resolution of the system), which
    makes no replan pair and is no pair's miss either."""
    return sample.sample_family == "intent_resolution" and sample.feedback.source == "system"
