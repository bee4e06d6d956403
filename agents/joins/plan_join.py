"""The join's Kafka side: records and tables in, :class:`learnstream.streams.join.unit.KeyJoin`
decides.

Every path of the join comes here: a live record (decisions, deltas, outcomes, MAP sessions,
runs agents), the plan that completes parked records (plans agent), a correction that settles
records waiting for the corrections input (deltas agent, streams/join/watermark.py) and the grace
sweep (sweeper). Keys are plans', or those of another key space (``session:<id>``,
``run:...``: a key space with its own state store and end, streams/join/spaces.py, sessions.py
and runs.py).
Each builds the key's unit from what the tables hold, calls it, and applies the step it
returns. What the join decides lives in streams/join/unit.py and streams/join/rules.py.

Under at_least_once a parked entry is first held in memory only: the join *pins* its record's
offset (streams/offsets/progress.py), so no commit passes it and a crash reads it again. Most
waits end within a second (a decision waiting for the corrections input to be read past it,
a record read before its plan), and then the entry never costs a changelog record and its
tombstone. One still waiting after ``join.hold_in_memory`` is written to ``pending`` on the
next sweep of its partition and unpinned, so a crash re-reads at most that much. Exactly-once
writes every entry: its transactions must carry the state of what they commit.

Applying a step keeps one order, so a kill -9 anywhere loses nothing: a plan's state and new
parked entries are written before anything is awaited (another agent may read the key; a key
space's state is written once its samples are acknowledged, under the key's lock), the
samples (with what the emitter's hooks sent for them: the pairs miner's re-keyed plans and
pairs) and the dead letters are on the broker before the entries they complete are deleted (a
crash between the two completes them again: the same sample ids), and the index forgets those
entries at once so a concurrent completion of the same key does not replay them.

An entry held in memory has no table record to delete: completing it unpins its record's
offset, and the commit that may then pass that offset flushes the producer first
(``faust_compat.guard_commits``), as for a record whose samples go out at once. So its
completion does not wait for the acks. Waiting held the corrections' lane while a settle's
acks came back (9-19 ms by the median at half of one worker's capacity, 69 ms in a congested
round), and the decisions read meanwhile waited for that lane (benchmarks/RESULTS.md, 2 Dec).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from faust.types import TP, EventT, TableT

from learnstream.agents.clock import Clock
from learnstream.agents.deadletters import DeadLetters
from learnstream.agents.emitter import Emitter, await_acks
from learnstream.agents.joins.held import Pins
from learnstream.agents.joins.planstore import PlanStore
from learnstream.agents.seams.faust_compat import current_record, partitioned_items, writing_to
from learnstream.streams.config.settings import Settings
from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.dlq.errors import describe_failure as describe
from learnstream.streams.join.parked import (
    IN_MEMORY,
    SCAN_SLICE,
    ParkedEvent,
    ParkedIndex,
    Place,
    entry_key,
    parse_entries,
)
from learnstream.streams.join.spaces import (
    UNKNOWN_PROJECT,
    KeySpace,
    States,
    fan_out,
    may_end_quiet,
    plan_projects,
    space_of,
    with_plan_project,
)
from learnstream.streams.join.unit import MISSING, KeyJoin, Route, Step, waiting_since
from learnstream.streams.join.watermark import Watermark
from learnstream.streams.mplp.decode import RecordOrigin
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.mplp.models import PlanSnapshot
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.state.plan import merge_snapshot

__all__ = ["Join", "Pins", "fetched_at"]

log = logging.getLogger("learnstream")

#: Keys a settle or a sweep completes side by side (``Join._complete_all``).
COMPLETING = 128


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
    #: Key spaces beside the plans' (a MAP session's keys: streams/join/sessions.py).
    spaces: Mapping[str, KeySpace] = field(default_factory=dict)
    #: Parked entries by key and grace deadline: built from ``pending`` once, then kept.
    index: ParkedIndex = field(default_factory=ParkedIndex)
    #: Tell whether a (topic, partition) has records this worker has not processed yet.
    unread: Callable[[str, int], bool] = lambda _topic, _partition: False
    #: Where entries held in memory pin their records' offsets (None: every parked entry is
    #: written to ``pending`` at once, as exactly_once needs).
    pins: Pins | None = None
    #: Per partition, the entries held in memory, oldest first: (when, key, place).
    _memory: dict[int, deque[tuple[datetime, str, Place]]] = field(default_factory=dict)
    #: Held by a step of a key-space key from reading its state to writing it: that state
    #: is written after the step's samples are acknowledged (``_apply``), and the key's
    #: agent and the sweeper must not both build on what the table held before.
    _locks: dict[str, tuple[asyncio.Lock, list[int]]] = field(default_factory=dict)

    @property
    def grace(self) -> timedelta:
        """Return how long an event waits for its plan (``join.grace``)."""
        return self.settings.join.grace

    def write_held(self) -> None:
        """Write everything held in memory, parked entries to ``pending`` and plan states to
        ``plan_state``, and unpin their records (the last commit before the partitions go, a
        rebalance's or a stop's: the next owner reads the tables instead of those records again)."""
        hold, plans = self.settings.join.hold_in_memory, self.settings.topics.name("plans")
        for partition, queue in list(self._memory.items()):
            if queue:  # the inputs and the join's tables are co-partitioned with the plans
                with writing_to(plans, partition):
                    self._spill(partition, max(since for since, _, _ in queue) + hold)
        self.plans.write_all()

    def on_revoked(self, partitions: set[int]) -> None:
        """Forget what is known of revoked partitions: another worker may change them."""
        self.watermark.forget(partitions)
        self.index.invalidate()  # entries held in memory go too: their records come again
        self._memory.clear()
        self.plans.on_revoked(partitions)
        for space in self.spaces.values():
            space.states.invalidate()

    def parked(self, key: str) -> list[ParkedEvent]:
        """Return the entries parked under ``key``, in the order they complete in."""
        return self.unit(key).parked

    def unit(self, key: str) -> KeyJoin[Any]:
        """Return ``key``'s join as the tables hold it."""
        self._build_index()
        space = self._space(key)
        return KeyJoin(
            self._states(key).get(key),
            self.index.of(key),
            {**self.routes, **space.routes} if space is not None and space.routes else self.routes,
            self.grace,
            expire=None if space is None else space.expire,
            prepare=lambda samples: self.emitter.prepare(self._with_plan_projects(key, samples)),
            missing="no plan state arrived within LEARNSTREAM_JOIN__GRACE",
        )

    def _space(self, key: str) -> KeySpace | None:
        name = space_of(key)
        if name is None:
            return None
        space = self.spaces.get(name)
        if space is None:  # a key only a route of this worker could have made
            raise InvalidEvent("wrong_topic", f"no key space {name!r} on this worker")
        return space

    def _states(self, key: str) -> States | PlanStore:
        space = self._space(key)
        return self.plans if space is None else space.states

    async def _index_ready(self) -> None:
        """Index ``pending`` if a start or a rebalance dropped the index: a scan of the table,
        ``SCAN_SLICE`` values at a time, handing the event loop back between slices (the
        records wait for it; heartbeats, the web server and other agents' sends go on)."""
        while not self.index.built:
            if not self.index.scanning:
                self.index.start(partitioned_items(self.table))  # a copy or a snapshot
            if self.index.step(SCAN_SLICE, self.grace):
                self._indexed()
                return
            await asyncio.sleep(0)

    def _build_index(self) -> None:
        """Finish indexing ``pending`` at once (a caller that cannot wait: ``parked``)."""
        if self.index.built:
            return
        if not self.index.scanning:
            self.index.start(partitioned_items(self.table))
        while not self.index.step(SCAN_SLICE, self.grace):
            pass
        self._indexed()

    def _indexed(self) -> None:
        """Tell the watermark whom to wake once the index is built: what it knew of the
        partitions went with them, and an entry waiting for the corrections input would
        otherwise wait out the whole grace."""
        if self.index.unreadable:
            count = self.index.unreadable
            log.error("join: %d parked records of the pending table cannot be read", count)
        for key in self.index:
            entries = self.index.of(key)
            since = waiting_since(key in self._states(key), entries)
            if since is not None:  # else they wait for the plan, which completes them
                self.watermark.wait(entries[0].partition, key, since)

    async def process(self, event: EventT[bytes]) -> None:
        """Join one live record of an input topic with its plan's state."""
        if not self.index.built:  # a coroutine per record is not free
            await self._index_ready()
        msg, notes = event.message, InputNotes()
        route = self.routes[msg.topic]
        decoded = route.decode(msg.value, RecordOrigin.of(msg), notes)
        self.metrics.note_input(notes)
        source, since = (msg.topic, msg.partition), fetched_at(event, self.clock())
        if route.source == "deltas":
            self.watermark.advance(msg.partition, msg.offset)
        key = route.key(decoded)
        if key is None:  # joins nothing (a stage that is no outcome, a decision on a trace)
            entry = _entry(event, route, decoded.timestamp, since, plan_known=False)
            await self._alone(decoded, entry, source)
        else:
            if route.settles:  # an end of the corrections asked for after this fetch
                await self.watermark.fresh(msg.partition, since)
            async with self._held(key):
                unit = self.unit(key)
                entry = _entry(event, route, decoded.timestamp, since, unit.state is not None)
                settled = not route.settles or self.watermark.settled(msg.partition, since)
                step = unit.on_event(decoded, entry, self.clock(), settled=settled)
                await self._apply(key, step, source)
        if route.source == "deltas":
            await self.settle(msg.partition, source)
        if any(space.routes for space in self.spaces.values()):
            entry = _entry(event, route, decoded.timestamp, since, plan_known=False)
            waits = key is None or space_of(key) is not None or key not in self.plans
            await self._also(entry, source, None if waits else key)

    async def _also(self, entry: ParkedEvent, source: tuple[str, int], plan: str | None) -> None:
        """Hand a record the join has decided to the key spaces that also read its topic.

        A plan-partitioned space gets it only once its plan (key ``plan``) is known: a record
        that waits for its plan is handed on when the plan completes it (``_apply``), with the
        plan's project if it names none, so consent is decided for the plan's project."""
        origin = RecordOrigin(entry.topic, entry.partition, entry.offset, entry.event_time)
        own = self.routes.get(entry.topic)
        for space, route in fan_out(self.spaces, entry.topic, own, plan is not None):
            decoded = route.decode(entry.raw.encode(), origin, None)
            if space.plan_partitioned and plan is not None:
                project = self._stored_project(plan)
                decoded = with_plan_project(decoded, project if isinstance(project, str) else None)
            key = route.key(decoded)
            if key is None:
                continue
            async with self._held(key):
                unit = self.unit(key)
                step = unit.on_event(decoded, entry, self.clock())
                await self._apply(key, step, source)

    def _stored_project(self, plan: str) -> str | None | object:
        """Return the project of the stored plan ``plan`` (None: it names none;
        ``UNKNOWN_PROJECT``: no plan stored here)."""
        state = self.plans.get(plan)
        return UNKNOWN_PROJECT if state is None else state.snapshot.project_id

    async def _alone(self, decoded: Any, entry: ParkedEvent, source: tuple[str, int]) -> None:
        """Decide an event that joins no key: its samples go out, nothing is stored."""
        alone: KeyJoin[Any] = KeyJoin(None, (), self.routes, self.grace)
        step = alone.on_event(decoded, entry, self.clock())
        if step.parked or step.state is not None:
            raise InvalidEvent("schema_violation", "the event names nothing to join it with")
        ready = self.emitter.prepare(step.samples)
        await self.emitter.send(ready, source)

    async def on_plan(
        self, key: str, snapshot: PlanSnapshot, at: datetime, source: tuple[str, int]
    ) -> None:
        """Merge a plan snapshot (last writer wins), store it, complete what waited for it."""
        if not self.index.built:  # a coroutine per record is not free
            await self._index_ready()
        step = self.unit(key).on_state(
            lambda state: merge_snapshot(state, snapshot, at), self.clock(), self._settled
        )
        await self._apply(key, step, source, completing=True)

    async def settle(self, partition: int, source: tuple[str, int]) -> None:
        """Complete the entries of ``partition`` the corrections input has now been read past."""
        # A key not completed stays waiting: the next correction or sweep settles it.
        await self._complete_all(self.watermark.due(partition), source)

    async def sweep(self, partition: int, source: tuple[str, int]) -> None:
        """Complete what waited ``join.grace`` on ``partition``, or is settled by now; then
        end the states of other key spaces whose time is up (a quiet MAP session)."""
        if not self.index.built:  # a coroutine per record is not free
            await self._index_ready()
        moment = self.clock()
        self._spill(partition, moment)
        self.plans.flush(partition, moment)
        due = [*self.index.due(partition, moment), *self.watermark.due(partition)]
        keys = []
        for key in dict.fromkeys(due):
            if key in self.index:
                keys.append(key)
            else:
                self.watermark.done(partition, key)  # completed meanwhile
        # Their deadlines were popped: one not completed is due again on the next tick.
        await self._complete_all(keys, source, lambda key: self.index.retry(partition, key, moment))
        for name, space in self.spaces.items():
            await self._end_quiet(name, space, partition, moment, source)
        self.metrics.pending.set(len(self.index))
        self.metrics.waiting_corrections.set(self.watermark.waiting_count())

    async def _end_quiet(
        self, name: str, space: KeySpace, partition: int, moment: datetime, source: tuple[str, int]
    ) -> None:
        """Let the keys of ``space`` on ``partition`` that went quiet end (their ``expire``).

        Not while the space's inputs have records of the partition unread: a worker catching
        up (after a restart, or behind) would end sessions whose next events wait for it. A
        key that fails is logged and tried again on the next tick; the others go on.
        """
        if not may_end_quiet(space.topics, partition, self.unread):
            return
        try:
            ending = list(space.states.due(partition, moment))
        except Exception as exc:  # noqa: BLE001  (a state it cannot read: the next tick)
            log.error("join: %s states of partition %d: %s", name, partition, describe(exc))
            return
        for key in ending:
            try:
                await self.complete(key, source)
            except asyncio.CancelledError:
                space.states.retry(partition, ending[ending.index(key) :])
                raise
            except Exception as exc:  # noqa: BLE001  (one key must not stop the others)
                space.states.retry(partition, [key])
                log.error(
                    "join: %s key %s of partition %d: %s", name, key, partition, describe(exc)
                )

    async def delete(self, key: str, source: tuple[str, int]) -> None:
        """End ``key`` because its state is deleted (a plan's tombstone, its TTL run out):
        what waits under it completes or is dead-lettered now (``KeyJoin.on_delete``), so no
        parked entry and no wait for the corrections input outlives it."""
        if not self.index.built:  # a coroutine per record is not free
            await self._index_ready()
        async with self._held(key):
            step = self.unit(key).on_delete(self.clock())
            await self._apply(key, step, source, completing=True)

    async def complete(self, key: str, source: tuple[str, int]) -> None:
        """Complete the parked entries of ``key`` that can be, in event order; keep the rest."""
        if not self.index.built:  # a coroutine per record is not free
            await self._index_ready()
        async with self._held(key):
            step = self.unit(key).on_tick(self.clock(), self._settled)
            await self._apply(key, step, source, completing=True)

    async def _complete_all(
        self,
        keys: list[str],
        source: tuple[str, int],
        retry: Callable[[str], None] = lambda _key: None,
    ) -> None:
        """Complete ``keys`` (distinct), ``COMPLETING`` side by side; ``retry`` each key not
        completed, then raise the first failure. A cancellation stops at once: every key not
        done is retried.

        One after another, each key waited for its own samples' acks: a correction that
        settled 1,500 waiting plans held its partition's lane for 13 s, and the records
        behind it waited (benchmarks/RESULTS.md, findings behind the design). Side by side,
        a wave's samples share produce requests and their acks come back together. Keys are
        independent, and each key's steps stay in order: ``complete`` runs once per key, and
        a key space's key holds its lock."""
        first: BaseException | None = None
        for start in range(0, len(keys), COMPLETING):
            wave = keys[start : start + COMPLETING]
            tasks = [asyncio.ensure_future(self.complete(key, source)) for key in wave]
            try:
                await asyncio.wait(tasks)
            except BaseException:  # cancelled: what is not done is tried again
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                for key, task in zip(wave, tasks, strict=True):
                    if task.cancelled() or task.exception() is not None:
                        retry(key)
                for key in keys[start + COMPLETING :]:
                    retry(key)
                raise
            for key, task in zip(wave, tasks, strict=True):
                failure = task.exception()  # a wave waited for is done, none cancelled
                if failure is not None:
                    retry(key)
                    first = first or failure
        if first is not None:
            raise first

    @contextlib.asynccontextmanager
    async def _held(self, key: str) -> AsyncIterator[None]:
        """Hold ``key`` if it is a key space's (a plan's key needs no lock: its state is
        written before anything is awaited); the lock goes once nobody waits for it."""
        if space_of(key) is None:
            yield
            return
        lock, users = self._locks.setdefault(key, (asyncio.Lock(), [0]))
        users[0] += 1  # counted, not lock.locked(): a woken waiter has not taken it yet
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[key]

    def _settled(self, entry: ParkedEvent) -> bool:
        return self.watermark.settled(entry.partition, entry.parked_at)

    async def _apply(
        self, key: str, step: Step[Any], source: tuple[str, int], *, completing: bool = False
    ) -> None:
        # A failure here leaves the tables untouched (a completion's entries were prepared
        # one by one by the unit: one that cannot be sent is dead-lettered alone).
        ready = (
            self.emitter.prepare(self._with_plan_projects(key, step.samples))
            if step.ready is None
            else step.ready  # the unit's prepare applied the rule
        )
        # Nothing is awaited before the tables are written: another agent may read the key.
        # But a key space's state says which samples went out (a session closed, counted
        # events), and its samples come from no record a crash would replay: it is written
        # once they are on the broker, so a kill -9 between the two re-emits them instead
        # of losing them. (A plan's state only merges snapshots and corrections: replayed
        # records emit their samples again whatever it holds.)
        states, after = self._states(key), self._space(key) is not None and bool(step.samples)
        stored = {e.place: self.index.stored_under(key, e.place) for e in step.released}
        if not after:
            self._store(states, key, step, stored)
        for entry in step.parked:
            self._park(key, entry)
        self.index.remove(key, stored)  # claimed: a concurrent completion must not replay them
        # Acks first where a table record goes once they are in: a completed entry stored in
        # ``pending`` (its tombstone) or a key space's state. Held in memory, the commit
        # waits for them (the module's docstring).
        acked = after or any(where != IN_MEMORY for where in stored.values())
        try:
            await self.emitter.send(ready, source, wait=acked)
            acks: list[Awaitable[Any] | None] = []
            for entry, reason, error in step.failed:
                acks.append(await self.dead_letters.parked(entry, reason, error))
                if reason == MISSING:
                    self.metrics.join_misses.inc()
            if acked:
                await await_acks(acks)  # on the broker before the entries they stand for go
        except BaseException:
            for entry in step.released:  # not done: the next tick tries them again
                self.index.add(key, entry, self.grace, stored[entry.place])
            raise
        if after:
            self._store(states, key, step, stored)
        self._delete(key, stored, step.released)
        self._wake(key, source[1], completing or bool(step.parked))
        if step.parked or step.released:
            self.metrics.pending.set(len(self.index))
        if self._space(key) is None and step.released and key in self.plans:
            failed = {entry.place for entry, _, _ in step.failed}
            for entry in step.released:  # completed by their plan: the other spaces' turn
                if entry.place not in failed:
                    await self._also(entry, source, key)

    def _with_plan_projects(self, key: str, samples: list[LearningSample]) -> list[LearningSample]:
        """Give a plan-partitioned space's samples the project of the plan they name
        (streams/join/spaces.py ``plan_projects``); those whose plan is not stored here are
        not sent, counted in ``learnstream_opted_out_total{reason="project_unknown"}``."""
        space = self._space(key)
        if space is None or not space.plan_partitioned:
            return samples
        kept, unknown = plan_projects(samples, self._stored_project)
        if unknown:
            self.metrics.child(self.metrics.opted_out, "project_unknown").inc(unknown)
        return kept

    def _store(
        self, states: States | PlanStore, key: str, step: Step[Any], stored: dict[Place, str]
    ) -> None:
        if step.state is None:
            if step.close:
                states.forget(key)
        elif states is self.plans:
            self.plans.store(key, step.state, self._carried(step, stored), self.clock())
        else:
            states.store(key, step.state)

    def _carried(self, step: Step[Any], stored: dict[Place, str]) -> list[tuple[TP, int]]:
        """Return the records whose effect a plan's new state carries, to pin while it is
        held in memory (agents/joins/planstore.py); none when it must be written now.

        That is the record under way, if it is an input's (not a sweep tick), and the
        entries the step completes. A completed entry stored in ``pending`` forbids holding:
        its tombstone must not reach the broker before the state does."""
        if not self.plans.holds or any(where != IN_MEMORY for where in stored.values()):
            return []
        records = [(TP(e.topic, e.partition), e.offset) for e in step.released]
        current = current_record()
        if current is not None and current[0].topic in self._inputs:
            records.append(current)
        return records

    @functools.cached_property
    def _inputs(self) -> frozenset[str]:
        """The topics whose records the join reads (a tick's topic is not among them)."""
        return frozenset({*self.routes, self.settings.topics.name("plans")})

    def _wake(self, key: str, partition: int, changed: bool) -> None:
        """Tell the watermark whether ``key`` waits for the corrections input, from what the
        index holds now (no await since): a completion that took long must not erase the
        wait of an entry parked meanwhile."""
        if not changed:
            return
        self.watermark.done(partition, key)  # co-partitioned: the entries' partition too
        since = waiting_since(key in self._states(key), self.index.of(key))
        if since is not None:
            self.watermark.wait(partition, key, since)

    def _park(self, key: str, entry: ParkedEvent) -> None:
        """Index ``entry`` under ``key``: held in memory with its offset pinned, or written
        to ``pending`` (exactly_once, or holding switched off). A record parked already
        (read again) changes nothing."""
        if self.pins is None or not self.settings.join.hold_in_memory:
            if self.index.add(key, entry, self.grace):
                self.table[entry_key(key, entry.place)] = entry.to_table()
            return
        if self.index.add(key, entry, self.grace, IN_MEMORY):
            self.pins.pin(TP(entry.topic, entry.partition), entry.offset)
            queue = self._memory.setdefault(entry.partition, deque())
            queue.append((self.clock(), key, entry.place))

    def _spill(self, partition: int, moment: datetime) -> None:
        """Write the entries of ``partition`` held in memory for ``join.hold_in_memory`` to
        ``pending`` and unpin them (on a tick of that partition: the table's changelog
        partition is the tick's)."""
        queue, hold = self._memory.get(partition), self.settings.join.hold_in_memory
        while queue and moment - queue[0][0] >= hold:
            _, key, place = queue.popleft()
            held = self.index.held(key, place)
            if held is None or held[1] != IN_MEMORY:  # done with meanwhile
                continue
            own = entry_key(key, place)
            self.table[own] = held[0].to_table()
            self.index.moved(key, place, own)
            self._unpin(held[0])

    def _unpin(self, entry: ParkedEvent) -> None:
        if self.pins is not None:
            self.pins.unpin(TP(entry.topic, entry.partition), entry.offset)

    def _delete(self, key: str, stored: dict[Place, str], released: list[ParkedEvent]) -> None:
        """Delete the released entries' table records (a tombstone each).

        An entry read from a list of entries under the bare key (the list layout, still
        read) takes the list with it: the rest of the list is first stored again entry by
        entry, so nothing still parked is lost, whichever completion holds it.
        """
        entries = {entry.place: entry for entry in released}
        for place, table_key in stored.items():
            if table_key == IN_MEMORY:  # nothing stored: its record may now be committed
                self._unpin(entries[place])
                continue
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
        parked_at=since,  # fetched: ends asked for after it count (streams/join/watermark.py)
        plan_known=plan_known,
    )


def fetched_at(event: EventT[bytes], moment: datetime) -> datetime:
    """Return when ``event``'s record was fetched (``time_in``, stamped by faust_compat),
    on the clock that says ``moment`` now; ``moment`` when it was not stamped."""
    time_in = event.message.time_in
    return moment if time_in is None else moment - timedelta(seconds=time.monotonic() - time_in)
