"""A2E learn records and messages: validation, wire round trips, errors that quote no value."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from learnstream.streams.a2e.messages import (
    AdaptQuery,
    LearnAdaptResponse,
    LearnFeedbackRequest,
    LearnStatsRequest,
)
from learnstream.streams.a2e.models import Experience, Feedback, SkillPerformanceRecord
from learnstream.streams.a2e.wire import describe, encode, parse_request, parse_response
from learnstream.streams.dlq.errors import InvalidEvent

SECRET = "jane.doe@example.com"


def feedback(**overrides: Any) -> dict[str, Any]:
    base = {
        "correlation_id": "req_123",
        "polarity": "POSITIVE",
        "score": 0.9,
        "dimension": "CORRECTNESS",
        "confidence": 0.95,
        "source": "HUMAN",
        "comment": "Correct answer",
        "rated_turn": {"prompt": "What is 2+2?", "response": "4"},
    }
    return base | overrides


def errors_of(data: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        Feedback.model_validate(data)
    return describe(caught.value)


def test_seed_feedback_validates_with_defaults() -> None:
    fb = Feedback.model_validate(feedback(dimension="TONE"))
    assert (fb.polarity, fb.score, fb.dimension, fb.source) == ("POSITIVE", 0.9, "TONE", "HUMAN")
    minimal = Feedback(correlation_id="c-1", polarity="NEUTRAL", score=0.0)
    assert (minimal.confidence, minimal.source, minimal.rated_turn) == (1.0, "HUMAN", None)


def test_corrective_without_correction_is_rejected() -> None:
    message = errors_of(feedback(polarity="CORRECTIVE", correction=None))
    assert message == "message: Value error, correction is required when polarity is CORRECTIVE"
    assert errors_of(feedback(polarity="CORRECTIVE", correction="")).endswith("CORRECTIVE")
    ok = Feedback.model_validate(feedback(polarity="CORRECTIVE", correction="5", score=-0.5))
    assert ok.correction == "5"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("score", 1.01, "score: Input should be less than or equal to 1"),
        ("score", -1.5, "score: Input should be greater than or equal to -1"),
        ("confidence", -0.01, "confidence: Input should be greater than or equal to 0"),
        ("confidence", 1.2, "confidence: Input should be less than or equal to 1"),
        ("score", float("nan"), "score: Input should be a finite number"),
    ],
)
def test_score_and_confidence_bounds(field: str, value: float, expected: str) -> None:
    assert errors_of(feedback(**{field: value})) == expected


def test_bounds_are_inclusive() -> None:
    for score in (-1.0, 1.0):
        assert Feedback.model_validate(feedback(score=score, confidence=0.0)).score == score


@pytest.mark.parametrize(
    "bad",
    [
        {"polarity": SECRET},
        {"dimension": SECRET},
        {"source": SECRET},
        {"score": SECRET},
        {"correlation_id": f"has space {SECRET}"},
        {SECRET: 1},
        {"rated_turn": {"prompt": SECRET}},
    ],
)
def test_errors_name_the_field_never_the_value(bad: dict[str, Any]) -> None:
    message = errors_of(feedback(**bad))
    assert SECRET not in message
    assert message.split(":")[0] in {*bad, "<key>", "rated_turn.response"}


def test_enum_errors_list_what_is_accepted() -> None:
    assert errors_of(feedback(polarity="GOOD")) == (
        "polarity: Input should be 'POSITIVE', 'NEGATIVE', 'NEUTRAL' or 'CORRECTIVE'"
    )


def test_experience_and_record() -> None:
    exp = Experience.model_validate(
        {"state": {"count": 0}, "action": {"type": "inc"}, "reward": 1.0, "next_state": {}}
    )
    assert (exp.done, exp.reward) == (False, 1.0)
    with pytest.raises(ValidationError):
        Experience.model_validate({"state": {}, "action": {}, "reward": float("inf")})
    rec = SkillPerformanceRecord(name="my_skill", calls_total=3, calls_success=2, calls_failed=1)
    assert rec.avg_score == 0.0
    with pytest.raises(ValidationError):
        SkillPerformanceRecord(name="has space")


def test_request_round_trip_and_defaults() -> None:
    req = LearnFeedbackRequest(
        correlation_id="r-1", payload={"feedbacks": [Feedback.model_validate(feedback())]}
    )
    assert parse_request(encode(req)) == req
    stats = parse_request(b'{"type": "learn/stats/req", "correlation_id": "r-2"}')
    assert isinstance(stats, LearnStatsRequest)
    assert (stats.payload.skill_name, stats.payload.tool_name) == (None, None)
    state_with_null = {
        "type": "learn/experience/req",
        "correlation_id": "r-3",
        "payload": {
            "experiences": [{"state": {"x": None}, "action": {}, "reward": 0, "next_state": {}}]
        },
    }
    exp = parse_request(state_with_null)
    assert parse_request(encode(exp)) == exp  # a JSON null inside a state survives


@pytest.mark.parametrize(
    ("data", "reason", "text"),
    [
        (b"{not json " + SECRET.encode(), "invalid_json", "not valid JSON"),
        ({"type": SECRET, "correlation_id": "r"}, "schema_violation", "learn/feedback/req"),
        ({"correlation_id": "r"}, "schema_violation", "message: the message has no type"),
        (
            {"type": "learn/feedback/req", "correlation_id": "r", "payload": {"feedbacks": []}},
            "schema_violation",
            "payload.feedbacks: List should have at least 1 item",
        ),
        (
            {"type": "learn/adapt/req", "correlation_id": "r", "payload": {"strategy": SECRET}},
            "schema_violation",
            "'softmax', 'thompson' or 'custom'",
        ),
    ],
)
def test_bad_requests_raise_invalid_event(data: Any, reason: str, text: str) -> None:
    with pytest.raises(InvalidEvent) as caught:
        parse_request(data)
    assert caught.value.reason == reason
    assert text in caught.value.detail
    assert SECRET not in str(caught.value)


def test_response_is_ok_with_payload_or_error_without() -> None:
    ok = LearnAdaptResponse(correlation_id="r", payload={"records": [{"name": "a"}]})
    assert parse_response(encode(ok)) == ok
    failed = LearnAdaptResponse(
        correlation_id="r", ok=False, error={"code": "unknown_strategy", "message": "no such"}
    )
    assert parse_response(encode(failed)).error == failed.error
    with pytest.raises(ValidationError, match="ok=true and a payload"):
        LearnAdaptResponse(correlation_id="r", ok=False, payload={"records": []})
    with pytest.raises(ValidationError, match="ok=true and a payload"):
        LearnAdaptResponse(correlation_id="r")


def test_adapt_query_defaults_to_ucb1() -> None:
    assert AdaptQuery().strategy == "ucb1"
    assert AdaptQuery(strategy="softmax", params={"temperature": 0.1}).params["temperature"] == 0.1
