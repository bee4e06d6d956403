"""Replay parked join entries against a plan's state, in event order (pure of Kafka I/O).

``Join`` (agents/plan_join.py) decides when to complete a plan's entries; ``Replay.run`` decides
what each entry comes to: a sample batch, kept waiting (no plan yet, or the corrections
input not read past its time), or a dead letter (``plan_state_missing`` after the grace,
or a failure of its own). One ``Route`` per input topic says how its records are decoded
and decided, for live records and replayed ones alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from agents.watermark import Watermark
from streams.config.settings import format_duration
from streams.dlq.errors import InvalidEvent
from streams.join.plan_state import PlanState
from streams.join.rules import Outcome, ParkedEvent, Source
from streams.mplp.decode import RecordOrigin
from streams.mplp.fields import InputNotes
from streams.samples.sample import LearningSample

__all__ = ["MISSING", "Completion", "Replay", "Route", "failure"]

#: The dead-letter reason of an entry whose plan never came within the grace.
MISSING = "plan_state_missing"

Decode = Callable[[bytes | None, RecordOrigin, InputNotes | None], Any]
#: (event, plan state, now, the parked entry being replayed or None, settled) -> Outcome
Decide = Callable[[Any, PlanState | None, datetime, ParkedEvent | None, bool], Outcome]


@dataclass(frozen=True)
class Route:
    """How the records of one input topic are decoded and decided."""

    source: Source
    decode: Decode
    decide: Decide
    #: Its samples count the plan's corrections: it waits until they are read past its time.
    settles: bool = False


@dataclass
class Completion:
    """What completing a plan's parked entries came to."""

    samples: list[LearningSample]
    state: PlanState | None
    keep: list[ParkedEvent]
    failed: list[tuple[ParkedEvent, str, str]]  # entry, reason, error
    changed: bool
    #: Where the completed and failed entries sit (topic, partition, offset).
    handled: set[tuple[str, int, int]] = field(default_factory=set)


class Replay:
    """Decide what a plan's parked entries come to, given its state and the watermark."""

    def __init__(self, routes: dict[str, Route], watermark: Watermark, grace: timedelta) -> None:
        self.routes = routes
        self.watermark = watermark
        self.grace = grace
        self.missing = (
            f"no plan state arrived within LEARNSTREAM_JOIN__GRACE ({format_duration(grace)})"
        )

    def run(
        self, state: PlanState | None, entries: list[ParkedEvent], moment: datetime
    ) -> Completion:
        """Go through ``entries`` in event order from ``state``: complete, keep or fail each."""
        done = Completion([], state, [], [], changed=False)
        for entry in entries:
            overdue = moment - entry.parked_at >= self.grace
            if done.state is None:
                if overdue:
                    done.failed.append((entry, MISSING, self.missing))
                else:
                    done.keep.append(entry)
                continue
            if not (overdue or self.settled(entry)):
                done.keep.append(entry)
                continue
            try:  # one bad parked event must not hold back the others
                outcome = self.decide(entry, done.state, moment)
            except Exception as exc:  # noqa: BLE001
                done.failed.append((entry, *failure(exc)))
                continue
            done.samples.extend(outcome.samples)
            done.state = outcome.new_state or done.state
        done.changed = len(done.keep) != len(entries)
        kept = {(e.topic, e.partition, e.offset) for e in done.keep}
        done.handled = {(e.topic, e.partition, e.offset) for e in entries} - kept
        return done

    def settled(self, entry: ParkedEvent) -> bool:
        """Tell whether ``entry`` no longer waits for the corrections input."""
        route = self.routes.get(entry.topic)
        return (
            route is None
            or not route.settles
            or self.watermark.settled(entry.partition, entry.parked_at)
        )

    def decide(self, entry: ParkedEvent, state: PlanState, moment: datetime) -> Outcome:
        """Decode ``entry`` again and decide it against ``state`` (it is settled now)."""
        route = self.routes.get(entry.topic)
        if route is None:
            raise InvalidEvent("wrong_topic", "the topic it was parked from is not an input now")
        # The time it was parked under: what a record without its own timestamp was given then.
        origin = RecordOrigin(entry.topic, entry.partition, entry.offset, entry.event_time)
        return route.decide(
            route.decode(entry.raw.encode(), origin, None), state, moment, entry, True
        )


def failure(exc: Exception) -> tuple[str, str]:
    """Return (reason, error) of a parked event that failed: no input value in the text."""
    if isinstance(exc, InvalidEvent):
        return exc.reason, exc.detail
    # an exception's own text may quote the input (pydantic's does): name its type
    return "builder_error", f"{type(exc).__name__} while building its samples"
