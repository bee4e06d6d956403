"""plan_optimization (seed 000 §7: slow plan -> optimized plan, from system metrics).

Where an execution comes from: the pipeline_outcome sample of a plan's ``execute`` stage,
as written (anonymized, consented). That sample was built from the stage event joined with
its plan (streams/join/rules.py ``on_stage``), so it already holds all an execution needs:
``input.intent_id`` / ``intent_text`` (the plan snapshot's intent), ``input.plan_id``,
``objective`` and ``plan_structure`` (the plan as of the stage), ``output.status``,
``duration_ms`` and ``token_usage`` (both from the stage's payload, as the runtime sent them),
and the event time. No second join: the pairs miner (agents/pair_miner.py) re-keys each
completed execution by intent onto ``learnstream.pair_intents``, beside the decided plans,
and the ``pair_intents`` table holds an intent's executions with its plans
(streams/samples/replans.py: same TTL, bounds of their own). A failed execution, another
stage, a stage that joined no plan, or SA steps and runtime executions (no plan, no intent)
are no executions here; a completed one with neither a duration nor a token count compares
nothing (``no_metrics``).

The rule, for two executions of one intent of *different* plans: the later one in event time
(``meta.event_time``; equal times: neither) is an optimization of the earlier when it saved
at least ``margin`` (``LEARNSTREAM_PAIRS__OPTIMIZATION_MARGIN``) of the duration or of the
tokens (total, else prompt + completion) and cost no more than ``margin`` extra on the other
one where both are known. A new execution is compared with every one held, whichever arrived
first, so arrival order does not matter.

The sample: ``input`` the intent and the slow plan with its execution's metrics, ``output``
the optimized plan with its own and ``improvement`` (the share saved, per metric).
``meta.quality_score`` is the largest share saved on a metric that passed the margin
(``margin`` to 1.0); good from 0.5 (at least twice as fast or cheap), else acceptable.
Its preference pair (kind ``optimization``) is mined from the sample as written
(:func:`streams.samples.pairs.optimization_pair`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from streams.samples.ids import sample_id
from streams.samples.parts import PRODUCER, iso, present
from streams.samples.sample import Feedback, LearningSample, SampleMeta

__all__ = [
    "EXECUTION_STAGE",
    "Execution",
    "NoMetrics",
    "build_plan_optimization",
    "execution_of",
    "is_execution",
    "optimizations",
    "saving",
]

#: The stage whose completion is an execution of the plan (DESIGN §4).
EXECUTION_STAGE = "execute"
NoMetrics = Literal["no_metrics"]


class Execution(BaseModel):
    """A completed execution of a plan, as re-keyed by intent (one ``pair_intents`` record)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["execution"] = "execution"
    sample_id: str = Field(min_length=1)  # its pipeline_outcome sample
    event_id: str = Field(min_length=1)  # the stage event (the sample's source, a UUID)
    intent_id: str = Field(min_length=1)
    intent_text: str | None = None
    project_id: str | None = None
    plan_ref: str | None = None  # the plan's canonical id (meta.plan_id)
    event_time: AwareDatetime
    plan: dict[str, Any]  # plan_id, objective, steps
    duration_ms: int | None = Field(None, ge=0)
    tokens: int | None = Field(None, ge=0)
    token_usage: dict[str, Any] | None = None

    def to_json(self) -> bytes:
        """Return the re-keyed record's value (JSON)."""
        return orjson.dumps(self.model_dump(mode="json"))

    def metrics(self) -> dict[str, Any]:
        """Return what the sample shows of this execution."""
        at = iso(self.event_time)
        values = {"duration_ms": self.duration_ms, "token_usage": self.token_usage}
        return present(values) | {"completed_at": at}


def is_execution(sample: dict[str, Any]) -> bool:
    """Tell, without validating, whether a pipeline_outcome as written is a completed
    execution of a plan with an intent (most stages are not: they are skipped unread)."""
    inp, out = sample.get("input"), sample.get("output")
    return (
        isinstance(inp, dict)
        and isinstance(out, dict)
        and inp.get("stage_id") == EXECUTION_STAGE
        and out.get("status") == "completed"
        and isinstance(inp.get("intent_id"), str)
        and isinstance(inp.get("plan_id"), str)
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _tokens(usage: Any) -> int | None:
    """Return an execution's token count: ``total_tokens``, else prompt + completion."""
    if not isinstance(usage, dict):
        return None
    total = _count(usage.get("total_tokens"))
    parts = [_count(usage.get(k)) for k in ("prompt_tokens", "completion_tokens")]
    if total is None and None not in parts:
        total = sum(p for p in parts if p is not None)
    return total


def execution_of(sample: LearningSample) -> Execution | NoMetrics:
    """Return the execution of a pipeline_outcome that :func:`is_execution`, or
    ``no_metrics`` when it has neither a duration nor a token count."""
    inp, out, meta = sample.input, sample.output, sample.meta
    usage = out.get("token_usage")
    duration, tokens = _count(out.get("duration_ms")), _tokens(usage)
    if duration is None and tokens is None:
        return "no_metrics"
    steps = [s.get("description") for s in inp.get("plan_structure", []) if isinstance(s, dict)]
    plan = {"plan_id": inp["plan_id"], "objective": inp.get("objective"), "steps": steps}
    return Execution(
        sample_id=sample.sample_id,
        event_id=meta.source_event_ids[0],
        intent_id=inp["intent_id"],
        intent_text=inp.get("intent_text"),
        project_id=meta.project_id,
        plan_ref=meta.plan_id,
        event_time=datetime.fromisoformat(meta.event_time or sample.created_at),
        plan=present(plan),
        duration_ms=duration,
        tokens=tokens,
        token_usage=usage if isinstance(usage, dict) else None,
    )


def _shares(slow: Execution, fast: Execution) -> dict[str, float]:
    """Return the share of each metric both know that ``fast`` saved (negative: it cost more)."""
    shares = {}
    for name in ("duration_ms", "tokens"):
        before, after = getattr(slow, name), getattr(fast, name)
        if before is not None and after is not None and (before or after):
            shares[name] = round(1 - after / before, 4) if before else -1.0
    return shares


def saving(slow: Execution, fast: Execution, margin: float) -> dict[str, float] | None:
    """Return what ``fast`` saved over ``slow`` per metric, or None when it is no
    optimization of it (not later, the same plan, not ``margin`` better, or costlier)."""
    if fast.event_time <= slow.event_time or fast.plan.get("plan_id") == slow.plan.get("plan_id"):
        return None
    shares = _shares(slow, fast)
    if any(share < -margin for share in shares.values()):
        return None
    return shares if max(shares.values(), default=0.0) >= margin else None


def build_plan_optimization(
    slow: Execution, fast: Execution, saved: dict[str, float], now: datetime
) -> LearningSample:
    """Build the plan_optimization sample of ``fast`` over ``slow`` (its id: the two
    executions' samples, so a replay makes the same one)."""
    score = min(max(saved.values()), 1.0)
    intent = present({"intent_id": fast.intent_id, "intent_text": slow.intent_text})
    return LearningSample(
        sample_id=sample_id("plan_optimization", f"{slow.sample_id}\x1f{fast.sample_id}"),
        sample_family="plan_optimization",
        created_at=iso(now),
        input=intent | {"plan": slow.plan, "execution": slow.metrics()},
        output={"plan": fast.plan, "execution": fast.metrics(), "improvement": saved},
        feedback=Feedback(
            source="system", type="score", quality_label="good" if score >= 0.5 else "acceptable"
        ),
        meta=SampleMeta(
            source_event_ids=[slow.event_id, fast.event_id],
            project_id=fast.project_id or slow.project_id,
            human_feedback_label="not_reviewed",
            producer=PRODUCER,
            plan_id=fast.plan_ref,
            event_time=iso(fast.event_time),
            quality_score=score,
        ),
    )


def optimizations(
    held: list[Execution], new: Execution, margin: float, now: datetime
) -> list[LearningSample]:
    """Return the samples ``new`` makes with the executions ``held`` for its intent: as the
    optimized plan of every earlier one, as the slow plan of every later one."""
    samples = []
    for other in held:
        slow, fast = (other, new) if other.event_time < new.event_time else (new, other)
        saved = saving(slow, fast, margin)
        if saved is not None:
            samples.append(build_plan_optimization(slow, fast, saved, now))
    return samples
