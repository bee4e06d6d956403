"""The join as one unit (DESIGN §5): park, complete in event order, expire.

Every path of the join comes here: a live record (decisions, deltas, outcomes agents), the
plan that completes parked records (plans agent), a correction that settles records waiting
for the corrections input (deltas agent, agents/watermark.py) and the grace sweep (sweeper).
One dispatch table maps each input topic to its decoder and decider (``Route``, declared by
the agent module of that input, agents/join_replay.py); the pure decisions live in
streams/join/rules.py.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta
from typing import Any

from faust.types import EventT

from agents.emitter import now
from agents.join_replay import MISSING, Replay, Route
from agents.runtime import Runtime
from agents.watermark import Watermark
from streams.join.plan_state import PlanState, merge_snapshot
from streams.join.rules import ParkedEvent, Source, in_event_order, park, plan_key
from streams.mplp.decode import RecordOrigin
from streams.mplp.fields import InputNotes
from streams.mplp.models import PlanSnapshot

__all__ = ["Join", "Route", "attach"]


class Join:
    """Park, complete and expire join entries; the only code that writes ``pending``."""

    def __init__(self, runtime: Runtime, routes: dict[str, Route], watermark: Watermark) -> None:
        self.rt = runtime
        self.routes = routes
        self.watermark = watermark
        self.pending = runtime.tables.pending
        self.grace = runtime.settings.join.grace
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # plan key -> (lock, users)
        self.replay = Replay(routes, watermark, self.grace)

    async def process(self, event: EventT[bytes]) -> None:
        """Join one live record of an input topic with its plan's state."""
        msg, notes = event.message, InputNotes()
        route = self.routes[msg.topic]
        decoded = route.decode(msg.value, RecordOrigin.of(msg), notes)
        self.rt.metrics.note_input(notes)
        source, since = (msg.topic, msg.partition), fetched_at(event)
        if route.source == "deltas":
            self.watermark.advance(msg.partition, msg.offset)
        if decoded.payload.plan_id is not None:  # a stage that is no outcome may name none
            if route.settles:  # an end of the corrections asked for after this fetch
                await self.watermark.fresh(msg.partition, since)
            await self._live(route, decoded, plan_key(decoded.payload.plan_id), event, since)
        if route.source == "deltas":
            await self.settle(msg.partition, source)

    async def _live(
        self, route: Route, decoded: Any, key: str, event: EventT[bytes], since: datetime
    ) -> None:
        msg = event.message
        state = self.rt.plan_state(key)
        settled = not route.settles or self.watermark.settled(msg.partition, since)
        outcome = route.decide(decoded, state, now(), None, settled)
        ready = self.rt.prepare(outcome.samples)  # a failure here leaves the tables untouched
        # Nothing is awaited before the tables are written: another agent may read the plan.
        if outcome.new_state is not None:
            self.rt.store_plan(key, outcome.new_state)
        if outcome.park:
            self._park(key, event, route.source, decoded.timestamp, since, state is not None)
        await self.rt.send(ready, (msg.topic, msg.partition))

    def _park(
        self,
        key: str,
        event: EventT[bytes],
        source: Source,
        at: datetime,
        since: datetime,
        plan_known: bool,
    ) -> None:
        msg = event.message
        entry = ParkedEvent(
            source=source,
            topic=msg.topic,
            partition=msg.partition,
            offset=msg.offset,
            key=msg.key.decode("utf-8", "replace") if msg.key else None,
            raw=(msg.value or b"").decode("utf-8"),
            event_time=at,
            parked_at=since,  # fetched: ends asked for after it count (agents/watermark.py)
            plan_known=plan_known,
        )
        self.pending[key] = park(self.pending.get(key), entry)
        if plan_known:
            self.watermark.wait(msg.partition, key, since)

    async def on_plan(
        self, key: str, snapshot: PlanSnapshot, at: datetime, source: tuple[str, int]
    ) -> None:
        """Merge a plan snapshot (last writer wins), store it, complete what waited for it."""
        await self.complete(key, source, snapshot=(snapshot, at))

    async def settle(self, partition: int, source: tuple[str, int]) -> None:
        """Complete the entries of ``partition`` the corrections input has now been read past."""
        for key in self.watermark.due(partition):
            await self.complete(key, source)

    async def sweep(self, partition: int, source: tuple[str, int]) -> None:
        """Complete or dead-letter the entries of ``partition`` that waited ``join.grace``."""
        for key, entries in list(self.pending.items()):
            if entries and _changelog_partition(entries) == partition:
                await self.complete(key, source)
        self.rt.metrics.pending.set(sum(len(v or ()) for v in self.pending.values()))

    async def complete(
        self,
        key: str,
        source: tuple[str, int],
        *,
        snapshot: tuple[PlanSnapshot, datetime] | None = None,
    ) -> None:
        """Complete the parked entries of ``key`` that can be, in event order; keep the rest.

        ``snapshot`` (and its record's time) is merged into the plan's state first. Samples
        are on the broker before the entries are forgotten. One completion of a plan at a
        time, reading the state under the lock: the plans, deltas and sweeper agents may
        reach the same plan together.
        """
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                state, store = self.rt.plan_state(key), snapshot is not None
                if snapshot is not None:
                    state = merge_snapshot(state, *snapshot)
                    if state is None:
                        return  # an older snapshot than the one we hold
                await self._complete(key, state, source, store)
        finally:
            lock, users = self._locks[key]
            if users > 1:
                self._locks[key] = (lock, users - 1)
            else:
                del self._locks[key]

    async def _complete(
        self, key: str, state: PlanState | None, source: tuple[str, int], store: bool
    ) -> None:
        done = self.replay.run(state, in_event_order(self.pending.get(key) or []), now())
        ready = self.rt.prepare(done.samples)
        if done.state is not None and (store or done.state is not state):
            self.rt.store_plan(key, done.state)
        await self.rt.send(ready, source, wait=True)
        for entry, reason, error in done.failed:
            await self.rt.dead_letters.parked(entry, reason, error)
            if reason == MISSING:
                self.rt.metrics.join_misses.inc()
        if done.changed:
            self._forget(key, done.keep, done.handled)
        self.watermark.done(source[1], key)  # co-partitioned: the entries' partition too
        if done.state is not None and done.keep:  # they wait for the corrections (or grace)
            self.watermark.wait(source[1], key, min(e.parked_at for e in done.keep))

    def _forget(self, key: str, keep: list[ParkedEvent], handled: set[Place]) -> None:
        """Drop the handled entries from what ``pending`` holds *now*: a record parked
        while the samples were sent must stay."""
        held = self.pending.get(key) or []
        left = [raw for raw in held if _place(raw) not in handled]
        if len(left) == len(held):
            return
        if left:
            self.pending[key] = left
        else:
            del self.pending[key]


Place = tuple[str, int, int]


def _place(raw: dict[str, Any]) -> Place:
    return raw["topic"], raw["partition"], raw["offset"]


def _changelog_partition(entries: list[dict[str, Any]]) -> int:
    """Return the partition the pending entry's changelog records went to.

    Faust writes a table change to the partition of the record being processed: the
    last parked record's. Hashing the table key would not do: it may be a stand-in for
    the runtime's id (``plan_key``), and a sweep on the wrong partition would never
    come, or would write its tombstone where recovery does not look.
    """
    return int(entries[-1]["partition"])


def fetched_at(event: EventT[bytes]) -> datetime:
    """Return when ``event``'s record was fetched (``time_in``, stamped by faust_compat),
    on the wall clock; now when it was not stamped."""
    time_in = event.message.time_in
    moment = now()
    return moment if time_in is None else moment - timedelta(seconds=time.monotonic() - time_in)


def attach(runtime: Runtime, routes: dict[str, Route]) -> Join:
    """Build the join over ``routes`` (input topic -> Route) and give it to ``runtime``."""
    topic = runtime.settings.topics.name("delta_intents")
    lateness = runtime.settings.join.corrections_lateness
    watermark = Watermark(
        topic, runtime.progress, lateness=lateness
    )  # asker: agents/consent_reader.py
    runtime.join = Join(runtime, routes, watermark)

    def on_revoked(*args: Any, **_kwargs: Any) -> None:
        watermark.forget({tp.partition for tp in args[1]})  # (app, revoked partitions)

    runtime.app.on_partitions_revoked.connect(on_revoked)
    return runtime.join
