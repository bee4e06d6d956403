"""The CLI as a user runs it: topics create, dlq show / replay, worker and demo defaults."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.embedded import free_port
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_until
from learnstream.streams.io.topics import topic_specs
from learnstream.streams.io.worker_process import WorkerProcess
from learnstream.streams.sim.simulate import Simulator
from tests.support.topic_configs import describe_configs

pytestmark = pytest.mark.integration


def _cli(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "learnstream", *args],
        env={**os.environ, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_topics_create_sets_partitions_and_compaction(broker, worker_env, namespace):
    done = _cli({**worker_env, "LEARNSTREAM_TOPICS__PARTITIONS": "3"}, "topics", "create")
    assert done.returncode == 0, done.stderr
    topics = TopicSettings(prefix=namespace, partitions=3)
    expected = {name for name, _, _ in topic_specs(topics)}
    assert {line.split()[-1] for line in done.stdout.splitlines()} == expected
    again = _cli({**worker_env, "LEARNSTREAM_TOPICS__PARTITIONS": "3"}, "topics", "create")
    assert all(line.startswith("exists") for line in again.stdout.splitlines())

    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(sorted(expected))
        assert {t["topic"]: len(t["partitions"]) for t in described} == dict.fromkeys(expected, 3)
        configs = await describe_configs(
            admin, [topics.name(f) for f in ("plans", "consent", "samples")]
        )
    finally:
        await admin.close()
    described_configs = _configs(configs)
    policy = {name: entries.get("cleanup.policy") for name, entries in described_configs.items()}
    assert policy[topics.name("plans")] == "compact"
    assert policy[topics.name("consent")] == "compact"
    # Samples are stored, not expired: compacted by sample_id, no time retention.
    assert policy[topics.name("samples")] == "compact"
    assert described_configs[topics.name("samples")]["retention.ms"] == "-1"


def _configs(responses) -> dict[str, dict[str, str]]:
    """Return {topic: {config: value}} from describe_configs responses."""
    out = {}
    for response in responses:
        # (error_code, error_message, resource_type, resource_name, [(name, value, ...)])
        for _, _, _, name, entries, *_ in response.resources:
            out[name] = {entry[0]: entry[1] for entry in entries}
    return out


async def test_topics_create_reports_an_old_samples_topic_it_does_not_alter(
    broker, worker_env, namespace
):
    samples = TopicSettings(prefix=namespace).name("samples")
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(samples, 4, 1, topic_configs={"retention.ms": "1000"})])
        done = _cli(worker_env, "topics", "create")
        configs = await describe_configs(admin, [samples])
    finally:
        await admin.close()
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.endswith(f" {samples}"))
    assert line.startswith("exists (differs: cleanup.policy, retention.ms)")
    assert sum("differs" in line for line in done.stdout.splitlines()) == 1
    assert _configs(configs)[samples]["retention.ms"] == "1000"


async def test_samples_retention_is_configurable(broker, worker_env, namespace):
    day_ms = "86400000"
    env = {**worker_env, "LEARNSTREAM_TOPICS__SAMPLES_RETENTION_MS": day_ms}
    done = _cli(env, "topics", "create")
    assert done.returncode == 0, done.stderr
    samples = TopicSettings(prefix=namespace).name("samples")
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        configs = await describe_configs(admin, [samples])
    finally:
        await admin.close()
    entries = _configs(configs)[samples]
    assert entries["cleanup.policy"] == "compact,delete"
    assert entries["retention.ms"] == day_ms


async def test_dlq_show_and_replay_completes_a_missed_join(
    broker, start_worker, worker_env, namespace
):
    topics = TopicSettings(prefix=namespace)
    start_worker(LEARNSTREAM_JOIN__GRACE="2", LEARNSTREAM_SAMPLE_FORMAT="json")
    sim, t0 = Simulator(seed=5, pii_ratio=0.0), datetime.now(UTC)
    snap = sim.plan(t0)
    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        pub.publish_decision(sim.decision(snap, True, t0))
    dead = await read_until(broker.bootstrap, topics.name("dlq"), 1)
    assert dict(dead[0].headers)["reason"] == b"plan_state_missing"

    shown = _cli(worker_env, "dlq", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    letter = json.loads(shown.stdout.splitlines()[0])
    assert letter["reason"] == "plan_state_missing"
    assert letter["source_topic"] == topics.name("plan_approved")

    async with RuntimePublisher(
        broker.bootstrap, topics, one_record_per_batch=broker.embedded
    ) as pub:
        pub.publish_plan(snap)
    await asyncio.sleep(2.0)
    replayed = _cli(worker_env, "dlq", "replay", "--reason", "plan_state_missing", "--yes")
    assert replayed.returncode == 0, replayed.stderr
    assert "replayed 1" in replayed.stdout
    records = await read_until(broker.bootstrap, topics.name("samples"), 3)
    families = Counter(decode_any(r.value)["sample_family"] for r in records)
    # confirm_decision twice with the same deterministic id: trainers deduplicate it exactly.
    assert families == {"confirm_decision": 2, "intent_resolution": 1}
    assert len({decode_any(r.value)["sample_id"] for r in records}) == 2


def test_cli_without_broker_says_how_to_configure():
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNSTREAM_")}
    done = subprocess.run(
        [sys.executable, "-m", "learnstream", "dlq", "show"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "LEARNSTREAM_BROKER_URL" in done.stderr


def test_worker_without_broker_starts_embedded_and_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNSTREAM_")}
    env |= {
        "LEARNSTREAM_DATA_DIR": str(tmp_path / "data"),
        "LEARNSTREAM_WEB_PORT": str(free_port()),
    }
    worker = WorkerProcess(env, tmp_path / "worker.log")
    try:
        worker.start()
    finally:
        worker.stop()
    first = worker.log().splitlines()[1]  # line 0 is the test's start marker
    assert "started the embedded broker at kafka://127.0.0.1:" in first


def test_demo_runs_and_reports_samples(tmp_path):
    """The demo always starts its own embedded broker, whatever the session's broker is."""
    done = _cli(
        {"LEARNSTREAM_DATA_DIR": str(tmp_path)},
        "demo",
        "--duration",
        "12",
        "--rate",
        "10",
        "--web-port",
        str(free_port()),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = done.stdout[done.stdout.rindex("learnstream demo ran ") :].splitlines()
    assert summary[1].startswith("  events in     ")
    assert summary[2].startswith("  samples out   ")
    assert "intent_resolution" in summary[2]
    assert summary[3].startswith("  dead letters  ")
    assert summary[4] == "  left behind   nothing (worker, broker, temp folder removed)"


def _user_env(**variables: str) -> dict[str, str]:
    """Return a shell's environment with only these LEARNSTREAM_* variables set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNSTREAM_")}
    return env | variables


def _first_error_line(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "learnstream", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    return done.stderr.splitlines()[0]


_UNREACHABLE = "check LEARNSTREAM_BROKER_URL, or unset it to start the embedded broker"


@pytest.mark.parametrize(
    ("variables", "args", "line"),
    [
        (
            {"LEARNSTREAM_BROKER_URL": "kafka://127.0.0.1:1"},
            ("worker",),
            "Error: cannot reach the Kafka broker (127.0.0.1:1: connection refused): "
            + _UNREACHABLE,
        ),
        (
            {"LEARNSTREAM_BROKER_URL": "kafka://nohost.invalid:9092"},
            ("worker",),
            "Error: cannot reach the Kafka broker (nohost.invalid: unknown host): " + _UNREACHABLE,
        ),
        (
            {"LEARNSTREAM_BROKER_URL": "kafka://127.0.0.1:1"},
            ("dlq", "show"),
            "Error: cannot reach the Kafka broker (127.0.0.1:1: connection refused): "
            "check LEARNSTREAM_BROKER_URL",
        ),
        (
            {"LEARNSTREAM_BROKER_URL": "127.0.0.1:9092"},
            ("worker",),
            "Error: LEARNSTREAM_BROKER_URL must look like kafka://host:9092 "
            "(several: kafka://h1:9092,h2:9092)",
        ),
        (
            {"LEARNSTREAM_JOIN__GRACE": "soon"},
            ("worker",),
            "Error: LEARNSTREAM_JOIN__GRACE is not a duration: write seconds (90) or 250ms, 5m, 1h",
        ),
        (
            {"LEARNSTREAM_PROCESSING_GUARANTEE": "exactly_once"},
            ("worker",),
            "Error: LEARNSTREAM_PROCESSING_GUARANTEE=exactly_once needs Kafka transactions, which "
            "the embedded broker does not have: set LEARNSTREAM_BROKER_URL to an Apache Kafka "
            "cluster, or use at_least_once (samples have deterministic ids)",
        ),
        (
            {},
            ("topics", "create"),
            "Error: no broker configured: set LEARNSTREAM_BROKER_URL=kafka://host:9092 (the "
            "embedded broker lives only inside `learnstream worker` / `learnstream demo`)",
        ),
    ],
)
def test_a_user_error_is_one_line_naming_what_to_change(variables, args, line):
    # A free web port: a busy 6066 on this machine is a different error, checked first.
    env = _user_env(LEARNSTREAM_WEB_PORT=str(free_port()), **variables)
    assert _first_error_line(env, *args) == line


def test_worker_on_a_busy_web_port_says_which_variable_to_change():
    port = free_port()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        line = _first_error_line(_user_env(LEARNSTREAM_WEB_PORT=str(port)), "worker")
    assert line == (
        f"Error: port {port} is already in use by another program: "
        "set LEARNSTREAM_WEB_PORT to a free port"
    )


def test_quality_without_a_worker_says_where_it_looked():
    port = free_port()
    line = _first_error_line(_user_env(LEARNSTREAM_WEB_PORT=str(port)), "quality")
    assert line == (
        f"Error: nothing answers at http://127.0.0.1:{port}/quality: is a worker running? "
        "Start one, or set LEARNSTREAM_WEB_PORT to its port"
    )


@pytest.mark.parametrize(
    ("variables", "flags"),
    [({}, ("--verbose",)), ({"LEARNSTREAM_LOG_LEVEL": "debug"}, ())],
)
def test_verbose_or_debug_shows_the_traceback(variables, flags):
    env = _user_env(LEARNSTREAM_BROKER_URL="kafka://127.0.0.1:1", **variables)
    done = subprocess.run(
        [sys.executable, "-m", "learnstream", *flags, "dlq", "show"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert (
        "learnstream.streams.config.usererrors.UserError: cannot reach the Kafka broker"
        in done.stderr
    )


def test_version():
    done = subprocess.run(
        [sys.executable, "-m", "learnstream", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert re.fullmatch(r"learnstream \d+\.\d+\.\d+\n", done.stdout)
