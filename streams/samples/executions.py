"""Completed executions of plans, as the plan_optimization rule compares them.

Where an execution comes from: the pipeline_outcome sample of a plan's ``execute`` stage,
as written (anonymized, consented). That sample was built from the stage event joined with
its plan (streams/join/rules.py ``on_stage``), so it already holds all an execution needs:
``input.intent_id`` / ``intent_text`` (the plan snapshot's intent), ``input.plan_id``,
``objective`` and ``plan_structure`` (the plan as of the stage), ``output.status``,
``duration_ms`` and ``token_usage`` (both from the stage's payload, as the runtime sent them),
and the event time. A failed execution, another stage, a stage that joined no plan, or SA
steps and runtime executions (no plan, no intent) are no executions here; a completed one with
neither a duration nor a token count compares nothing (``no_metrics``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from learnstream.streams.samples.parts import iso, present
from learnstream.streams.samples.sample import LearningSample

__all__ = ["EXECUTION_STAGE", "Execution", "NoMetrics", "execution_of", "is_execution"]

#: The stage whose completion is an execution of the plan (docs/architecture.md §4).
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

    @property
    def order(self) -> tuple[datetime, str]:
        """Return where it sorts among its intent's executions: event time, then sample id."""
        return self.event_time, self.sample_id

    @property
    def plan_key(self) -> str:
        """Return the plan it executed: its canonical id (the id as sent if it has none)."""
        return self.plan_ref or str(self.plan.get("plan_id"))

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
