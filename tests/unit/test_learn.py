"""The learn agent without a broker: answers, derived records, DLQ, and no value leaking.

Like tests/unit/test_agents.py: ``agent.test_context()``, real (memory) tables, the producer
replaced by one mock per topic.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from unittest.mock import AsyncMock

import faust
import orjson
import pytest
from aiokafka import TopicPartition
from aiokafka.errors import KafkaConnectionError
from prometheus_client import generate_latest

from learnstream.agents.learning.agent import error_response, strategy_params
from learnstream.agents.learning.samples import anonymize_record
from learnstream.agents.learning.stats import SkillLabels
from learnstream.agents.learning.view import StatsReader
from learnstream.agents.runtime import Runtime
from learnstream.agents.wiring import wire
from learnstream.streams.a2e.stats_view import StatsView
from learnstream.streams.config.settings import A2ESettings, Settings
from learnstream.streams.io.app import create_app
from learnstream.streams.privacy.config import privacy_config
from learnstream.streams.privacy.pii import build_anonymizer
from learnstream.streams.samples.ids import canonical_id
from tests.support.apps import close_consumer_loop
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)
from tests.support.offsets import FakeEnds
from tests.support.outputs import Feed, mock_outputs

EMAIL = "dana.leak@example.org"
OUTPUTS = ("learn_responses", "preference_pairs", "reward_samples", "experiences")


def test_skill_labels_are_bounded() -> None:
    first_two = SkillLabels((), 2)
    assert [first_two(n) for n in ("a", "b", "c", "a")] == ["a", "b", "other", "a"]
    assert SkillLabels((), 5)("dana@example.org") == "other"  # input values never labels
    assert SkillLabels((), 5)("+14155550177") == "other"
    fixed = SkillLabels(("x",), 5)
    assert [fixed(n) for n in ("x", "y")] == ["x", "other"]


def test_error_response_needs_a_readable_id() -> None:
    assert error_response(b"{oops", "invalid_request", "m") is None
    assert error_response(b'{"type": "learn/adapt/req"}', "invalid_request", "m") is None
    assert error_response(b'{"correlation_id": "a b"}', "invalid_request", "m") is None
    adapt = error_response(
        b'{"type": "learn/adapt/req", "correlation_id": "c1"}', "invalid_request", "bad"
    )
    assert adapt is not None
    assert adapt.type == "learn/adapt/resp"
    assert (adapt.ok, adapt.error and adapt.error.code) == (False, "invalid_request")
    unknown = error_response(b'{"type": "x", "correlation_id": "c2"}', "internal", "m")
    assert unknown is not None
    assert unknown.type == "learn/feedback/resp"


def test_strategy_params_take_settings_then_the_request() -> None:
    a2e = A2ESettings(ucb1_c=0.7, epsilon_c=4.0, softmax_c=0.3)
    assert strategy_params("ucb1", a2e, {}) == {"c": 0.7}
    assert strategy_params("epsilon_greedy", a2e, {}) == {"c": 4.0}
    assert strategy_params("epsilon_greedy", a2e, {"epsilon": 0.9}) == {"c": 4.0, "epsilon": 0.9}
    assert strategy_params("softmax", a2e, {}) == {"c": 0.3}
    assert strategy_params("thompson", a2e, {}) == {}
    assert strategy_params("custom", a2e, {"k": 1.0}) == {"k": 1.0}
    fixed = A2ESettings(epsilon=0.2, temperature=0.3)
    assert strategy_params("epsilon_greedy", fixed, {})["epsilon"] == 0.2
    assert strategy_params("softmax", fixed, {})["temperature"] == 0.3
    assert "epsilon" not in strategy_params("epsilon_greedy", fixed, {"c": 2.0})  # asks decay


def test_a2e_defaults_match_the_strategies() -> None:
    from learnstream.streams.a2e.stats import DEFAULT_HALF_LIFE_S
    from learnstream.streams.a2e.strategies import DEFAULTS

    a2e = A2ESettings()
    assert (a2e.ucb1_c, a2e.epsilon_c, a2e.softmax_c) == (
        DEFAULTS["ucb1"]["c"], DEFAULTS["epsilon_greedy"]["c"], DEFAULTS["softmax"]["c"],
    )  # fmt: skip
    assert (a2e.epsilon, a2e.temperature, a2e.half_life_s) == (None, None, DEFAULT_HALF_LIFE_S)
    assert a2e.response_timeout.total_seconds() == 10


def test_anonymize_record_masks_pii_and_drops_opted_out_paths() -> None:
    anonymizer = build_anonymizer(privacy_config(Settings()))
    record = {"state": {"note": f"mail {EMAIL}", "files": [{"path": "app/.env"}]}, "reward": 1}
    clean, found = anonymize_record(record, anonymizer)
    assert clean == {"state": {"note": "mail <EMAIL_ADDRESS>", "files": []}, "reward": 1}
    assert found == {"EMAIL_ADDRESS": 1}


@dataclass
class Worker:
    app: faust.App
    runtime: Runtime
    mocks: dict[str, AsyncMock]
    feed: Feed

    async def put(self, value: bytes, key: bytes = b"k") -> None:
        topic = self.runtime.settings.topics.name("learn_requests")
        await self.feed.put("learn", topic, value, key=key)

    def values(self, name: str) -> list[Any]:
        return [orjson.loads(c.kwargs["value"]) for c in self.mocks[name].await_args_list]


@pytest.fixture
async def worker(tmp_path: Any) -> AsyncIterator[Worker]:
    settings = Settings(store="memory://", sample_format="json", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings, ends=FakeEnds())
    yield Worker(app, runtime, mock_outputs(app, runtime, *OUTPUTS), Feed(app))
    close_consumer_loop(app)


def _request(kind: str, cid: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": f"learn/{kind}/req", "correlation_id": cid, "payload": payload})


async def test_feedback_yields_a_sample_pair_reward_and_stats(worker: Worker) -> None:
    feedback = {
        "correlation_id": "turn-1", "polarity": "NEGATIVE", "score": -1.0,
        "correction": f"ask {EMAIL}", "annotator_id": "ann-1", "skill_name": "search",
        "rated_turn": {"prompt": "who?", "response": "no idea"},
    }  # fmt: skip
    await worker.put(_request("feedback", "r1", {"feedbacks": [feedback]}))
    await worker.put(_request("stats", "r2", {"skill_name": "search"}))
    (sample,) = worker.values("samples")
    assert sample["sample_family"] == "dialog_response"
    assert sample["feedback"]["details"]["correction"] == "ask <EMAIL_ADDRESS>"
    (pair,) = worker.values("preference_pairs")
    assert pair["chosen"] == {"response": "ask <EMAIL_ADDRESS>"}
    (reward,) = worker.values("reward_samples")
    assert (reward["reward"], reward["sample_id"]) == (-1.0, sample["sample_id"])
    assert "ann-1" not in str([sample, pair, reward])
    first, stats = worker.values("learn_responses")
    assert first["payload"] == {"accepted": 1, "details": {"samples": 1, "pairs": 1,
                                                           "reward_samples": 1}}  # fmt: skip
    (record,) = stats["payload"]["skills"]
    assert (record["name"], record["calls_failed"], record["avg_score"]) == ("search", 1, -1.0)
    labels = {"kind": "skill", "name": "search", "outcome": "failed"}
    registry = worker.runtime.metrics.registry
    assert registry.get_sample_value("learnstream_skill_calls_total", labels) == 1


async def test_each_feedback_sample_passes_privacy_once(
    worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its pair and reward sample are made of the sample as written, not anonymized again."""
    anonymizer = worker.runtime.anonymizer
    anonymize, calls = anonymizer.anonymize_sample, []

    def counted(sample: dict[str, Any]) -> Any:
        calls.append(sample["sample_id"])
        return anonymize(sample)

    monkeypatch.setattr(anonymizer, "anonymize_sample", counted)
    feedbacks = [_corrective("turn-1", None), _corrective("turn-2", "proj-1")]
    await worker.put(_request("feedback", "r1", {"feedbacks": feedbacks}))
    samples = worker.values("samples")
    assert len(worker.values("preference_pairs")) == len(worker.values("reward_samples")) == 2
    assert sorted(calls) == sorted(s["sample_id"] for s in samples)  # once each


async def test_unknown_strategy_is_an_error_answer_not_a_dead_letter(worker: Worker) -> None:
    await worker.put(_request("adapt", "r1", {"strategy": "custom", "custom": "nope"}))
    (answer,) = worker.values("learn_responses")
    assert (answer["ok"], answer["error"]["code"]) == (False, "unknown_strategy")
    assert worker.mocks["dlq"].await_count == 0


BAD = [
    b"not json " + EMAIL.encode(),
    orjson.dumps({"type": "learn/feedback/req", "correlation_id": "c1", "payload": {
        "feedbacks": [{"correlation_id": EMAIL, "polarity": "CORRECTIVE", "score": 2,
                       "comment": EMAIL}]}}),
    orjson.dumps({"type": EMAIL, "correlation_id": "c2", "payload": {}}),
    orjson.dumps({"type": "learn/stats/req", "correlation_id": "c3",
                  "payload": {"skill_name": EMAIL + " x", EMAIL: 1}}),
]  # fmt: skip


async def test_invalid_requests_dead_letter_without_leaking(
    worker: Worker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for value in BAD:
        await worker.put(value)
    assert worker.mocks["dlq"].await_count == len(BAD)
    answers = worker.values("learn_responses")
    assert [a["correlation_id"] for a in answers] == ["c1", "c2", "c3"]
    assert all(a["error"]["code"] == "invalid_request" for a in answers)
    headers = [h for c in worker.mocks["dlq"].await_args_list for h in c.kwargs["headers"]]
    visible = "\n".join(
        [
            caplog.text,
            str(headers),
            str(answers),
            generate_latest(worker.runtime.metrics.registry).decode(),
        ]
    )
    assert EMAIL not in visible
    assert "leak" not in visible


def test_stats_keys_keep_names_with_bars() -> None:
    from learnstream.agents.learning.stats import _key, _parse

    assert _parse(_key("tool", "a|b", 3)) == ("tool", "a|b")


def test_reward_of_takes_the_anonymized_turn() -> None:
    from datetime import UTC, datetime

    from learnstream.streams.a2e.models import Feedback
    from learnstream.streams.a2e.samples import build_dialog_response, reward_of

    turn = {"prompt": f"hi {EMAIL}", "response": "hello"}
    feedback = Feedback(correlation_id="t1", polarity="POSITIVE", score=0.5, rated_turn=turn)
    sample = build_dialog_response(feedback, datetime(2026, 3, 1, tzinfo=UTC))
    anonymized = sample.model_copy(update={"input": {**sample.input, "prompt": "hi <E>"}})
    reward = reward_of(anonymized, feedback)
    assert reward is not None
    assert (reward.prompt, reward.response, reward.reward) == ("hi <E>", "hello", 0.5)
    assert reward_of(sample, feedback.model_copy(update={"rated_turn": None})) is None


def test_replay_reads_experiences_and_counts_the_unreadable() -> None:
    from learnstream.agents.cli.learn import read_experiences

    good = orjson.dumps({"state": {}, "action": {}, "reward": 1.0, "next_state": {}})
    found, bad = read_experiences([good, b"{", None])
    assert [e.reward for e in found] == [1.0]
    assert bad == 2


def _opt_out(worker: Worker, project: str) -> None:
    """Apply an opt-out as the worker's consent reader would (no broker here)."""
    record = orjson.dumps({"project_id": project, "enabled": False})
    worker.runtime.consent.apply(project.encode(), record)


def _corrective(turn: str, project: str | None) -> dict[str, Any]:
    return {
        "correlation_id": turn, "polarity": "CORRECTIVE", "score": -0.5, "correction": "fixed",
        "rated_turn": {"prompt": "q", "response": "wrong"}, "project_id": project,
    }  # fmt: skip


async def test_an_opted_out_project_gets_no_sample_pair_or_reward(worker: Worker) -> None:
    _opt_out(worker, "proj-quiet")
    feedbacks = [
        _corrective("turn-quiet", "proj-quiet"),
        _corrective("turn-open", "proj-open"),
        _corrective("turn-none", None),
    ]
    await worker.put(_request("feedback", "r1", {"feedbacks": feedbacks}))
    samples = worker.values("samples")
    assert sorted(s["input"]["correlation_id"] for s in samples) == ["turn-none", "turn-open"]
    open_sample = next(s for s in samples if s["input"]["correlation_id"] == "turn-open")
    assert open_sample["meta"]["project_id"] == canonical_id("proj-open")
    assert open_sample["meta"]["id_refs"]["project_id"] == "proj-open"
    kept = {s["sample_id"] for s in samples}
    pairs, rewards = worker.values("preference_pairs"), worker.values("reward_samples")
    assert {p["chosen_sample_id"] for p in pairs} == kept
    assert {p["project_id"] for p in pairs} == {canonical_id("proj-open"), None}
    assert {r["sample_id"] for r in rewards} == kept
    (answer,) = worker.values("learn_responses")
    assert answer["payload"] == {"accepted": 3, "details": {"samples": 2, "pairs": 2,
                                                            "reward_samples": 2}}  # fmt: skip
    registry = worker.runtime.metrics.registry
    assert registry.get_sample_value("learnstream_opted_out_total", {"reason": "project"}) == 1


async def test_consent_matches_any_spelling_of_the_project(worker: Worker) -> None:
    project = "3F2A9C1E-7B4D-4E8A-9C2B-1D5E6F7A8B9C"
    _opt_out(worker, project.lower())
    await worker.put(_request("feedback", "r1", {"feedbacks": [_corrective("t", project)]}))
    assert worker.values("samples") == []
    assert worker.values("preference_pairs") == worker.values("reward_samples") == []


async def test_an_opted_out_project_gets_no_experiences(worker: Worker) -> None:
    _opt_out(worker, "proj-quiet")
    step = {"state": {"n": 0}, "action": {"a": 1}, "reward": 1.0, "next_state": {"n": 1}}
    experiences = [
        step | {"project_id": "proj-quiet"},
        step | {"project_id": "proj-open", "reward": 0.5},
        step | {"reward": 0.25},
    ]
    await worker.put(_request("experience", "r1", {"experiences": experiences}))
    stored = worker.values("experiences")
    assert [(e["reward"], e.get("project_id")) for e in stored] == [
        (0.5, "proj-open"), (0.25, None),
    ]  # fmt: skip
    assert "project_id" not in stored[1]  # absent, not null, when the request named none
    (answer,) = worker.values("learn_responses")
    assert answer["payload"] == {"stored": 2}
    registry = worker.runtime.metrics.registry
    assert registry.get_sample_value("learnstream_opted_out_total", {"reason": "project"}) == 1


async def test_a_feedback_replayed_after_a_crash_counts_once(worker: Worker) -> None:
    feedback = {"correlation_id": "t1", "polarity": "POSITIVE", "score": 1.0,
                "skill_name": "search"}  # fmt: skip
    request = _request("feedback", "r1", {"feedbacks": [feedback, feedback]})
    await worker.put(request)
    # A crash before the offset commit: the table kept the change, the record comes again.
    worker.runtime.progress.forget(list(worker.runtime.progress.partitions()))
    worker.feed.offsets.clear()
    await worker.put(request)
    assert len(worker.values("samples")) == 4  # processed twice: samples dedupe by id
    await worker.put(_request("stats", "r2", {"skill_name": "search"}))
    stats = worker.values("learn_responses")[-1]
    (record,) = stats["payload"]["skills"]
    assert (record["calls_total"], record["calls_success"]) == (2, 2)  # two items, once each
    labels = {"kind": "skill", "name": "search", "outcome": "success"}
    registry = worker.runtime.metrics.registry
    assert registry.get_sample_value("learnstream_skill_calls_total", labels) == 2


class _Asker:
    """An end-offset client that fails as a broker (or a stopped client) would."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def end_offsets(self, partitions: Any) -> Any:
        raise self.error


def _reader(asker: Any, assigned: bool) -> tuple[StatsReader, list[str]]:
    reasons: list[str] = []
    reader = StatsReader(None, "stats-changelog", StatsView(), reasons.append)  # type: ignore[arg-type]
    reader._started.set()  # as if running, without its Kafka consumers
    reader._partitions = [TopicPartition("stats-changelog", 0)]
    reader._asker = asker
    if assigned:
        reader._assigned.set()
    return reader, reasons


@pytest.mark.parametrize(
    "error",
    [
        ConnectionError("peer 10.0.0.7 reset"),
        RuntimeError("consumer 10.0.0.7 is stopped"),
        KafkaConnectionError("no broker at 10.0.0.7"),
    ],
)
async def test_a_broker_error_while_catching_up_answers_from_what_the_view_has(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    reader, reasons = _reader(_Asker(error), assigned=True)
    with caplog.at_level(logging.WARNING, "learnstream"):
        assert await reader.caught_up(within=1.0) is False
    assert reasons == ["broker_error"]
    assert type(error).__name__ in caplog.text
    assert "10.0.0.7" not in caplog.text  # the type only, never the text


async def test_an_unassigned_view_answers_at_once() -> None:
    reader, reasons = _reader(_Asker(AssertionError("must not be asked")), assigned=False)
    loop = asyncio.get_running_loop()
    start = loop.time()
    assert await reader.caught_up(within=2.0) is False
    assert loop.time() - start < 0.1  # no wait for the full catch-up time
    assert reasons == ["unassigned"]
