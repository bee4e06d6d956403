"""Feedback as a ``dialog_response`` LearningSample, and the DPO pair such a sample yields.

Pure, like :mod:`learnstream.streams.samples.builders`: the caller passes ``now``. Mapping:

- ``source`` HUMAN -> ``feedback.source`` ``user``; ENV and SELF -> ``system``.
- ``polarity`` -> ``feedback.type``: POSITIVE approval, NEGATIVE rejection, CORRECTIVE
  correction, NEUTRAL score.
- ``meta.quality_score = (score + 1) / 2``; ``quality_label`` by thirds of the score range:
  ``good`` when score >= 1/3, ``poor`` when score <= -1/3, else ``acceptable``.
- ``meta.human_feedback_label``: HUMAN POSITIVE approved, HUMAN NEGATIVE/CORRECTIVE rejected,
  anything else not_reviewed (ENV and SELF are no human review).
- ``meta.source_event_ids``: the correlation id's UUID
(:func:`learnstream.streams.samples.ids.canonical_id`);
  ``meta.id_refs`` keeps the id as sent when it is not a UUID.
- ``annotator_id`` stays out of the sample: it names a person and teaches a model nothing.

One sample per (correlation id, dimension, source, annotator): its id is derived from them,
so a replay re-emits it and a later feedback from the same annotator replaces it.

A pair (:func:`dialog_pair`) exists only when there is something to prefer: a correction
(required by CORRECTIVE, optional on NEGATIVE) that differs from the rated response. Then
chosen = the correction, rejected = the response, and ``margin = (1 - score) / 2`` (the
corrected response is worth 1 on the quality scale, the original ``(score + 1) / 2``).
POSITIVE and NEUTRAL feedback, or any without a rated turn, yield no pair.

A reward sample (:func:`reward_of`) exists for every rated turn: the turn, reward = score.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from learnstream.streams.a2e.records import FeedbackFields, RewardSample
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.pairs import PreferencePair, pair_id
from learnstream.streams.samples.parts import PRODUCER, IdRefs, iso, present
from learnstream.streams.samples.sample import Feedback as SampleFeedback
from learnstream.streams.samples.sample import LearningSample, SampleMeta

__all__ = ["FAMILY", "build_dialog_response", "dialog_pair", "quality_label", "reward_of"]

FAMILY = "dialog_response"
_TYPE = {"POSITIVE": "approval", "NEGATIVE": "rejection", "CORRECTIVE": "correction"}
_HUMAN_LABEL = {"POSITIVE": "approved", "NEGATIVE": "rejected", "CORRECTIVE": "rejected"}
_PAIR_POLARITIES = frozenset({"CORRECTIVE", "NEGATIVE"})


def quality_label(score: float) -> str:
    """Return the quality label of a score in [-1, 1], by thirds of the range."""
    if score >= 1 / 3:
        return "good"
    return "poor" if score <= -1 / 3 else "acceptable"


def _details(feedback: FeedbackFields) -> dict[str, Any]:
    return present(
        feedback.model_dump(
            include={"polarity", "score", "dimension", "confidence", "comment", "correction"}
        )
        | {"correction_span": feedback.correction_span}
    )


def _meta(feedback: FeedbackFields, project_id: str | None) -> SampleMeta:
    refs = IdRefs()
    human = feedback.source == "HUMAN"
    return SampleMeta(
        source_event_ids=[refs.uuid("source_event_ids[0]", feedback.correlation_id)],
        project_id=refs.uuid("project_id", project_id) if project_id else None,
        human_feedback_label=_HUMAN_LABEL.get(feedback.polarity, "not_reviewed")
        if human
        else "not_reviewed",
        producer=PRODUCER,
        quality_score=(feedback.score + 1) / 2,
        id_refs=dict(refs) or None,
    )


def _source_key(feedback: FeedbackFields) -> str:
    parts = (feedback.correlation_id, feedback.dimension, feedback.source, feedback.annotator_id)
    return "\x1f".join(part or "" for part in parts)


def build_dialog_response(
    feedback: FeedbackFields, now: datetime, *, project_id: str | None = None
) -> LearningSample:
    """Build the dialog_response sample of one feedback (the rated turn, if any, inside).

    ``meta.project_id`` is the canonical id of ``project_id``, else of the feedback's own.
    """
    turn = feedback.rated_turn
    return LearningSample(
        sample_id=sample_id(FAMILY, _source_key(feedback)),
        sample_family=FAMILY,
        created_at=iso(now),
        input=present(
            {
                "correlation_id": feedback.correlation_id,
                "prompt": turn.prompt if turn else None,
                "dimension": feedback.dimension,
                "skill_name": feedback.skill_name,
                "tool_name": feedback.tool_name,
            }
        ),
        output=present({"response": turn.response if turn else None}),
        feedback=SampleFeedback(
            source="user" if feedback.source == "HUMAN" else "system",
            type=_TYPE.get(feedback.polarity, "score"),
            details=_details(feedback),
            quality_label=quality_label(feedback.score),
        ),
        meta=_meta(feedback, project_id or feedback.project_id),
    )


def dialog_pair(sample: LearningSample, now: datetime) -> PreferencePair | None:
    """Return the DPO pair of a dialog_response sample (after privacy), or None.

    Built from the sample, not the feedback, so it holds nothing the anonymized sample
    does not. Like a correction pair, one sample holds both sides (kind ``feedback``).
    """
    details = sample.feedback.details if isinstance(sample.feedback.details, dict) else {}
    correction, response = details.get("correction"), sample.output.get("response")
    if details.get("polarity") not in _PAIR_POLARITIES or not isinstance(response, str):
        return None
    if not isinstance(correction, str) or not correction or correction == response:
        return None
    return PreferencePair(
        pair_id=pair_id("feedback", sample.sample_id, sample.sample_id),
        kind="feedback",
        intent_id=sample.input.get("correlation_id"),
        project_id=sample.meta.project_id,
        family="dialog_response",
        prompt=dict(sample.input),
        chosen={"response": correction},
        rejected={"response": response},
        chosen_sample_id=sample.sample_id,
        rejected_sample_id=sample.sample_id,
        event_time=sample.meta.event_time or sample.created_at,
        created_at=iso(now),
        margin=(1 - float(details["score"])) / 2,
    )


def reward_of(sample: LearningSample, feedback: FeedbackFields) -> RewardSample | None:
    """Return the reward sample of ``feedback``'s dialog_response sample (after privacy), or
    None when the feedback rates no turn.

    The prompt, response and correlation id come from the sample, like the pair's, so it
    holds nothing the anonymized sample does not; reward, dimension and source are the
    feedback's.
    """
    if feedback.rated_turn is None:
        return None
    return RewardSample(
        prompt=str(sample.input.get("prompt", "")),
        response=str(sample.output.get("response", "")),
        reward=feedback.score,
        dimension=feedback.dimension,
        source=feedback.source,
        correlation_id=sample.input["correlation_id"],
    )
