"""Preference pairs mined from the samples as they are written (streams/samples/pairs.py,
replans.py), and plan_optimization samples (streams/samples/optimizations.py).

Every sample the emitter sends, anonymized and admitted by consent, reaches ``mine`` (an
``on_sent`` hook) in its source record's transaction. A correction is a pair (or a counted
no-pair) at once. A decided plan (intent_resolution) goes on to ``learnstream.pair_intents``
keyed by its project and intent (``match_key``): two plans of one intent come from records of
different partitions until then. ``learnstream.replans`` matches them there, in the
``pair_intents`` table under the same key: plans of two projects never meet, so a pair never
carries one project's plan under another's consent. Intents expire on ticks (a leader timer
sends an empty record to each partition of the re-key topic, as agents/joins/sweeper.py does) and
when a plan finds its intent expired. A tick reads only the intents due: an in-memory index
of when each was last touched, by partition and minute (streams/join/expiry.py, as the plans'
TTL and the MAP sessions use), rebuilt from the table in slices after a rebalance; an intent
expires up to a minute after its TTL. Pairs leave from inside the step that made them, in its
source's transaction.

A completed execution of a plan (a pipeline_outcome of its ``execute`` stage) takes the same
way, keyed by its project and intent: in the ``pair_intents`` table it meets the intent's
other executions, and an optimization found there is a plan_optimization sample (one per pair
of plans: the rule in streams/samples/optimizations.py), sent through the emitter (collection
controls, privacy, consent) like any other. Its pair is then mined
from it as written, by this same hook, as a correction is.

The hook sees what a reader of the samples topic would, without the round trip: reading the
topic back costs a Faust event (decode, validate, commit) per sample (benchmarks/RESULTS.md,
findings behind the design).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from datetime import datetime
from typing import Any

from faust.types import TP, EventT, StreamT

from learnstream.agents.joins.held import HeldWrites
from learnstream.agents.joins.window_store import SCAN_STEP
from learnstream.agents.runtime import Runtime
from learnstream.streams.join.expiry import ExpiryIndex
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


class _Pairs:
    """The two agents' steps, over the runtime and the ``pair_intents`` table."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime, self.metrics = runtime, runtime.metrics
        table = runtime.tables.pair_intents
        if table is None:  # Tables.declare leaves it out only when pairs are off
            raise RuntimeError("the pairs miner needs the pair_intents table (pairs are off)")
        self.table = table
        # at_least_once: an intent's changes wait in memory, each re-keyed record pinned,
        # and are written once on a tick after join.hold_in_memory (agents/joins/held.py)
        at_least_once = runtime.settings.processing_guarantee == "at_least_once"
        pins = runtime.progress if at_least_once else None
        self.writes = HeldWrites(table, pins, runtime.settings.join.hold_in_memory)
        self.metrics.held_writes.labels("pair_intents").set_function(self.writes.count)
        #: When each intent was last touched, by partition and minute: a tick pops the due.
        self.quiet = ExpiryIndex(runtime.settings.topics.partitions)
        #: The minute each intent was last noted under: noted again only when it moves.
        self._noted: dict[str, int] = {}

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
        partition."""
        msg = event.message
        if not msg.value:
            self.sweep(msg.partition)
            return
        found, source = read_rekeyed(msg.value), (msg.topic, msg.partition)
        held, samples, pairs, reason = self.match(found, msg.partition)
        key, record = match_key(found), (TP(msg.topic, msg.partition), msg.offset)
        self.writes.put(key, held.model_dump(mode="json"), [record], self.runtime.clock())
        self._note(key, held)
        if samples:
            await self.runtime.emitter.send(self.runtime.emitter.prepare(samples), source)
        for pair in pairs:
            await self.send(pair, source)
        if reason is not None:
            self.metrics.child(self.metrics.no_pair, reason).inc()

    def match(
        self, found: Plan | Execution, partition: int
    ) -> tuple[IntentPlans, list[LearningSample], list[PreferencePair], str | None]:
        """Add a plan or an execution to its intent; return the intent, the
        plan_optimization samples and the replan pairs it made, and why it was not held."""
        held, moment = self.held(match_key(found)), self.runtime.clock()
        if isinstance(found, Plan):
            held, pairs, reason = match(held, found, moment, partition)
            return held, [], pairs, reason
        margin = self.runtime.settings.pairs.optimization_margin
        held, samples, reason = match_execution(held, found, moment, partition, margin)
        return held, samples, [], reason

    def held(self, key: str) -> IntentPlans | None:
        """Return what is stored for an intent (``match_key``); an expired one counts and is
        gone."""
        raw = self.writes.get(key)
        if not raw:
            return None
        if due(raw, self.runtime.clock(), self.runtime.settings.pairs.ttl):
            self.expire(raw)
            return None
        return IntentPlans.model_validate(raw)

    def _note(self, key: str, held: IntentPlans) -> None:
        minute = self.quiet.bucket_of(held.touched)
        if self._noted.get(key) != minute:
            self._noted[key] = minute
            self.quiet.note(key, held.touched, partition=held.partition)

    def sweep(self, partition: int) -> None:
        """Write the intents of ``partition`` held long enough; drop those whose last plan
        came ``pairs.ttl`` ago.

        The index says which may be due; the stored value decides (one touched since is
        noted again under its new minute). After a start or a rebalance the index is first
        rebuilt, ``SCAN_STEP`` intents a tick, so a tick never holds the loop for a whole
        table; what is known meanwhile expires."""
        moment, ttl = self.runtime.clock(), self.runtime.settings.pairs.ttl
        self.writes.flush(partition, moment)
        if not self.quiet.built:
            if not self.quiet.scanning:
                self._noted.clear()
                self.quiet.start(_with_partitions(self.writes.items()), _touched)
            self.quiet.step(SCAN_STEP)
        for key in dict.fromkeys(self.quiet.due(partition, moment, ttl)):
            self._noted.pop(key, None)
            raw = self.writes.get(key)
            if raw and due(raw, moment, ttl):
                self.writes.delete(key)
                self.expire(raw)

    def invalidate(self, partitions: set[int]) -> None:
        """Forget the index and what is held for revoked ``partitions`` (their records come
        again): the index is rebuilt on the next tick."""
        self.writes.drop(partitions)
        self.quiet.invalidate()
        self._noted.clear()

    def expire(self, raw: dict[str, Any]) -> None:
        """Count one intent dropped, by whether any of its plans was approved."""
        approved = "true" if raw.get("approved") else "false"
        self.metrics.child(self.metrics.pair_intents_expired, approved).inc()

    async def send(self, pair: PreferencePair, source: tuple[str, int]) -> Awaitable[Any]:
        """Send one pair (JSON, keyed by pair_id) in the transaction of ``source``; return
        its ack."""
        topic = self.runtime.topics.preference_pairs
        ack = await self.runtime.produce(topic, pair.key(), pair.to_json(), source, None)
        self.metrics.child(self.metrics.pairs, pair.kind).inc()
        return ack


def register(runtime: Runtime) -> None:
    """Mine every sample sent; register the replans agent and its expiry timer (if pairs are on)."""
    if not runtime.settings.pairs.enabled:
        return
    steps, app = _Pairs(runtime), runtime.app
    intents = runtime.topics.pair_intents
    runtime.on_sent.append(steps.mine)

    def on_revoked(*args: Any, **_kwargs: Any) -> None:
        # (app, revoked partitions): another worker may change the partitions we get back
        steps.invalidate({tp.partition for tp in args[1]})

    app.on_partitions_revoked.connect(on_revoked)
    runtime.handover.append(steps.writes.write_all)

    @app.agent(intents, name="learnstream.replans")
    async def replans(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("pair_intents", event, steps.replan)

    interval = runtime.settings.pairs.sweep_interval

    @app.timer(interval, on_leader=True, name="learnstream.pair_tick")  # type: ignore[untyped-decorator]
    async def tick() -> None:
        # Triggers, not data: sent outside any transaction (see agents/joins/sweeper.py).
        for partition in range(runtime.settings.topics.partitions):
            await app.producer.send(intents.get_topic_name(), b"tick", b"", partition, None, None)


def _touched(raw: Any) -> tuple[datetime, None] | None:
    """Return when a stored intent was last touched (what the index is built from); None
    for a value that says not, left out (a tick must not fail on it)."""
    try:
        return datetime.fromisoformat(raw["touched"]), None
    except (KeyError, TypeError, ValueError):
        return None


def _with_partitions(
    items: Iterator[tuple[Any, Any, int | None]],
) -> Iterator[tuple[Any, Any, int | None]]:
    """Yield (key, value, partition) of the stored intents, the partition a store that keeps
    none reports taken from the value, which names the partition whose records wrote it."""
    for key, raw, partition in items:
        if raw:
            yield key, raw, raw.get("partition") if partition is None else partition


def _evaluated_by_the_system(sample: LearningSample) -> bool:
    """Tell a plan nobody judged (plan_generation: an intent_resolution of the system), which
    makes no replan pair and is no pair's miss either."""
    return sample.sample_family == "intent_resolution" and sample.feedback.source == "system"
