"""A2E learn end to end: LearnAPI over Kafka and over HTTP against a real worker.

Every request kind round-trips; feedback yields a dialog_response sample, a DPO pair and a
reward sample, experiences are stored, all anonymized (an email in the correction, the
prompt and a state is masked everywhere); invalid requests get a 4xx (HTTP) or go to the
DLQ with an error response (Kafka), and the worker keeps answering.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import aiohttp
import orjson
import pytest
from aiokafka import AIOKafkaProducer
from click.testing import CliRunner

from learnstream.agents.cli.learn import learn
from learnstream.streams.a2e.client import LearnAPI
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.a2e_transport import HttpTransport, KafkaTransport
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.sim.simulate import Simulator

pytestmark = pytest.mark.integration

EMAIL = "dana.leak@example.org"


async def _exercise(api: LearnAPI, tag: str) -> dict[str, Any]:
    """Run all four request kinds; return what they answered."""
    feedback = await api.feedback(
        correlation_id=f"{tag}-turn-1",
        polarity="CORRECTIVE",
        score=-0.5,
        correction=f"Write to {EMAIL} for access.",
        comment=f"the answer ignored {EMAIL}",
        annotator_id="annotator-7",
        prompt=f"How do I reach {EMAIL}?",
        response="I cannot help with that.",
        skill_name="search",
    )
    reward = await api.reward("search", 1.0, f"{tag}-turn-2")
    stored = await api.experience(
        [
            {"state": {"note": f"mail {EMAIL}"}, "action": {"a": 1}, "reward": 0.5,
             "next_state": {}, "done": False},
            {"state": {}, "action": {"a": 2}, "reward": -1.0, "next_state": {}, "done": True},
        ]
    )  # fmt: skip
    skills, tools = await api.stats(skill_name="search")
    ranked = await api.adapt(skill_name="fresh", strategy="ucb1")
    return {"feedback": feedback, "reward": reward, "stored": stored, "skills": skills,
            "tools": tools, "ranked": ranked}  # fmt: skip


def _check_answers(got: dict[str, Any]) -> None:
    assert got["feedback"].accepted == 1
    assert got["feedback"].details == {"samples": 1, "pairs": 1, "reward_samples": 1}
    assert got["reward"].details == {"samples": 1, "pairs": 0, "reward_samples": 0}
    assert got["stored"] == 2
    (search,) = got["skills"]
    assert (search.name, search.calls_total, search.calls_success, search.calls_failed) == (
        "search", 2, 1, 1,
    )  # fmt: skip
    assert search.avg_score == pytest.approx(0.25)
    assert got["tools"] == []
    # "fresh" was never called: UCB1 tries it first, then "search".
    assert [r.name for r in got["ranked"]] == ["fresh", "search"]


async def _check_topics(bootstrap: str, topics: TopicSettings, tag: str) -> None:
    samples = [decode_any(r.value) for r in await read_until(bootstrap, topics.name("samples"), 2)]
    dialog = [s for s in samples if s["sample_family"] == "dialog_response"]
    corrective = next(s for s in dialog if s["input"]["correlation_id"] == f"{tag}-turn-1")
    assert corrective["feedback"]["type"] == "correction"
    assert corrective["feedback"]["quality_label"] == "poor"
    assert corrective["meta"]["quality_score"] == pytest.approx(0.25)
    assert corrective["input"]["prompt"] == "How do I reach <EMAIL_ADDRESS>?"
    assert corrective["feedback"]["details"]["correction"] == "Write to <EMAIL_ADDRESS> for access."
    pairs = [
        json.loads(r.value) for r in await read_until(bootstrap, topics.name("preference_pairs"), 1)
    ]
    (pair,) = pairs
    assert pair["kind"] == "feedback"
    assert pair["chosen"] == {"response": "Write to <EMAIL_ADDRESS> for access."}
    assert pair["rejected"] == {"response": "I cannot help with that."}
    assert pair["chosen_sample_id"] == corrective["sample_id"]
    rewards = [
        json.loads(r.value) for r in await read_until(bootstrap, topics.name("reward_samples"), 1)
    ]
    assert [(r["prompt"], r["reward"], r["sample_id"]) for r in rewards] == [
        ("How do I reach <EMAIL_ADDRESS>?", -0.5, corrective["sample_id"])
    ]
    experiences = [
        json.loads(r.value) for r in await read_until(bootstrap, topics.name("experiences"), 2)
    ]
    assert sorted(e["reward"] for e in experiences) == [-1.0, 0.5]
    assert {"note": "mail <EMAIL_ADDRESS>"} in [e["state"] for e in experiences]
    everything = json.dumps([samples, pairs, rewards, experiences])
    assert EMAIL not in everything
    assert "annotator-7" not in everything  # annotator_id never enters a sample


async def test_learn_api_over_kafka(broker, start_worker, namespace):
    topics = TopicSettings(prefix=namespace)
    start_worker(LEARNSTREAM_SAMPLE_FORMAT="json")
    requests, responses = topics.name("learn_requests"), topics.name("learn_responses")
    async with KafkaTransport(broker.bootstrap, requests, responses, timeout=60) as transport:
        api = LearnAPI(transport, timeout=60)
        got = await _exercise(api, "k")
        _check_answers(got)
        await _check_topics(broker.bootstrap, topics, "k")

        # An invalid request: to the DLQ, answered with an error; the worker goes on.
        bad = {"type": "learn/feedback/req", "correlation_id": "bad-1",
               "payload": {"feedbacks": [{"correlation_id": "x", "polarity": "CORRECTIVE",
                                          "score": 0.5, "comment": EMAIL}]}}  # fmt: skip
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
        await producer.start()
        try:
            await producer.send_and_wait(requests, orjson.dumps(bad), key=b"bad-1")
        finally:
            await producer.stop()
        dlq = await read_until(broker.bootstrap, topics.name("dlq"), 1)
        assert len(dlq) == 1
        assert dlq[0].value == orjson.dumps(bad)
        headers = dict(dlq[0].headers)
        assert EMAIL.encode() not in b"".join(headers.values())
        answers = [json.loads(r.value) for r in await read_topic(broker.bootstrap, responses)]
        (error,) = [a for a in answers if a["correlation_id"] == "bad-1"]
        assert error["ok"] is False
        assert error["error"]["code"] == "invalid_request"
        assert "correction" in error["error"]["message"]
        assert EMAIL not in error["error"]["message"]
        skills, _ = await api.stats()  # still answering
        assert [s.name for s in skills] == ["search"]

        # Execute stages naming a tool count in its stats (and a plan's samples go on).
        await _publish_stages(broker.bootstrap, topics, broker.embedded)
        for _ in range(60):
            _, tools = await api.stats(tool_name="fetcher")
            if tools and tools[0].calls_total == 2:
                break
            await asyncio.sleep(0.5)
        (fetcher,) = tools
        assert (fetcher.calls_total, fetcher.calls_success, fetcher.calls_failed) == (2, 1, 1)
        assert fetcher.avg_duration_ms == pytest.approx(200.0)
        # ddsketch's quantile is the value of rank floor(q * (n - 1)): of two, the lower.
        assert fetcher.p95_duration_ms == pytest.approx(100.0, rel=0.01)

    # The replay CLI reads the experiences the worker stored.
    env = {"LEARNSTREAM_BROKER_URL": broker.url, "LEARNSTREAM_TOPICS__PREFIX": namespace}
    args = ["replay", "--n", "5", "--strategy", "prioritized", "--seed", "3"]
    result = await asyncio.to_thread(CliRunner().invoke, learn, args, env=env)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(e["reward"] for e in lines) == [-1.0, 0.5]
    assert EMAIL not in result.stdout


async def _publish_stages(bootstrap: str, topics: TopicSettings, embedded: bool) -> None:
    sim, now = Simulator(seed=5, pii_ratio=0.0), datetime.now(UTC)
    snap = sim.plan(now)
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        pub.publish_plan(snap)
        for status, duration in (("completed", 100), ("failed", 300)):
            event = sim.stage(snap, status, now)
            event["payload"] |= {"tool_name": "fetcher", "duration_ms": duration}
            pub.publish_stage(event)


async def test_learn_api_over_http(broker, start_worker, namespace):
    topics = TopicSettings(prefix=namespace)
    worker = start_worker(LEARNSTREAM_SAMPLE_FORMAT="avro")
    base = f"http://127.0.0.1:{worker.web_port}"
    async with HttpTransport(base, timeout=60) as transport:
        got = await _exercise(LearnAPI(transport, timeout=60), "h")
    _check_answers(got)
    await _check_topics(broker.bootstrap, topics, "h")

    async with aiohttp.ClientSession() as http:
        bad_score = {"correlation_id": "c1", "polarity": "POSITIVE", "score": 7, "comment": EMAIL}
        async with http.post(f"{base}/learn/feedback", json=bad_score) as answer:
            text = await answer.text()
            assert answer.status == 400
            assert "feedbacks.0.score" in text
            assert EMAIL not in text
            assert "7" not in text
        async with http.post(f"{base}/learn/experience", data=b"{not json") as answer:
            assert answer.status == 400
            assert "not valid JSON" in await answer.text()
        async with http.post(f"{base}/learn/adapt", json={"strategy": "magic"}) as answer:
            assert answer.status == 400
            assert "strategy" in await answer.text()
        async with http.get(f"{base}/learn/stats", params={"skill_name": "search"}) as answer:
            assert answer.status == 200
            body = await answer.json()
            assert body["type"] == "learn/stats/resp"
            assert [s["name"] for s in body["payload"]["skills"]] == ["search"]
    assert await read_topic(broker.bootstrap, topics.name("dlq")) == []


async def test_http_times_out_with_504(start_worker):
    worker = start_worker(LEARNSTREAM_A2E__RESPONSE_TIMEOUT="1ms")
    async with aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{worker.web_port}/learn/adapt"
        async with http.post(url, json={"strategy": "softmax"}) as answer:
            assert answer.status == 504
            assert await answer.json() == {"error": "no learn/adapt/resp within 0.001 s"}
