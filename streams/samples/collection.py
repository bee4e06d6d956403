"""Collection controls: which MPLP collection point made a sample, whether that point is on,
and whether the sample falls inside its family's sampling rate.

The points are the learning taxonomy's (``taxonomy/learning-taxonomy.yaml``); every one is
on by default, ``HIGH`` and ``MEDIUM`` alike, and each can be switched off. Two are no taxonomy
point: A2E feedback (dialog_response) is ``a2e_feedback`` here, and two executions of one intent
compared (streams/samples/optimizations.py) are ``plan_optimization``. The sampling decision
comes from the sample id alone (deterministic: a replay keeps exactly the samples it kept).
"""

from __future__ import annotations

from learnstream.streams.samples.sample import LearningSample

__all__ = ["POINTS", "collection_point", "in_sample"]

#: Every collection point a sample can come from.
POINTS: tuple[str, ...] = (
    "intent_resolution",
    "plan_generation",
    "plan_revision",
    "impact_analysis_completion",
    "execution_completion",
    "pipeline_failure",
    "user_feedback",
    "map_session_completion",
    "graph_update",
    "a2e_feedback",
    "plan_optimization",
)
_BY_FAMILY = {
    "intent_resolution": "intent_resolution",
    "error_correction": "plan_revision",
    "delta_impact": "impact_analysis_completion",
    "confirm_decision": "user_feedback",
    "multi_agent_coordination": "map_session_completion",
    "graph_evolution": "graph_update",
    "dialog_response": "a2e_feedback",
    "plan_optimization": "plan_optimization",
}


def collection_point(sample: LearningSample) -> str:
    """Return the collection point that made ``sample``: a pipeline_outcome is the failure
    point when its stage or run failed, else execution_completion; an intent_resolution is
    plan_generation when the system made it (SAPlanEvaluated), not a decision."""
    if sample.sample_family == "intent_resolution" and sample.feedback.source == "system":
        return "plan_generation"  # an agent's evaluation, not a Confirm decision
    if sample.sample_family != "pipeline_outcome":
        return _BY_FAMILY[sample.sample_family]
    status = sample.output.get("status", sample.output.get("result", {}).get("status"))
    return "pipeline_failure" if status == "failed" else "execution_completion"


def in_sample(sample_id: str, rate: float) -> bool:
    """Tell whether the sample ``sample_id`` is kept at ``rate`` (1: all, 0: none), from the
    id's first 32 bits: the same id is always kept or always left out."""
    if rate >= 1.0:
        return True
    return int(sample_id.replace("-", "")[:8], 16) / 2**32 < rate
