"""The join as one unit per key: its state, its parked events, the grace and the settled rule.

Every path of the join calls one :class:`KeyJoin` (built from what the tables hold for one
key) and applies the :class:`Step` it returns: a live record (``on_event``), the state that
completes parked records (``on_state``: a plan snapshot merged last-writer-wins), and the
sweep or a read of the corrections input (``on_tick``). Pure: the caller passes ``now`` and
tells whether the corrections input has been read past an entry (``settled``).

The rules, in one place:

- An event whose key has no state yet is *parked*, and completed when the state comes.
- An event of a settling route (its samples count the plan's corrections: decisions, executes)
  is parked too while the corrections input has not been read past it, since Kafka orders
  two topics by nothing; it completes once settled.
- Parked events complete in event-time order (then by place), each against the state as the
  ones before it left it, so a correction parked before a decision counts for it.
- An entry that waited ``grace`` completes whatever the corrections input says, or, with no
  state at all, is dead-lettered as ``plan_state_missing``. One that fails is dead-lettered
  alone: it does not hold back the others.
- A state deleted (a plan's tombstone on the plans topic, or its ``join.plan_ttl`` run out)
  ends the key: what waits completes at once against the state as it was, as if its grace
  were over, and what waits for a state that never came is dead-lettered as
  ``plan_deleted``. Nothing is left parked or waiting for the corrections input behind it.

Keys are not only plans: a route decides against any state type, so a window keyed by a
session id (events accumulate into the state; a closing event, or ``expire`` on a tick once
the session timed out, emits and closes the key) or two executions of one intent (the first
parks, the second completes) fit the same unit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from learnstream.streams.config.settings import format_duration
from learnstream.streams.dlq.errors import InvalidEvent, Reason
from learnstream.streams.join.outcome import Outcome, Source
from learnstream.streams.join.parked import ParkedEvent, Place
from learnstream.streams.mplp.decode import RecordOrigin
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.samples.sample import LearningSample

__all__ = [
    "DELETED",
    "MISSING",
    "KeyJoin",
    "Prepare",
    "Route",
    "Settled",
    "Step",
    "failure",
    "waiting_since",
]

#: The dead-letter reason of an entry whose state never came within the grace.
MISSING: Reason = "plan_state_missing"
#: The dead-letter reason of an entry whose state was deleted before it ever came.
DELETED: Reason = "plan_deleted"

S = TypeVar("S")
Decode = Callable[[bytes | None, RecordOrigin, InputNotes | None], Any]
#: (event, state, now, the parked entry being replayed or None, settled) -> Outcome
Decide = Callable[[Any, Any, datetime, ParkedEvent | None, bool], Outcome[Any]]
#: Tell whether the corrections input has been read past a parked entry.
Settled = Callable[[ParkedEvent], bool]
#: (state, now) -> what a key whose state outlived its time comes to (None: not yet).
Expire = Callable[[Any, datetime], Outcome[Any] | None]
#: Samples -> what the caller sends (privacy and encoding applied); raises on a bad sample.
Prepare = Callable[[list[LearningSample]], list[Any]]


@dataclass(frozen=True)
class Route:
    """How the records of one input topic are decoded, keyed and decided."""

    source: Source
    decode: Decode
    decide: Decide
    #: The key a decoded event joins under (None: it joins nothing and is decided alone).
    key: Callable[[Any], str | None]
    #: Its samples count the plan's corrections: it waits until they are read past its time.
    settles: bool = False


@dataclass
class Step(Generic[S]):
    """What one call of the unit comes to; the caller applies it, tables before sends."""

    samples: list[LearningSample] = field(default_factory=list)
    #: The key's state to store (None: it did not change).
    state: S | None = None
    #: Entries to store, each under its own key.
    parked: list[ParkedEvent] = field(default_factory=list)
    #: Entries done with (completed or failed): their table records are deleted.
    released: list[ParkedEvent] = field(default_factory=list)
    #: Entries that failed: (entry, dead-letter reason, error without input text).
    failed: list[tuple[ParkedEvent, str, str]] = field(default_factory=list)
    #: ``samples`` as the unit's ``prepare`` made them ready to send (None: no ``prepare``,
    #: the caller prepares ``samples``).
    ready: list[Any] | None = None
    #: The key is done with: delete its state (entries still parked are released too).
    close: bool = False


class KeyJoin(Generic[S]):
    """One key's join: feed it records, a state, ticks; it says what to emit and store."""

    def __init__(
        self,
        state: S | None,
        parked: Iterable[ParkedEvent],
        routes: Mapping[str, Route],
        grace: timedelta,
        expire: Expire | None = None,
        prepare: Prepare | None = None,
        missing: str = "no state arrived within the grace",
    ) -> None:
        self.state = state
        self.routes = routes
        self.grace = grace
        #: What a state that outlived its time comes to, asked on every tick (None: never).
        self.expire = expire
        #: Applied to each completed entry's samples apart, so one whose samples cannot be
        #: sent is dead-lettered alone instead of failing its key's every completion.
        self.prepare = prepare
        #: The error an entry whose state never came is dead-lettered with (its grace is
        #: added); the caller names the setting that sets the grace.
        self.missing_state = missing
        self._parked: dict[Place, ParkedEvent] = {entry.place: entry for entry in parked}

    @property
    def parked(self) -> list[ParkedEvent]:
        """Return the entries waiting, in the order they complete in."""
        return sorted(self._parked.values(), key=ParkedEvent.order)

    @property
    def waiting_since(self) -> datetime | None:
        """Return when the earliest entry still waiting for the corrections input was
        fetched: the watermark wakes the key once the input is read past it."""
        return waiting_since(self.state is not None, self._parked.values())

    def snapshot(self) -> tuple[S | None, list[ParkedEvent]]:
        """Return everything the unit holds: restore it with ``KeyJoin(*snapshot, ...)``."""
        return self.state, self.parked

    def on_event(
        self, event: Any, entry: ParkedEvent, now: datetime, *, settled: bool = True
    ) -> Step[S]:
        """Decide a live record (``event``, decoded from ``entry``) against the state.

        ``settled``: the corrections input has been read past it (always true of a route
        that does not settle). What it cannot complete yet is parked.
        """
        route = self.routes[entry.topic]
        outcome = route.decide(event, self.state, now, None, settled or not route.settles)
        step: Step[S] = Step(samples=list(outcome.samples))
        if outcome.close:
            return self._close(step)
        if outcome.new_state is not None:
            self.state = step.state = outcome.new_state
        if outcome.park and entry.place not in self._parked:  # a redelivered record parks once
            self._parked[entry.place] = entry
            step.parked.append(entry)
        return step

    def on_state(
        self, update: Callable[[S | None], S | None], now: datetime, settled: Settled
    ) -> Step[S]:
        """Merge a new state (``update`` returns None to keep the one held), then complete."""
        merged = update(self.state)
        if merged is None:
            return Step()
        self.state = merged
        step = self.on_tick(now, settled)
        step.state = self.state
        return step

    def on_tick(self, now: datetime, settled: Settled) -> Step[S]:
        """Complete what can be, in event order; dead-letter what waited ``grace`` for nothing."""
        step: Step[S] = Step(ready=None if self.prepare is None else [])
        before = self.state
        for entry in self.parked:
            overdue = now - entry.parked_at >= self.grace
            if self.state is None:
                if overdue:
                    step.failed.append((entry, MISSING, self.missing))
                    step.released.append(entry)
                continue
            if not (overdue or self._settled(entry, settled)):
                continue
            step.released.append(entry)
            try:  # one bad parked event must not hold back the others
                outcome = self._replay(entry, now)
                ready = self._prepared(outcome.samples)
            except Exception as exc:  # noqa: BLE001
                step.failed.append((entry, *failure(exc)))
                continue
            step.samples.extend(outcome.samples)
            if step.ready is not None:
                step.ready.extend(ready)
            self.state = outcome.new_state or self.state
        for entry in step.released:
            del self._parked[entry.place]
        if self.state is not None and self.expire is not None:
            expired = self.expire(self.state, now)
            if expired is not None:
                step.samples.extend(expired.samples)
                if step.ready is not None:
                    step.ready.extend(self._prepared(expired.samples))
                if expired.close:
                    return self._close(step)
                self.state = expired.new_state or self.state
        if self.state is not before:
            step.state = self.state
        return step

    def on_delete(self, now: datetime) -> Step[S]:
        """End the key because its state is deleted: complete what waits against the state
        as it was (settled or not: nothing after the deletion will count for it), dead-letter
        what waits for a state that never came, then close."""
        step = self.on_tick(now, lambda _entry: True)
        for entry in self.parked:  # only with no state: the tick completed every other
            step.failed.append((entry, DELETED, "its state was deleted before it arrived"))
        return self._close(step)

    def _close(self, step: Step[S]) -> Step[S]:
        """End the key: its state goes, and so do entries still parked (they had their say)."""
        step.released.extend(self._parked.values())
        self._parked.clear()
        self.state, step.state, step.close = None, None, True
        return step

    def _prepared(self, samples: list[LearningSample]) -> list[Any]:
        return [] if self.prepare is None else self.prepare(list(samples))

    @property
    def missing(self) -> str:
        """Return the error of an entry dead-lettered for want of its state."""
        return f"{self.missing_state} ({format_duration(self.grace)})"

    def _settled(self, entry: ParkedEvent, settled: Settled) -> bool:
        route = self.routes.get(entry.topic)
        return route is None or not route.settles or settled(entry)

    def _replay(self, entry: ParkedEvent, now: datetime) -> Outcome[Any]:
        """Decode ``entry`` again and decide it against the state (it is settled now)."""
        route = self.routes.get(entry.topic)
        if route is None:
            raise InvalidEvent("wrong_topic", "the topic it was parked from is not an input now")
        # The time it was parked under: what a record without its own timestamp was given then.
        origin = RecordOrigin(entry.topic, entry.partition, entry.offset, entry.event_time)
        event = route.decode(entry.raw.encode(), origin, None)
        return route.decide(event, self.state, now, entry, True)


def waiting_since(state_known: bool, parked: Iterable[ParkedEvent]) -> datetime | None:
    """Return when the earliest of ``parked`` was fetched, if they wait for the corrections
    input: with no state known they wait for the state, which completes them itself."""
    if not state_known:
        return None
    return min((entry.parked_at for entry in parked), default=None)


def failure(exc: Exception) -> tuple[str, str]:
    """Return (reason, error) of a parked event that failed: no input value in the text."""
    if isinstance(exc, InvalidEvent):
        return exc.reason, exc.detail
    # an exception's own text may quote the input (pydantic's does): name its type
    return "builder_error", f"{type(exc).__name__} while building its samples"
