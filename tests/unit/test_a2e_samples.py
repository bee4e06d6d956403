"""Feedback -> dialog_response sample, DPO pair and reward sample; samples are MPLP-valid."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from jsonschema import Draft7Validator

from learnstream.streams.a2e.models import Feedback
from learnstream.streams.a2e.samples import build_dialog_response, dialog_pair, quality_label
from learnstream.streams.encoding.codecs import AvroSampleCodec
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.pii import build_anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy
from learnstream.streams.samples.ids import derived_uuid, is_uuid4
from learnstream.streams.samples.pairs import PreferencePair
from learnstream.streams.samples.sample import FAMILIES, LearningSample, family_errors
from tests.conftest import mplp_schema_dir
from tests.support.mplp_learning import learning_validators, mplp_errors

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TURN = {"prompt": "What is 2+2?", "response": "4"}


def fb(**overrides: Any) -> Feedback:
    base: dict[str, Any] = {
        "correlation_id": "req_123",
        "polarity": "POSITIVE",
        "score": 0.9,
        "rated_turn": TURN,
    }
    return Feedback.model_validate(base | overrides)


FEEDBACKS = [
    fb(),
    fb(polarity="NEGATIVE", score=-0.8, source="ENV", comment="wrong"),
    fb(polarity="NEUTRAL", score=0.0, source="SELF", rated_turn=None, dimension="TONE"),
    fb(polarity="CORRECTIVE", score=-0.5, correction="5", correction_span={"start": 0, "end": 1}),
    fb(correlation_id="0B8E2F36-8E4B-4C1D-9C39-5A0F3B0D6E11", annotator_id="ann-7"),
]


@pytest.fixture(scope="module")
def validators() -> dict[str, Draft7Validator]:
    return learning_validators(mplp_schema_dir() / "learning")


def test_dialog_response_is_a_family() -> None:
    assert "dialog_response" in FAMILIES


@pytest.mark.parametrize("feedback", FEEDBACKS, ids=lambda f: f.polarity)
def test_samples_validate_against_mplp_and_ours(
    feedback: Feedback, validators: dict[str, Draft7Validator]
) -> None:
    sample = build_dialog_response(feedback, NOW).to_dict()
    assert mplp_errors(validators, sample) == []
    assert validate_sample(sample) == []
    anonymized = apply_privacy(sample, build_anonymizer(PrivacyConfig()))[0]
    assert validate_sample(anonymized) == []
    assert family_errors(LearningSample.model_validate(anonymized)) == []
    assert AvroSampleCodec().decode(AvroSampleCodec().encode(sample)) == sample


def test_mapping_of_a_human_correction() -> None:
    sample = build_dialog_response(FEEDBACKS[3], NOW)
    assert sample.sample_family == "dialog_response"
    assert sample.input == {
        "correlation_id": "req_123",
        "prompt": "What is 2+2?",
        "dimension": "CORRECTNESS",
    }
    assert sample.output == {"response": "4"}
    assert sample.feedback.model_dump() == {
        "source": "user",
        "type": "correction",
        "details": {
            "polarity": "CORRECTIVE",
            "score": -0.5,
            "dimension": "CORRECTNESS",
            "confidence": 1.0,
            "correction": "5",
            "correction_span": {"start": 0, "end": 1},
        },
        "quality_label": "poor",
    }
    assert sample.meta.quality_score == 0.25
    assert sample.meta.human_feedback_label == "rejected"
    assert sample.meta.source_event_ids == [derived_uuid("req_123")]
    assert sample.meta.id_refs == {"source_event_ids[0]": "req_123"}


@pytest.mark.parametrize(
    ("feedback", "source", "kind", "label", "human"),
    [
        (FEEDBACKS[0], "user", "approval", "good", "approved"),
        (FEEDBACKS[1], "system", "rejection", "poor", "not_reviewed"),
        (FEEDBACKS[2], "system", "score", "acceptable", "not_reviewed"),
    ],
)
def test_source_polarity_and_labels(
    feedback: Feedback, source: str, kind: str, label: str, human: str
) -> None:
    sample = build_dialog_response(feedback, NOW)
    assert (sample.feedback.source, sample.feedback.type) == (source, kind)
    assert (sample.feedback.quality_label, sample.meta.human_feedback_label) == (label, human)
    assert sample.meta.quality_score == pytest.approx((feedback.score + 1) / 2)


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (1.0, "good"),
        (0.34, "good"),
        (0.33, "acceptable"),
        (0.0, "acceptable"),
        (-0.33, "acceptable"),
        (-0.34, "poor"),
        (-1.0, "poor"),
    ],
)
def test_quality_label_thresholds(score: float, label: str) -> None:
    assert quality_label(score) == label


def test_uuid_correlation_ids_are_kept_and_ids_are_stable() -> None:
    sample = build_dialog_response(FEEDBACKS[4], NOW)
    assert sample.meta.source_event_ids == ["0b8e2f36-8e4b-4c1d-9c39-5a0f3b0d6e11"]
    assert sample.meta.id_refs is None
    assert "ann-7" not in str(sample.to_dict())  # the annotator stays out
    again = build_dialog_response(FEEDBACKS[4], datetime(2027, 1, 1, tzinfo=UTC))
    assert again.sample_id == sample.sample_id
    assert is_uuid4(sample.sample_id)
    other_dimension = build_dialog_response(fb(dimension="SAFETY"), NOW)
    assert other_dimension.sample_id != build_dialog_response(fb(), NOW).sample_id


def test_corrective_feedback_yields_a_dpo_pair() -> None:
    pair = FEEDBACKS[3].to_preference_pair(NOW, project_id="proj-1")
    assert isinstance(pair, PreferencePair)
    sample = build_dialog_response(FEEDBACKS[3], NOW, project_id="proj-1")
    assert (pair.kind, pair.family, pair.intent_id) == ("feedback", "dialog_response", "req_123")
    assert (pair.chosen, pair.rejected) == ({"response": "5"}, {"response": "4"})
    assert pair.prompt == sample.input
    assert pair.chosen_sample_id == pair.rejected_sample_id == sample.sample_id
    assert pair.project_id == derived_uuid("proj-1") == sample.meta.project_id
    assert pair.margin == 0.75
    assert is_uuid4(pair.pair_id)
    assert PreferencePair.model_validate_json(pair.to_json()) == pair


def test_negative_with_a_correction_yields_a_pair_and_others_none() -> None:
    negative = fb(polarity="NEGATIVE", score=-1.0, correction="four")
    pair = negative.to_preference_pair(NOW)
    assert pair is not None
    assert pair.chosen == {"response": "four"}
    assert pair.margin == 1.0
    assert fb(polarity="NEGATIVE", score=-1.0).to_preference_pair(NOW) is None
    assert fb(correction="4!").to_preference_pair(NOW) is None  # POSITIVE: nothing to prefer
    assert fb(polarity="NEUTRAL", score=0.0, correction="x").to_preference_pair(NOW) is None
    assert fb(polarity="CORRECTIVE", score=0, correction="4").to_preference_pair(NOW) is None
    no_turn = fb(polarity="CORRECTIVE", score=-1, correction="5", rated_turn=None)
    assert no_turn.to_preference_pair(NOW) is None


def test_pair_is_built_from_the_anonymized_sample() -> None:
    feedback = fb(polarity="CORRECTIVE", score=-1, correction="Mail jane.doe@example.com")
    sample = build_dialog_response(feedback, NOW).to_dict()
    anonymized = LearningSample.model_validate(
        apply_privacy(sample, build_anonymizer(PrivacyConfig()))[0]
    )
    pair = dialog_pair(anonymized, NOW)
    assert pair is not None
    assert "jane.doe" not in pair.to_json().decode()
    assert pair.chosen == {"response": "Mail <EMAIL_ADDRESS>"}


def test_reward_sample() -> None:
    reward = FEEDBACKS[1].to_reward_sample()
    assert reward is not None
    assert reward.model_dump() == {
        "prompt": "What is 2+2?",
        "response": "4",
        "reward": -0.8,
        "dimension": "CORRECTNESS",
        "source": "ENV",
        "correlation_id": "req_123",
    }
    assert FEEDBACKS[2].to_reward_sample() is None  # no rated turn: nothing to score
