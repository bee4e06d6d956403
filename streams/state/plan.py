"""Plan state held in the ``plan_state`` table: last writer wins by the plan's own time.

Beside its latest snapshot a plan keeps what its samples are built *as of*: its corrections
(``delta_times``) and the ended stages of its pipeline (``stages``), each with its event time;
and what official core events said of it: its intent and its token charges
(streams/state/facts.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from learnstream.streams.mplp.models import TERMINAL_PLAN_STATUSES, PlanSnapshot, StageEvent
from learnstream.streams.state.facts import MAX_COSTS, CostMark, IntentMark

__all__ = [
    "MAX_STAGES",
    "PlanState",
    "StageMark",
    "expired",
    "merge_snapshot",
    "record_cost",
    "record_delta",
    "record_intent",
    "record_stage",
]

#: Ended stages a plan keeps (the latest recorded): a pipeline_path is at most this long.
MAX_STAGES = 32


class StageMark(NamedTuple):
    """An ended stage of the plan's pipeline (stored as ``[stage_id, at, event_id]``)."""

    stage_id: str
    at: AwareDatetime
    event_id: str

    @classmethod
    def of(cls, event: StageEvent) -> StageMark:
        """Return the mark of a stage event."""
        return cls(event.stage, event.timestamp, event.event_id)


class PlanState(BaseModel):
    """What we remember of a plan: its latest snapshot and its corrections, by event time.

    The corrections' event times let a sample be built from the plan *as of its event*
    (``as_of``), whatever order the worker reads the two topics in: a decision replayed
    after a later correction was stored counts what the first copy counted.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    snapshot: PlanSnapshot
    updated_at: AwareDatetime
    delta_ids: tuple[str, ...] = ()
    #: delta_id -> the correction's event time; one without a time counts as the earliest.
    delta_times: dict[str, AwareDatetime] = Field(default_factory=dict)
    terminal_since: AwareDatetime | None = None
    #: The ended stages of the plan's pipeline, in the order they were recorded (None: none,
    #: and nothing stored: most plans of a large table never run a stage).
    stages: tuple[StageMark, ...] | None = None
    #: The stages seen starting (``running``), in the order they were recorded, the latest
    #: :data:`MAX_STAGES`: an end that reports no duration runs from its start (None: none).
    stage_starts: tuple[StageMark, ...] | None = None
    #: The intent its latest IntentEvent stated (streams/state/facts.py; None: none).
    intent: IntentMark | None = None
    #: Its CostAndBudgetEvents' charges, in the order recorded (None: none).
    costs: tuple[CostMark, ...] | None = None

    @property
    def deltas(self) -> int:
        """Return how many distinct corrections the plan received."""
        return len(self.delta_ids)

    def as_of(self, moment: datetime) -> PlanState:
        """Return the state with only the corrections made at or before ``moment``."""
        times = self.delta_times
        kept = tuple(d for d in self.delta_ids if d not in times or times[d] <= moment)
        if len(kept) == len(self.delta_ids):
            return self
        return self.model_copy(update={"delta_ids": kept})

    def pipeline_path(self, mark: StageMark) -> list[str]:
        """Return the stage ids of the plan's pipeline up to the stage ``mark``: those at or
        before its time (by time, then event id), then its own.

        Only stages recorded before ``mark`` count: a stage recorded later was read later,
        so the copy of a sample that a redelivered stage rebuilds (its mark already held)
        names the stages the first copy named, whatever was recorded meanwhile.
        """
        stages = self.stages or ()
        held = [m.event_id for m in stages]
        before = stages[: held.index(mark.event_id)] if mark.event_id in held else stages
        earlier = sorted((m for m in before if m.at <= mark.at), key=lambda m: (m.at, m.event_id))
        return [*(m.stage_id for m in earlier), mark.stage_id]

    def started(self, mark: StageMark) -> datetime | None:
        """Return when the stage of the end ``mark`` started: the latest start of that stage
        id at or before the end's time (None: none seen)."""
        times = [m.at for m in self.stage_starts or () if m.stage_id == mark.stage_id]
        return max((t for t in times if t <= mark.at), default=None)

    def to_table(self) -> bytes:
        """Return the JSON bytes stored in the table and its changelog.

        Bytes rather than parsed dicts: a held plan then costs its JSON text (about a
        quarter of the dicts' size) and nothing for the garbage collector to walk, whose
        full collections over a table of dicts pause the worker longer the more plans it
        holds (benchmarks/RESULTS.md, findings behind the design).
        """
        return self.__pydantic_serializer__.to_json(self, exclude_none=True)

    @classmethod
    def from_table(cls, raw: bytes | str | Mapping[str, Any]) -> PlanState:
        """Parse a stored state: JSON bytes, or a dict (what tables held before bytes)."""
        if isinstance(raw, bytes | str):
            return cls.model_validate_json(raw)
        return cls.model_validate(raw)


def _plan_time(snapshot: PlanSnapshot, fallback: datetime) -> datetime:
    return snapshot.plan.meta.updated_at or snapshot.plan.meta.created_at or fallback


def merge_snapshot(
    current: PlanState | None, snapshot: PlanSnapshot, event_time: datetime
) -> PlanState | None:
    """Return the new state, or None when the snapshot is older than what we hold."""
    updated_at = _plan_time(snapshot, event_time)
    if current is not None and updated_at < current.updated_at:
        return None
    terminal = snapshot.plan.status in TERMINAL_PLAN_STATUSES
    since = (current.terminal_since if current else None) or (updated_at if terminal else None)
    return PlanState(
        snapshot=snapshot,
        updated_at=updated_at,
        delta_ids=current.delta_ids if current else (),
        delta_times=current.delta_times if current else {},
        terminal_since=since if terminal else None,
        stages=current.stages if current else None,
        stage_starts=current.stage_starts if current else None,
        intent=current.intent if current else None,
        costs=current.costs if current else None,
    )


def record_delta(state: PlanState, delta_id: str, at: datetime | None = None) -> PlanState:
    """Return the state with the correction ``delta_id`` made at ``at`` recorded.

    Idempotent: a replayed delta after a crash is not counted twice, so replayed samples
    stay identical. Without ``at`` the correction counts as made before every event.
    """
    if delta_id in state.delta_ids:
        return state
    times = state.delta_times if at is None else {**state.delta_times, delta_id: at}
    return state.model_copy(
        update={"delta_ids": (*state.delta_ids, delta_id), "delta_times": times}
    )


def expired(state: PlanState, now: datetime, ttl: timedelta) -> bool:
    """Return True when a terminal plan has outlived its time to live."""
    return state.terminal_since is not None and now - state.terminal_since >= ttl


def record_start(state: PlanState, mark: StageMark) -> PlanState:
    """Return the state with the stage start ``mark`` recorded (the oldest go past
    :data:`MAX_STAGES`). Idempotent: a redelivered start is not recorded twice."""
    starts = state.stage_starts or ()
    if any(m.event_id == mark.event_id for m in starts):
        return state
    return state.model_copy(update={"stage_starts": (*starts, mark)[-MAX_STAGES:]})


def record_stage(state: PlanState, mark: StageMark) -> PlanState:
    """Return the state with the ended stage ``mark`` recorded (the oldest go past
    :data:`MAX_STAGES`). Idempotent: a redelivered stage event is not recorded twice."""
    stages = state.stages or ()
    if any(m.event_id == mark.event_id for m in stages):
        return state
    return state.model_copy(update={"stages": (*stages, mark)[-MAX_STAGES:]})


def record_intent(state: PlanState, mark: IntentMark) -> PlanState:
    """Return the state with the intent ``mark`` stated, if it is the latest statement."""
    if not mark.later_than(state.intent):
        return state
    return state.model_copy(update={"intent": mark})


def record_cost(state: PlanState, mark: CostMark) -> PlanState:
    """Return the state with the charge ``mark`` recorded (the oldest go past
    :data:`learnstream.streams.state.facts.MAX_COSTS`). Idempotent by event id."""
    costs = state.costs or ()
    if any(m.event_id == mark.event_id for m in costs):
        return state
    return state.model_copy(update={"costs": (*costs, mark)[-MAX_COSTS:]})
