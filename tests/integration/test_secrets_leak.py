"""The hash salt and the web token never leave the worker: not in its log, any topic (DLQ
headers included), /metrics, `learnstream config`, or the error a bad setting prints."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime

import pytest
from aiokafka import AIOKafkaConsumer

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.sim.simulate import Simulator

pytestmark = pytest.mark.integration

SALT = "salt-Zq7-known-to-the-test-only"
WEB_TOKEN = "tok-Hv3-known-to-the-test-only"
#: Every SecretStr setting with its known value.
SECRETS = {"LEARNSTREAM_PRIVACY__HASH_SALT": SALT, "LEARNSTREAM_WEB__TOKEN": WEB_TOKEN}
#: What the secrets may leak as: their values, and the salt as the hash operator derives it.
NEEDLES = [*SECRETS.values(), hashlib.sha256(SALT.encode()).hexdigest()]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "learnstream", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def _publish(bootstrap: str, topics: TopicSettings, embedded: bool) -> None:
    """Good events that make samples (hashed PII) and bad ones that go to the DLQ."""
    sim, t0 = Simulator(seed=41, pii_ratio=1.0), datetime.now(UTC)
    snaps = [sim.plan(t0) for _ in range(3)]
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        for snap in snaps:
            pub.publish_plan(snap)
        await asyncio.sleep(1.0)
        pub.publish_decision(sim.decision(snaps[0], True, t0))
        pub.publish_decision(sim.decision(snaps[1], False, t0))
        pub.publish_stage(sim.stage(snaps[2], "completed", t0))
        pub.publish_raw("plans", b"k", b"{not json")
        pub.publish_raw("plan_approved", b"k", b'{"event_family": "pipeline_stage"}')
        pub.publish_raw("delta_intents", b"k", b"\xff\xfe")
    assert pub.stats.dropped == pub.stats.failed == 0


async def _everything_written(bootstrap: str, namespace: str) -> list[bytes]:
    """Return key, value and headers of every record of every topic this test's worker used."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        names = sorted(t for t in await consumer.topics() if namespace.rstrip(".") in t)
    finally:
        await consumer.stop()
    assert any(name.endswith("learning_dlq") for name in names), names
    blobs: list[bytes] = []
    for name in names:
        for record in await read_topic(bootstrap, name):
            blobs += [record.key or b"", record.value or b""]
            blobs += [name.encode() + b"=" + value for name, value in record.headers]
    return blobs


def _metrics(port: int) -> str:
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our worker
        return response.read().decode()


def _leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [needle for needle in NEEDLES if needle.encode() in data]


async def test_no_secret_in_anything_the_worker_or_cli_writes(
    broker, start_worker, worker_env, namespace
):
    topics = TopicSettings(prefix=namespace)
    env = {**SECRETS, "LEARNSTREAM_PRIVACY__OPERATOR": "hash", "LEARNSTREAM_LOG_LEVEL": "debug"}
    worker = start_worker(**env)
    await _publish(broker.bootstrap, topics, broker.embedded)
    samples = await read_until(broker.bootstrap, topics.name("samples"), 2)
    dead = await read_until(broker.bootstrap, topics.name("dlq"), 3)
    assert len(dead) >= 3
    assert all(dict(r.headers).get("reason") for r in dead)
    assert samples
    await asyncio.sleep(2.0)

    for blob in await _everything_written(broker.bootstrap, namespace):
        assert _leaks(blob) == []
    metrics = _metrics(worker.web_port)
    assert "learnstream_" in metrics
    assert _leaks(metrics) == []
    worker.stop()
    log = worker.log()
    assert "learnstream processing guarantee" in log  # the log is the worker's, not empty
    assert _leaks(log) == []

    for args in (("config",), ("config", "--json")):
        shown = _cli({**worker_env, **env}, *args)
        assert shown.returncode == 0, shown.stderr
        assert "HASH_SALT" in shown.stdout.upper()
        assert _leaks(shown.stdout + shown.stderr) == []


@pytest.mark.parametrize(
    ("variable", "says"),
    [
        ("LEARNSTREAM_WEB_PORT", "Error: LEARNSTREAM_WEB_PORT must be a whole number"),
        ("LEARNSTREAM_PRIVACY__OPERATOR", "Error: LEARNSTREAM_PRIVACY__OPERATOR must be"),
        ("LEARNSTREAM_JOIN__GRACE", "Error: LEARNSTREAM_JOIN__GRACE is not a duration"),
    ],
)
def test_a_secret_in_the_wrong_variable_is_not_echoed(worker_env, variable, says):
    for command in (("config",), ("worker",)):
        done = _cli({**worker_env, **SECRETS, variable: SALT}, *command)
        assert done.returncode != 0
        assert done.stderr.strip().startswith(says), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert _leaks(done.stdout + done.stderr) == []
