"""LearnAPI over in-memory transports: all four operations, correlation, time-outs, errors."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import UTC, datetime
from itertools import count

import pytest

from learnstream.streams.a2e.client import LearnAPI, LearnFailed, LearnProtocolError, LearnTimeout
from learnstream.streams.a2e.correlate import Correlator
from learnstream.streams.a2e.messages import (
    RESPONSE_OF,
    AdaptResult,
    ExperienceResult,
    FeedbackResult,
    LearnAdaptRequest,
    LearnExperienceRequest,
    LearnFeedbackRequest,
    LearnRequest,
    LearnResponse,
    LearnStatsRequest,
    StatsResult,
)
from learnstream.streams.a2e.models import Experience
from learnstream.streams.a2e.samples import build_dialog_response
from learnstream.streams.a2e.stats import SkillStats
from learnstream.streams.a2e.strategies import rank
from learnstream.streams.a2e.wire import encode, parse_request, parse_response

NOW = datetime(2026, 3, 1, tzinfo=UTC)


class FakeHost:
    """What the worker will do, from the pure core, answering over bytes like a broker."""

    def __init__(self) -> None:
        self.skills: dict[str, SkillStats] = defaultdict(SkillStats)
        self.experiences: list[Experience] = []
        self.seen: list[LearnRequest] = []

    def answer(self, data: bytes) -> bytes:
        request = parse_request(data)
        self.seen.append(request)
        payload = self.handle(request)
        response = RESPONSE_OF[request.type](correlation_id=request.correlation_id, payload=payload)
        return encode(response)  # type: ignore[arg-type]

    def handle(
        self, request: LearnRequest
    ) -> FeedbackResult | ExperienceResult | AdaptResult | StatsResult:
        if isinstance(request, LearnFeedbackRequest):
            for fb in request.payload.feedbacks:
                if fb.skill_name:
                    self.skills[fb.skill_name].add_score(fb.score)
                    self.skills[fb.skill_name].add_call(fb.score > 0, 10.0)
            ids = [build_dialog_response(f, NOW).sample_id for f in request.payload.feedbacks]
            return FeedbackResult(accepted=len(ids), details={"sample_ids": ids})
        if isinstance(request, LearnExperienceRequest):
            self.experiences += request.payload.experiences
            return ExperienceResult(stored=len(request.payload.experiences))
        records = [stats.record(name) for name, stats in sorted(self.skills.items())]
        if isinstance(request, LearnAdaptRequest):
            query = request.payload
            return AdaptResult(records=rank(records, query.strategy, query.params, seed=1))
        assert isinstance(request, LearnStatsRequest)
        wanted = request.payload.skill_name
        return StatsResult(skills=[r for r in records if wanted in (None, r.name)])


class DirectTransport:
    def __init__(self, host: FakeHost) -> None:
        self.host = host

    async def request(self, message: LearnRequest) -> LearnResponse:
        return parse_response(self.host.answer(encode(message)))


class TopicTransport:
    """Requests on one queue, every response on a shared one, matched by correlation id."""

    def __init__(self, host: FakeHost, timeout: float = 1.0, batch: int = 1) -> None:
        self.host, self.batch = host, batch
        self.correlator = Correlator(timeout)
        self.requests: list[bytes] = []
        self.sent = asyncio.Event()

    async def request(self, message: LearnRequest) -> LearnResponse:
        return await self.correlator.exchange(message, self._send)

    async def _send(self, message: LearnRequest) -> None:
        self.requests.append(encode(message))
        self.sent.set()
        if len(self.requests) >= self.batch:  # answer a batch, newest first
            pending, self.requests = self.requests, []
            for data in reversed(pending):
                self.correlator.deliver(parse_response(self.host.answer(data)))


class SilentTransport:
    async def request(self, message: LearnRequest) -> LearnResponse:
        await asyncio.sleep(10)
        raise AssertionError("unreachable")


def sequential_ids() -> LearnAPI:
    numbers = count()
    return LearnAPI(DirectTransport(FakeHost()), new_id=lambda: f"req-{next(numbers)}")


async def test_all_four_operations_round_trip() -> None:
    host = FakeHost()
    learn = LearnAPI(DirectTransport(host))
    resp = await learn.feedback(
        polarity="POSITIVE",
        score=0.9,
        dimension="CORRECTNESS",
        confidence=0.95,
        prompt="What is 2+2?",
        response="4",
        source="HUMAN",
        comment="Correct answer",
        skill_name="my_skill",
    )
    assert resp.accepted == 1
    assert len(resp.details["sample_ids"]) == 1
    sent = host.seen[0]
    assert isinstance(sent, LearnFeedbackRequest)
    fb = sent.payload.feedbacks[0]
    assert fb.rated_turn is not None
    assert fb.rated_turn.response == "4"
    assert fb.correlation_id == sent.correlation_id  # defaults to the message id
    stored = await learn.experience(
        [
            {
                "state": {"count": 0},
                "action": {"type": "inc"},
                "reward": 1.0,
                "next_state": {"count": 1},
                "done": False,
            },
            Experience(state={}, action={}, reward=0.0, next_state={}, done=True),
        ]
    )
    assert stored == 2
    assert host.experiences[0].state == {"count": 0}
    await learn.reward(skill_name="other_skill", value=-0.5, correlation_id="req_123")
    reward = host.seen[-1]
    assert isinstance(reward, LearnFeedbackRequest)
    assert reward.payload.feedbacks[0].model_dump(include={"polarity", "score", "source"}) == {
        "polarity": "NEGATIVE",
        "score": -0.5,
        "source": "ENV",
    }
    records = await learn.adapt(skill_name="my_skill", strategy="ucb1")
    assert [r.name for r in records] == ["my_skill", "other_skill"]  # 1/1 beats 0/1
    skills, tools = await learn.stats(skill_name="my_skill")
    assert [(s.name, s.calls_total, s.avg_score) for s in skills] == [("my_skill", 1, 0.9)]
    assert tools == []


async def test_responses_out_of_order_reach_their_callers() -> None:
    transport = TopicTransport(FakeHost(), batch=3)
    learn = LearnAPI(transport)
    results = await asyncio.gather(
        learn.experience([{"state": {}, "action": {}, "reward": 1, "next_state": {}}]),
        learn.stats(),
        learn.experience([{"state": {}, "action": {}, "reward": 1, "next_state": {}}] * 2),
    )
    assert results == [1, ([], []), 2]
    assert transport.correlator.in_flight == 0


async def test_a_late_or_foreign_response_is_dropped() -> None:
    correlator = Correlator(1.0)
    stray = parse_response({"type": "learn/stats/resp", "correlation_id": "nobody", "payload": {}})
    assert correlator.deliver(stray) is False
    assert correlator.unmatched == 1


async def test_timeout_is_an_explicit_error() -> None:
    learn = LearnAPI(SilentTransport(), timeout=0.05)
    with pytest.raises(LearnTimeout, match=r"no learn/stats/resp within 0.05 s"):
        await learn.stats()
    transport = TopicTransport(FakeHost(), timeout=0.05, batch=2)  # never answers a lone one
    with pytest.raises(LearnTimeout, match=r"no learn/adapt/resp within 0.05 s"):
        await LearnAPI(transport).adapt()
    assert transport.correlator.in_flight == 0  # nothing left waiting
    assert isinstance(LearnTimeout("x"), TimeoutError)


async def test_a_duplicate_correlation_id_in_flight_is_refused() -> None:
    transport = TopicTransport(FakeHost(), timeout=5, batch=2)
    learn = LearnAPI(transport, new_id=lambda: "same")
    first = asyncio.create_task(learn.stats())
    await asyncio.wait_for(transport.sent.wait(), 1)
    assert transport.correlator.in_flight == 1
    with pytest.raises(ValueError, match="already in flight"):
        await learn.stats()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert transport.correlator.in_flight == 0  # a cancelled wait leaves nothing behind


class WrongAnswer:
    def __init__(self, response: dict[str, object]) -> None:
        self.response = response

    async def request(self, message: LearnRequest) -> LearnResponse:
        return parse_response({"correlation_id": message.correlation_id} | self.response)


async def test_errors_and_mismatched_answers() -> None:
    failed = WrongAnswer(
        {
            "type": "learn/adapt/resp",
            "ok": False,
            "error": {"code": "unknown_strategy", "message": "no custom strategy installed"},
        }
    )
    with pytest.raises(LearnFailed, match="unknown_strategy: no custom strategy") as caught:
        await LearnAPI(failed).adapt(strategy="custom")
    assert caught.value.code == "unknown_strategy"
    wrong_kind = WrongAnswer({"type": "learn/stats/resp", "payload": {}})
    with pytest.raises(LearnProtocolError, match="learn/adapt/req is not its response"):
        await LearnAPI(wrong_kind).adapt()

    class OtherId:
        async def request(self, message: LearnRequest) -> LearnResponse:
            return parse_response(
                {"type": "learn/stats/resp", "correlation_id": "x", "payload": {}}
            )

    with pytest.raises(LearnProtocolError):
        await LearnAPI(OtherId()).stats()


async def test_invalid_arguments_fail_before_sending() -> None:
    host = FakeHost()
    learn = LearnAPI(DirectTransport(host))
    with pytest.raises(ValueError, match="correction is required when polarity is CORRECTIVE"):
        await learn.feedback(polarity="CORRECTIVE", score=-1, prompt="p", response="jane@x.org")
    with pytest.raises(ValueError, match="invalid Feedback: score") as caught:
        await learn.reward("my_skill", 7.0, "req-1")
    assert "7.0" not in str(caught.value)
    with pytest.raises(ValueError, match="invalid Experience: reward"):
        await learn.experience([{"state": {}, "action": {}, "reward": "secret", "next_state": {}}])
    with pytest.raises(ValueError, match="invalid AdaptQuery: strategy"):
        await learn.adapt(strategy="secret")
    assert host.seen == []


async def test_ids_are_the_callers_choice() -> None:
    learn = sequential_ids()
    await learn.stats()
    await learn.stats()
    transport = learn._client
    assert isinstance(transport, DirectTransport)
    assert [m.correlation_id for m in transport.host.seen] == ["req-0", "req-1"]
