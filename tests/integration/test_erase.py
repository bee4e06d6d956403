"""`learnstream erase` end to end: two projects' samples, pairs and reward samples on the
broker; erase one, and export and the consumer API return only the other's; a re-run
tombstones nothing; without a terminal it needs --yes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from aiokafka import AIOKafkaProducer
from click.testing import CliRunner, Result

from learnstream.agents.cli.erase import erase
from learnstream.agents.cli.trainers import export
from learnstream.streams.a2e.models import Feedback
from learnstream.streams.a2e.samples import build_dialog_response, dialog_pair
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import codec_for
from learnstream.streams.io.admin import create_topics
from learnstream.streams.io.consumer import aiter_pairs, aiter_samples
from learnstream.streams.io.reader import read_topic

pytestmark = pytest.mark.integration

SECRET_TEXT = "words only the trainer may read"
NOW = datetime(2026, 3, 1, tzinfo=UTC)


def feedback(n: int, project: str) -> Feedback:
    turn = {"prompt": f"{SECRET_TEXT} {n}", "response": "wrong"}
    return Feedback(
        correlation_id=f"{project}-turn-{n}", polarity="CORRECTIVE", score=-0.5,
        correction="right", rated_turn=turn, project_id=project,
    )  # fmt: skip


def records_of(feedbacks: Iterable[Feedback], fmt: str) -> dict[str, list[tuple[bytes, bytes]]]:
    """Return the samples, pairs and reward samples the worker writes for ``feedbacks``."""
    out: dict[str, list[tuple[bytes, bytes]]] = {"samples": [], "pairs": [], "rewards": []}
    for f in feedbacks:
        sample = build_dialog_response(f, NOW)
        out["samples"].append((sample.sample_id.encode(), codec_for(fmt).encode(sample.to_dict())))  # type: ignore[arg-type]
        pair = dialog_pair(sample, NOW)
        assert pair is not None
        out["pairs"].append((pair.key(), pair.to_json()))
        reward = {"sample_id": sample.sample_id, "prompt": "p", "response": "r", "reward": -0.5}
        out["rewards"].append((sample.sample_id.encode(), orjson.dumps(reward)))
    return out


async def publish(bootstrap: str, topics: TopicSettings, records: dict[str, list]) -> None:
    names = {
        "samples": topics.name("samples"),
        "pairs": topics.name("preference_pairs"),
        "rewards": topics.name("reward_samples"),
    }
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", max_batch_size=1)
    await producer.start()
    try:
        for kind, pairs in records.items():
            for key, value in pairs:
                await producer.send_and_wait(names[kind], value, key=key)
    finally:
        await producer.stop()


async def cli(env: dict[str, str], *args: str) -> Result:
    """Run a command as a user would without a terminal (stdin not a tty)."""
    command = {"erase": erase, "export": export}[args[0]]
    return await asyncio.to_thread(CliRunner().invoke, command, list(args[1:]), env=env)


async def plant(broker, namespace: str) -> tuple[TopicSettings, dict[str, str]]:
    """Create the topics and write project a's and b's records, Avro and JSON samples."""
    topics = TopicSettings(prefix=namespace, partitions=2)
    await create_topics(broker.bootstrap, topics)
    for fmt, numbers in (("avro", range(3)), ("json", range(3, 5))):
        await publish(
            broker.bootstrap, topics, records_of([feedback(n, "proj-a") for n in numbers], fmt)
        )
        await publish(
            broker.bootstrap, topics, records_of([feedback(n, "proj-b") for n in numbers], fmt)
        )
    env = {
        "LEARNSTREAM_BROKER_URL": broker.url,
        "LEARNSTREAM_TOPICS__PREFIX": namespace,
        "LEARNSTREAM_BROKER__ONE_RECORD_PER_BATCH": "true" if broker.embedded else "false",
    }
    return topics, env


async def projects_read(broker, topics: TopicSettings, env: dict[str, str], tmp: Path) -> dict:
    """Return the correlation ids export and the consumer API return, per kind."""
    exported = tmp / "mplp.jsonl"
    done = await cli(env, "export", "--format", "mplp", "--out", str(exported))
    assert done.exit_code == 0, done.output
    dpo = tmp / "dpo.jsonl"
    done = await cli(env, "export", "--format", "dpo", "--out", str(dpo))
    assert done.exit_code == 0, done.output
    api = [s async for s in aiter_samples(bootstrap=broker.bootstrap, topic=topics.name("samples"))]
    pairs = [
        p
        async for p in aiter_pairs(
            bootstrap=broker.bootstrap, topic=topics.name("preference_pairs")
        )
    ]
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    return {
        "export": sorted(r["input"]["correlation_id"] for r in rows),
        "dpo": len(dpo.read_text().splitlines()),
        "api": sorted(s.input["correlation_id"] for s in api),
        "pairs": sorted(str(p.intent_id) for p in pairs),
    }


async def test_erase_one_project_export_keeps_the_other(broker, namespace, tmp_path):
    topics, env = await plant(broker, namespace)
    a = [f"proj-a-turn-{n}" for n in range(5)]
    b = [f"proj-b-turn-{n}" for n in range(5)]
    before = await projects_read(broker, topics, env, tmp_path)
    assert before == {
        "export": sorted(a + b),
        "dpo": 10,
        "api": sorted(a + b),
        "pairs": sorted(a + b),
    }

    refused = await cli(env, "erase", "--project", "proj-a")
    assert refused.exit_code == 2
    assert "--yes" in refused.output

    dry = await cli(env, "erase", "--project", "proj-a", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "would tombstone 15 records" in dry.stdout

    done = await cli(env, "erase", "--project", "proj-a", "--yes")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(
        "tombstoned 15 records: 5 samples, 5 preference pairs, 5 reward samples of project proj-a"
    ), done.stdout
    assert SECRET_TEXT not in done.output + dry.output

    after = await projects_read(broker, topics, env, tmp_path)
    assert after == {"export": b, "dpo": 5, "api": b, "pairs": b}
    rewards = await read_topic(broker.bootstrap, topics.name("reward_samples"))
    mine = {build_dialog_response(feedback(n, "proj-a"), NOW).sample_id.encode() for n in range(5)}
    assert {r.key for r in rewards if r.value is None} == mine

    again = await cli(env, "erase", "--project", "proj-a", "--yes")
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("tombstoned 0 records: nothing new of project proj-a")
    assert "already erased: 5 samples, 5 preference pairs, 5 reward samples" in again.stdout
    tombstones = await read_topic(broker.bootstrap, topics.name("samples"))
    assert sum(r.value is None for r in tombstones) == 5  # the re-run wrote none


async def test_erase_takes_a_time_range_and_the_uuid_spelling(broker, namespace):
    topics, env = await plant(broker, namespace)
    from learnstream.streams.samples.ids import canonical_id

    past = await cli(
        env, "erase", "--project", "proj-b", "--until", "2000-01-01T00:00:00Z", "--yes"
    )
    assert past.exit_code == 0, past.output
    assert past.stdout.startswith("tombstoned 0 records"), past.stdout
    uuid = canonical_id("proj-b").upper()
    done = await cli(env, "erase", "--project", uuid, "--since", "2000-01-01T00:00:00Z", "--yes")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("tombstoned 15 records"), done.stdout
