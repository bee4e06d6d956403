"""A LearningSample as an MPLP common learning sample (``common/learning-sample.schema.json``).

Pure. ``learnstream export --format mplp-common`` writes one record per sample; ``--format
mplp`` is the lossless form (same ``sample_id``). Each field comes only from what the sample
holds:

- ``project_id``: ``meta.project_id``. The schema requires one, so a sample without a project
  has no record (the export's summary counts it): a made-up project would mislead consumers.
- ``success_flag``: the family's outcome (:data:`SUCCESS`; a plan_optimization's is true:
  only completed executions are compared). A family without a rule there (a new one) has
  no record either, until one is decided: success is no quality label.
- ``timestamps``: ``started_at`` is ``meta.event_time``; a sample that ends a run with its
  duration (pipeline_outcome, multi_agent_coordination: ``output.duration_ms``;
  plan_optimization: the optimized plan's execution, ``output.execution.duration_ms``)
  starts that long before its event and ``completed_at`` is the event. A sample with no
  event time (dialog_response: A2E feedback carries none) starts at its ``created_at``, when
  the worker received it.
- ``execution_time_ms``: that duration.
- ``intent_before``, ``plan``, ``delta_intents``: the intent, plan and delta fields the
  sample holds, ``plan.plan_id`` being ``meta.plan_id`` (a plan_optimization's plan is the
  optimized one, ``output.plan``).
- ``pipeline_path``: a pipeline_outcome's ``input.pipeline_path`` (the plan's stages so
  far, ending with this one) when it is a list of strings, else the one stage it is about
  (``input.stage_id``).
- ``token_usage``: the usage the run reported, as the schema's object
  (streams/export/token_usage.py: counts, ``by_agent``; what the schema would refuse is
  left out, never the record): a pipeline_outcome's ``output.token_usage``, as its stage's
  or run's payload sent it; a plan_optimization's optimized execution's
  (``output.execution.token_usage``; the slow one's stays in ``input``).
- ``error_info``: a pipeline_outcome's ``output.error_info``, a string as the message, an
  object by its ``error_code``/``code``, ``error_message``/``message`` and ``stack_trace``.
- ``user_feedback``: a human's feedback (``feedback.source`` user) only; decision from
  ``feedback.type`` (:data:`DECISIONS`: a cancelled Confirm is ``unknown``), comment from its
  details, rating of a dialog_response's A2E score in [-1, 1] on 0-5: ``(score + 1) * 2.5``.
- ``governance_decisions``: a confirm_decision's Confirm request and decision.
- ``metadata``: family, quality label and score, provenance.
- ``graph_before`` / ``graph_after``: a graph_evolution's node and edge counts; its
  ``success_flag`` says the graph only grew. A count since a moment rather than a size
  given (streams/join/graphs.py) keeps its ``size_counted_since`` in ``graph_before``.

- ``impact_score``: a delta_impact's ``output.impact_score``, the score (0 to 1) the impact
  analysis itself gave (streams/mplp/core_events.py). Never ``meta.quality_score``: that
  rates how good an outcome was, not how large an impact (a rolled-back change scores 0), so
  it goes to ``metadata``.

Not joined: cost_budget core events (``mplp.core_events``) are accepted and counted, not
added to the token usage of their plan's or session's samples. They come on another topic
than a sample's other inputs, and Kafka orders two topics by nothing: whether one had been
read when a sample was built could differ between a run and its replay, and so would the
sample (the reason plan_generation samples carry no corrections count).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from learnstream.streams.export.token_usage import token_usage
from learnstream.streams.samples.parts import iso, present
from learnstream.streams.samples.sample import LearningSample

__all__ = ["DECISIONS", "SUCCESS", "common_record"]

#: Whether the action succeeded, per family.
SUCCESS: dict[str, Callable[[LearningSample], bool]] = {
    # a decided plan: approved; a plan the system evaluated (plan_generation, nobody judged
    # it): not refused by the evaluation
    "intent_resolution": lambda s: (
        s.feedback.quality_label != "poor"
        if s.feedback.source == "system"
        else s.output.get("resolution_quality_label") == "good"
    ),
    "confirm_decision": lambda s: s.output.get("status", s.output.get("decision")) == "approved",
    "error_correction": lambda s: True,  # the user's correction was applied to the plan
    "delta_impact": lambda s: s.output.get("rollback_used") is not True,
    "pipeline_outcome": lambda s: s.output.get("status") == "completed",
    "multi_agent_coordination": lambda s: s.output.get("outcome") == "success",
    "dialog_response": lambda s: s.feedback.quality_label == "good",
    "graph_evolution": lambda s: s.feedback.quality_label == "good",  # the graph only grew
    # the optimized plan's execution: only completed executions are compared
    "plan_optimization": lambda s: True,
}
#: ``feedback.type`` -> ``user_feedback.decision``.
DECISIONS = {
    "approval": "approve",
    "rejection": "reject",
    "correction": "override",
    "score": "unknown",
}
_ENDS_RUN = frozenset({"pipeline_outcome", "multi_agent_coordination"})
_ERROR_KEYS = {
    "error_code": ("error_code", "code"),
    "error_message": ("error_message", "message"),
    "stack_trace": ("stack_trace",),
}
#: Where a feedback's details hold the human's words: A2E comment, decision reason, correction.
_COMMENTS = ("comment", "reason", "user_feedback")
_META = ("quality_score", "human_feedback_label", "source_event_ids", "source_flow_id", "id_refs")


def common_record(sample: LearningSample) -> dict[str, Any] | None:
    """Return the common learning sample of ``sample``; None when it names no project or its
    family has no success rule."""
    family = sample.sample_family
    success = SUCCESS.get(family)
    if sample.meta.project_id is None or success is None:
        return None
    return present(
        {
            "sample_id": sample.sample_id,
            "project_id": sample.meta.project_id,
            "success_flag": success(sample),
            "timestamps": _timestamps(sample),
            "intent_before": _intent(sample) or None,
            "plan": _plan(sample) or None,
            "delta_intents": _deltas(sample) or None,
            "pipeline_path": _path(sample),
            "execution_time_ms": _duration(sample),
            "token_usage": token_usage((_run(sample) or {}).get("token_usage")),
            "error_info": _error_info(sample.output.get("error_info"))
            if family == "pipeline_outcome"
            else None,
            "user_feedback": _user_feedback(sample),
            "governance_decisions": _governance(sample),
            "impact_score": _impact_score(sample),
            "metadata": _metadata(sample),
            **_graphs(sample),
        }
    )


def _impact_score(sample: LearningSample) -> float | None:
    """Return the impact analysis's own score of a delta_impact (0 to 1), if it gave one."""
    value = sample.output.get("impact_score")
    if sample.sample_family != "delta_impact" or isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) and 0 <= value <= 1 else None


def _graphs(sample: LearningSample) -> dict[str, Any]:
    """Return a graph_evolution's graph before and after, as node and edge counts."""
    if sample.sample_family != "graph_evolution":
        return {}
    state, out = sample.state or {}, sample.output
    before = {
        "node_count": state.get("node_count_before"),
        "edge_count": state.get("edge_count_before"),
        "size_counted_since": state.get("size_counted_since"),
    }
    after = {"node_count": out.get("node_count_after"), "edge_count": out.get("edge_count_after")}
    return {"graph_before": present(before) or None, "graph_after": present(after) or None}


def _run(sample: LearningSample) -> Mapping[str, Any] | None:
    """Return what a sample that ends a run says of the run (its duration, tokens): the
    output of a stage, run or session; a plan_optimization's optimized execution."""
    if sample.sample_family in _ENDS_RUN:
        return sample.output
    execution = sample.output.get("execution")
    if sample.sample_family == "plan_optimization" and isinstance(execution, Mapping):
        return execution
    return None


def _duration(sample: LearningSample) -> float | None:
    value = (_run(sample) or {}).get("duration_ms")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # a stage's duration is as the runtime sent it
    return value if math.isfinite(value) and value >= 0 else None


def _timestamps(sample: LearningSample) -> dict[str, str]:
    event_time = sample.meta.event_time
    if event_time is None:
        return {"started_at": sample.created_at}
    duration = _duration(sample)
    if duration is None:
        return {"started_at": event_time}
    try:
        end = datetime.fromisoformat(event_time)
        start = end - timedelta(milliseconds=duration)
    except (ValueError, OverflowError):  # a time or duration from another producer's sample
        return {"started_at": event_time}
    return {"started_at": iso(start), "completed_at": event_time}


def _intent(sample: LearningSample) -> dict[str, Any]:
    inp, family = sample.input, sample.sample_family
    if family == "intent_resolution":
        keys = ("intent_id", "intent_text", "constraints_summary", "dialog_turns_count")
        meta = sample.meta
        found = {k: inp.get(k) for k in keys} | {
            "clarification_rounds": meta.clarification_rounds,
            "ambiguity_flags": meta.ambiguity_flags,
            "context": inp.get("context") or None,
        }
        return present(found)
    if family in ("error_correction", "delta_impact", "plan_optimization"):
        return present({k: inp.get(k) for k in ("intent_id", "intent_text")})
    return {}


def _plan(sample: LearningSample) -> dict[str, Any]:
    inp, out, state = sample.input, sample.output, sample.state or {}
    family = sample.sample_family
    fields: dict[str, Any] = {}
    if family == "intent_resolution":
        fields = {
            "title": out.get("plan_title"),
            "objective": out.get("final_intent_summary"),
            "status": state.get("plan_status"),
            "step_count": out.get("plan_step_count"),
            "steps": out.get("plan_structure"),
        }
    elif family == "error_correction":
        fields = dict(inp.get("plan_state") or {})
    elif family == "pipeline_outcome":
        fields = {
            "objective": inp.get("objective"),
            "status": state.get("plan_status"),
            "steps": inp.get("plan_structure"),
        }
    elif family == "plan_optimization" and isinstance(out.get("plan"), Mapping):
        fields = {k: out["plan"].get(k) for k in ("objective", "steps")}
    return present({"plan_id": sample.meta.plan_id, **fields})


def _deltas(sample: LearningSample) -> list[dict[str, Any]]:
    inp, out, family = sample.input, sample.output, sample.sample_family
    keys = ("delta_id", "intent_id", "delta_type", "change_summary")
    if family == "error_correction":
        details = sample.feedback.details if isinstance(sample.feedback.details, dict) else {}
        changes = out.get("result")
        delta = {k: inp.get(k) for k in keys} | {
            "delta_type": out.get("delta_type"),
            "changes": changes if changes != inp.get("change_summary") else None,
            "corrected_fields": details.get("corrected_fields"),
        }
        return [present(delta)]
    if family == "delta_impact":
        meta = sample.meta
        impact = {**(sample.state or {}), **out} | present(
            {
                "impact_analysis_duration_ms": meta.impact_analysis_duration_ms,
                "predicted_vs_actual_accuracy": meta.predicted_vs_actual_accuracy,
            }
        )
        return [present({k: inp.get(k) for k in keys}) | {"impact": impact}]
    return []


def _path(sample: LearningSample) -> list[str] | None:
    """Return a pipeline_outcome's stages: its ``pipeline_path``, else its one stage."""
    path, stage = sample.input.get("pipeline_path"), sample.input.get("stage_id")
    if sample.sample_family != "pipeline_outcome":
        return None
    if isinstance(path, list) and path and all(isinstance(step, str) for step in path):
        return list(path)
    return [stage] if isinstance(stage, str) and stage else None


def _text(value: Any) -> str | None:
    """Return a non-empty string, or an integer (an error code) as one; else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) and value else None


def _error_info(error: Any) -> dict[str, str] | None:
    if isinstance(error, str):
        return {"error_message": error} if error else None
    if not isinstance(error, Mapping):
        return None
    info = {
        field: next((text for k in keys if (text := _text(error.get(k)))), None)
        for field, keys in _ERROR_KEYS.items()
    }
    return present(info) or None


def _user_feedback(sample: LearningSample) -> dict[str, Any] | None:
    feedback = sample.feedback
    if feedback.source != "user":
        return None
    details = feedback.details if isinstance(feedback.details, dict) else {}
    comment = next(
        (text for k in _COMMENTS if isinstance(text := details.get(k), str) and text), None
    )
    score = details.get("score")
    rating = None
    if sample.sample_family == "dialog_response" and isinstance(score, int | float):
        rating = round((score + 1) * 2.5, 4)
    return present({"decision": DECISIONS[feedback.type], "comment": comment, "rating": rating})


def _governance(sample: LearningSample) -> list[dict[str, Any]] | None:
    if sample.sample_family != "confirm_decision":
        return None
    decision = present({k: v for k, v in sample.output.items() if v != ""})
    return [{**sample.input, **decision}]


def _metadata(sample: LearningSample) -> dict[str, Any]:
    meta = sample.meta
    return present(
        {
            "sample_family": sample.sample_family,
            "quality_label": sample.feedback.quality_label,
            **{k: getattr(meta, k) for k in _META},
            "created_at": sample.created_at,
            "producer": meta.producer,
            "protocol_version": meta.protocol_version,
        }
    )
