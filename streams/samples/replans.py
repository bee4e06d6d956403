"""Replan pairs: for one intent, a rejected plan followed in event time by an approved one.

The matcher holds, per ``intent_id``, the rejected and the approved plans it has seen
(:class:`IntentPlans`, one table value). Each new plan is paired with every plan of the other
side on the right side of it in *event time* (``meta.event_time``): a rejection with every
approval after it, an approval with every rejection before it. So the pairs of an intent do
not depend on the order its samples arrive in, and an intent rejected twice, then approved,
yields two pairs. Equal event times pair nothing (neither followed the other). A pair's
``margin`` is the approved sample's ``meta.quality_score`` less the rejected one's (``None``
if either was written without one).

An intent also holds its plans' completed executions (:class:`Execution`), compared as they
arrive into plan_optimization samples (:func:`match_execution`, the rule in
:mod:`learnstream.streams.samples.optimizations`); the re-keyed record is a plan or an execution
(:func:`read_rekeyed`). It holds its earliest executions in event time (then sample id) up to
their bounds, a later one beyond them compared but not kept: which ones an intent holds does
not depend on the order they arrived in either.

An intent is dropped ``pairs.ttl`` after its last plan or execution arrived (processing time),
approved or not; one arriving after that starts afresh. A plan or execution seen before (a
replay) is paired again (same ids) but not stored twice, so a pair lost in a crash comes back.
"""

from __future__ import annotations

from bisect import insort
from datetime import datetime, timedelta
from typing import Any

import orjson
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from learnstream.streams.samples.executions import Execution
from learnstream.streams.samples.optimizations import optimizations
from learnstream.streams.samples.pairs import NoPair, PreferencePair, event_time, invalid, pair_id
from learnstream.streams.samples.parts import iso
from learnstream.streams.samples.sample import LearningSample

__all__ = [
    "MAX_EXECUTIONS",
    "MAX_EXECUTION_BYTES",
    "MAX_PLANS",
    "MAX_PLAN_BYTES",
    "IntentPlans",
    "Plan",
    "due",
    "match",
    "match_execution",
    "match_key",
    "plan_of",
    "read_plan",
    "read_rekeyed",
]

#: Plans held per side of one intent and their JSON bytes in all; its executions have bounds
#: of their own, so an intent executed often still holds the plans its replan pairs need. One
#: table value is one changelog record, which the broker caps at 1 MiB by default: both
#: budgets together leave 128 KiB for the rest of the value. What comes beyond a bound is
#: still compared with what is held, but not kept itself ("intent_full").
MAX_PLANS = 64
MAX_PLAN_BYTES = 512 * 1024
MAX_EXECUTIONS = 128
MAX_EXECUTION_BYTES = 384 * 1024
_LABEL = "resolution_quality_label"


class Plan(BaseModel):
    """An intent_resolution sample as the matcher needs it: the re-keyed record's value."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sample_id: str = Field(min_length=1)
    intent_id: str = Field(min_length=1)
    project_id: str | None = None
    event_time: AwareDatetime
    approved: bool
    prompt: dict[str, Any]  # the sample's input
    completion: dict[str, Any]  # its output, without the label the pair itself encodes
    score: float | None = None

    def to_json(self) -> bytes:
        """Return the re-keyed record's value (JSON)."""
        return orjson.dumps(self.model_dump(mode="json"))


def read_plan(data: bytes | None) -> Plan:
    """Decode a re-keyed record into a :class:`Plan`."""
    try:
        return Plan.model_validate_json(data or b"")
    except ValidationError as exc:
        raise invalid(exc, "a re-keyed plan") from None


_REKEYED: TypeAdapter[Plan | Execution] = TypeAdapter(Plan | Execution)


def match_key(found: Plan | Execution) -> str:
    """Return the key plans and executions are matched under: their project and intent.

    Runtime intent ids like ``intent-1`` recur across projects; matched by intent alone,
    one project's plan could be paired with another's and leave under the other's consent.
    """
    return f"{found.project_id or '-'}:{found.intent_id}"


def read_rekeyed(data: bytes | None) -> Plan | Execution:
    """Decode a re-keyed record: a decided plan, or an execution (``"kind": "execution"``)."""
    try:
        return _REKEYED.validate_json(data or b"")
    except ValidationError as exc:
        raise invalid(exc, "a re-keyed plan or execution") from None


def plan_of(sample: LearningSample) -> Plan | NoPair:
    """Return the plan of an intent_resolution sample, or ``undecided``."""
    label = sample.output.get(_LABEL)
    if label not in ("good", "bad"):
        return "undecided"
    return Plan(
        sample_id=sample.sample_id,
        intent_id=sample.input["intent_id"],
        project_id=sample.meta.project_id,
        event_time=event_time(sample),
        approved=label == "good",
        prompt=sample.input,
        completion={k: v for k, v in sample.output.items() if k != _LABEL},
        score=sample.meta.quality_score,
    )


class IntentPlans(BaseModel):
    """What the matcher holds for one intent (JSON in the table)."""

    model_config = ConfigDict(extra="forbid")
    touched: AwareDatetime  # when its last plan arrived: the TTL counts from there
    partition: int  # the partition whose records wrote it (its changelog partition)
    size: int = 0  # JSON bytes of the plans held
    execution_size: int = 0  # JSON bytes of the executions held
    rejected: list[Plan] = []
    approved: list[Plan] = []
    executions: list[Execution] = []

    @model_validator(mode="after")
    def _executions_apart(self) -> IntentPlans:
        """Read a value written with one budget for plans and executions (its ``size``
        counted both) and its executions in arrival order: count them apart, sort them."""
        if self.executions and not self.execution_size:
            self.execution_size = sum(len(e.to_json()) for e in self.executions)
            self.size = max(0, self.size - self.execution_size)
        self.executions.sort(key=lambda e: e.order)
        return self

    def holds(self, item: Plan | Execution) -> bool:
        """Tell whether ``item`` was seen before (a replayed sample)."""
        held: list[Plan | Execution] = [*self.rejected, *self.approved, *self.executions]
        return any(p.sample_id == item.sample_id for p in held)

    def keep(self, side: list[Plan], plan: Plan) -> NoPair | None:
        """Append ``plan`` to ``side`` unless that side or the plans' bytes are full (then
        say so)."""
        size = len(plan.to_json())
        if len(side) >= MAX_PLANS or self.size + size > MAX_PLAN_BYTES:
            return "intent_full"
        side.append(plan)
        self.size += size
        return None

    def keep_execution(self, execution: Execution) -> NoPair | None:
        """Insert ``execution`` in event-time order, then let the latest go while the count or
        the bytes are over their bound (then say so: it may be ``execution`` itself)."""
        insort(self.executions, execution, key=lambda e: e.order)
        self.execution_size += len(execution.to_json())
        reason: NoPair | None = None
        while len(self.executions) > MAX_EXECUTIONS or self.execution_size > MAX_EXECUTION_BYTES:
            self.execution_size -= len(self.executions.pop().to_json())
            reason = "intent_full"
        return reason


def _margin(rejected: Plan, approved: Plan) -> float | None:
    if approved.score is None or rejected.score is None:
        return None
    return approved.score - rejected.score


def _pair(rejected: Plan, approved: Plan, created_at: str) -> PreferencePair:
    return PreferencePair(
        pair_id=pair_id("replan", rejected.sample_id, approved.sample_id),
        kind="replan",
        intent_id=rejected.intent_id,
        project_id=rejected.project_id or approved.project_id,
        family="intent_resolution",
        prompt=rejected.prompt,
        chosen=approved.completion,
        rejected=rejected.completion,
        chosen_sample_id=approved.sample_id,
        rejected_sample_id=rejected.sample_id,
        event_time=iso(approved.event_time),
        created_at=created_at,
        margin=_margin(rejected, approved),
    )


def _pairs(held: IntentPlans, plan: Plan, created_at: str) -> list[PreferencePair]:
    if plan.approved:
        before = [r for r in held.rejected if r.event_time < plan.event_time]
        return [_pair(r, plan, created_at) for r in before]
    after = [a for a in held.approved if plan.event_time < a.event_time]
    return [_pair(plan, a, created_at) for a in after]


def match(
    held: IntentPlans | None, plan: Plan, now: datetime, partition: int
) -> tuple[IntentPlans, list[PreferencePair], NoPair | None]:
    """Add ``plan`` to ``held`` (in place; new if None); return it, the pairs ``plan``
    completes, and why it was not stored (None: stored, or held already)."""
    held = held or IntentPlans(touched=now, partition=partition)
    pairs = _pairs(held, plan, iso(now))
    held.touched, held.partition = now, partition
    if held.holds(plan):
        return held, pairs, None
    # an approval's prompt is never read: only a rejection's is
    kept = plan.model_copy(update={"prompt": {}}) if plan.approved else plan
    return held, pairs, held.keep(held.approved if plan.approved else held.rejected, kept)


def match_execution(
    held: IntentPlans | None, execution: Execution, now: datetime, partition: int, margin: float
) -> tuple[IntentPlans, list[LearningSample], NoPair | None]:
    """Add ``execution`` to ``held`` (in place; new if None); return it, the
    plan_optimization samples it makes with the executions held, and why it was not stored."""
    held = held or IntentPlans(touched=now, partition=partition)
    samples = optimizations(held.executions, execution, margin, now)
    held.touched, held.partition = now, partition
    if held.holds(execution):
        return held, samples, None
    return held, samples, held.keep_execution(execution)


def due(held: IntentPlans, now: datetime, ttl: timedelta) -> bool:
    """Tell whether the intent ``held`` got its last plan or execution ``ttl`` before ``now``."""
    return now - held.touched >= ttl
