"""The join's Kafka side: records and tables in, :class:`streams.join.unit.KeyJoin` decides.

Every path of the join comes here: a live record (decisions, deltas, outcomes agents), the
plan that completes parked records (plans agent), a correction that settles records waiting
for the corrections input (deltas agent, agents/watermark.py) and the grace sweep (sweeper).
Each builds the key's unit from what the tables hold, calls it, and applies the step it
returns. What the join decides lives in streams/join/unit.py and streams/join/rules.py.

Applying a step keeps one order, so a kill -9 anywhere loses nothing: the state and new
parked entries are written before anything is awaited (another agent may read the key), the
samples (with what the emitter's hooks sent for them: the pairs miner's re-keyed plans and
pairs) and the dead letters are on the broker before the entries they complete are deleted (a
crash between the two completes them again: the same sample ids), and the index forgets those
entries at once so a concurrent completion of the same key does not replay them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from faust.types import EventT, TableT

from agents.clock import Clock
from agents.deadletters import DeadLetters
from agents.emitter import Emitter, await_acks
from agents.planstore import PlanStore
from agents.watermark import Watermark
from streams.config.settings import Settings
from streams.join.parked import ParkedEvent, ParkedIndex, Place, entry_key, parse_entries
from streams.join.plan_state import PlanState, merge_snapshot
from streams.join.rules import plan_key
from streams.join.unit import MISSING, KeyJoin, Route, Step, waiting_since
from streams.mplp.decode import RecordOrigin
from streams.mplp.fields import InputNotes
from streams.mplp.models import PlanSnapshot
from streams.observe.metrics import Metrics

__all__ = ["Join", "fetched_at"]

log = logging.getLogger("learnstream")


@dataclass
class Join:
    """Apply the join unit's steps to the tables and topics; the only writer of ``pending``."""

    settings: Settings
    routes: dict[str, Route]
    #: The ``pending`` table: one parked event per key.
    table: TableT[str, Any]
    plans: PlanStore
    watermark: Watermark
    emitter: Emitter
    dead_letters: DeadLetters
    metrics: Metrics
    clock: Clock
    #: Parked entries by key and grace deadline: built from ``pending`` once, then kept.
    index: ParkedIndex = field(default_factory=ParkedIndex)

    @property
    def grace(self) -> timedelta:
        """Return how long an event waits for its plan (``join.grace``)."""
        return self.settings.join.grace

    def on_revoked(self, partitions: set[int]) -> None:
        """Forget what is known of revoked partitions: another worker may change them."""
        self.watermark.forget(partitions)
        self.index.invalidate()

    def parked(self, key: str) -> list[ParkedEvent]:
        """Return the entries parked under ``key``, in the order they complete in."""
        return self.unit(key).parked

    def unit(self, key: str) -> KeyJoin[PlanState]:
        """Return ``key``'s join as the tables hold it."""
        self._build_index()
        return KeyJoin(
            self.plans.get(key),
            self.index.of(key),
            self.routes,
            self.grace,
            prepare=self.emitter.prepare,
        )

    def _build_index(self) -> None:
        """Index ``pending`` (first record, or after a rebalance: one scan of the table), and
        tell the watermark whom to wake: what it knew of the partitions went with them, and
        an entry waiting for the corrections input would otherwise wait out the whole grace."""
        if self.index.built:
            return
        unreadable = self.index.rebuild(self.table.items(), self.grace)
        if unreadable:
            log.error("join: %d parked records of the pending table cannot be read", unreadable)
        for key in self.index:
            entries = self.index.of(key)
            since = waiting_since(key in self.plans, entries)
            if since is not None:  # else they wait for the plan, which completes them
                self.watermark.wait(entries[0].partition, key, since)

    async def process(self, event: EventT[bytes]) -> None:
        """Join one live record of an input topic with its plan's state."""
        msg, notes = event.message, InputNotes()
        route = self.routes[msg.topic]
        decoded = route.decode(msg.value, RecordOrigin.of(msg), notes)
        self.metrics.note_input(notes)
        source, since = (msg.topic, msg.partition), fetched_at(event, self.clock())
        if route.source == "deltas":
            self.watermark.advance(msg.partition, msg.offset)
        if decoded.payload.plan_id is not None:  # a stage that is no outcome may name none
            if route.settles:  # an end of the corrections asked for after this fetch
                await self.watermark.fresh(msg.partition, since)
            key = plan_key(decoded.payload.plan_id)
            unit = self.unit(key)
            entry = _entry(event, route, decoded.timestamp, since, unit.state is not None)
            settled = not route.settles or self.watermark.settled(msg.partition, since)
            await self._apply(
                key, unit.on_event(decoded, entry, self.clock(), settled=settled), source
            )
        if route.source == "deltas":
            await self.settle(msg.partition, source)

    async def on_plan(
        self, key: str, snapshot: PlanSnapshot, at: datetime, source: tuple[str, int]
    ) -> None:
        """Merge a plan snapshot (last writer wins), store it, complete what waited for it."""
        step = self.unit(key).on_state(
            lambda state: merge_snapshot(state, snapshot, at), self.clock(), self._settled
        )
        await self._apply(key, step, source, completing=True)

    async def settle(self, partition: int, source: tuple[str, int]) -> None:
        """Complete the entries of ``partition`` the corrections input has now been read past."""
        for key in self.watermark.due(partition):
            await self.complete(key, source)

    async def sweep(self, partition: int, source: tuple[str, int]) -> None:
        """Complete what waited ``join.grace`` on ``partition``, or is settled by now."""
        self._build_index()
        moment = self.clock()
        due = [*self.index.due(partition, moment), *self.watermark.due(partition)]
        keys = list(dict.fromkeys(due))
        for done, key in enumerate(keys):
            if key not in self.index:
                self.watermark.done(partition, key)  # completed meanwhile
                continue
            try:
                await self.complete(key, source)
            except BaseException:
                for left in keys[done:]:  # their deadlines were popped: due again next tick
                    self.index.retry(partition, left, moment)
                raise
        self.metrics.pending.set(len(self.index))

    async def complete(self, key: str, source: tuple[str, int]) -> None:
        """Complete the parked entries of ``key`` that can be, in event order; keep the rest."""
        await self._apply(
            key, self.unit(key).on_tick(self.clock(), self._settled), source, completing=True
        )

    def _settled(self, entry: ParkedEvent) -> bool:
        return self.watermark.settled(entry.partition, entry.parked_at)

    async def _apply(
        self, key: str, step: Step[PlanState], source: tuple[str, int], *, completing: bool = False
    ) -> None:
        # A failure here leaves the tables untouched (a completion's entries were prepared
        # one by one by the unit: one that cannot be sent is dead-lettered alone).
        ready = self.emitter.prepare(step.samples) if step.ready is None else step.ready
        # Nothing is awaited before the tables are written: another agent may read the key.
        if step.state is not None:
            self.plans.store(key, step.state)
        elif step.close:
            self.plans.forget(key)
        for entry in step.parked:
            if self.index.add(key, entry, self.grace):
                self.table[entry_key(key, entry.place)] = entry.to_table()
        stored = {e.place: self.index.stored_under(key, e.place) for e in step.released}
        self.index.remove(key, stored)  # claimed: a concurrent completion must not replay them
        try:
            await self.emitter.send(ready, source, wait=bool(step.released))
            acks: list[Awaitable[Any] | None] = []
            for entry, reason, error in step.failed:
                acks.append(await self.dead_letters.parked(entry, reason, error))
                if reason == MISSING:
                    self.metrics.join_misses.inc()
            await await_acks(acks)  # on the broker before the entries they stand for go
        except BaseException:
            for entry in step.released:  # not done: the next tick tries them again
                self.index.add(key, entry, self.grace, stored[entry.place])
            raise
        self._delete(key, stored)
        self._wake(key, source[1], completing or bool(step.parked))
        if step.parked or step.released:
            self.metrics.pending.set(len(self.index))

    def _wake(self, key: str, partition: int, changed: bool) -> None:
        """Tell the watermark whether ``key`` waits for the corrections input, from what the
        index holds now (no await since): a completion that took long must not erase the
        wait of an entry parked meanwhile."""
        if not changed:
            return
        self.watermark.done(partition, key)  # co-partitioned: the entries' partition too
        since = waiting_since(key in self.plans, self.index.of(key))
        if since is not None:
            self.watermark.wait(partition, key, since)

    def _delete(self, key: str, stored: dict[Place, str]) -> None:
        """Delete the released entries' table records (a tombstone each).

        An entry read from a list of entries under the bare key (the list layout, still
        read) takes the list with it: the rest of the list is first stored again entry by
        entry, so nothing still parked is lost, whichever completion holds it.
        """
        for place, table_key in stored.items():
            own = entry_key(key, place)
            if table_key != own:
                self._split_list(key, table_key, set(stored))
            self.table.pop(own, None)  # also where a split of the list put it

    def _split_list(self, key: str, table_key: str, released: set[Place]) -> None:
        """Store the entries of the list at ``table_key`` one by one, but ``released``; drop it."""
        raw = self.table.get(table_key)
        if raw is None:  # split already
            return
        for entry in parse_entries(table_key, raw)[1]:
            if entry.place not in released:
                self.table[entry_key(key, entry.place)] = entry.to_table()
                self.index.moved(key, entry.place, entry_key(key, entry.place))
        self.table.pop(table_key, None)


def _entry(
    event: EventT[bytes], route: Route, at: datetime, since: datetime, plan_known: bool
) -> ParkedEvent:
    """Return the live record as the entry it becomes if it must wait."""
    msg = event.message
    return ParkedEvent(
        source=route.source,
        topic=msg.topic,
        partition=msg.partition,
        offset=msg.offset,
        key=msg.key.decode("utf-8", "replace") if msg.key else None,
        raw=(msg.value or b"").decode("utf-8"),
        event_time=at,
        parked_at=since,  # fetched: ends asked for after it count (agents/watermark.py)
        plan_known=plan_known,
    )


def fetched_at(event: EventT[bytes], moment: datetime) -> datetime:
    """Return when ``event``'s record was fetched (``time_in``, stamped by faust_compat),
    on the clock that says ``moment`` now; ``moment`` when it was not stamped."""
    time_in = event.message.time_in
    return moment if time_in is None else moment - timedelta(seconds=time.monotonic() - time_in)
