"""The worker and the CLI over SASL_SSL (SCRAM-SHA-512, TLS with a test CA) on Apache Kafka.

One broker with a SASL_SSL listener for the module; one worker that talks to it only through
that listener. A wrong password and an untrusted CA must each stop the worker and the CLI
within seconds, with one line naming the cause and never the password.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import SecretStr

from learnstream.agents.cli.main import main
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.encoding.schemas import validate_sample
from learnstream.streams.io.connection import KafkaConnection
from learnstream.streams.io.embedded import free_port
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_until
from learnstream.streams.io.worker_process import WorkerProcess
from learnstream.streams.sim.simulate import BAD_RECORDS, Simulator
from tests.support.kafka_server import ApacheKafka, SaslSslListener
from tests.support.tls import Authority

pytestmark = pytest.mark.kafka

USER, PASSWORD, WRONG = "learnstream", "Sc9-right-password-Q7", "Wr0ng-password-never-shown"
PREFIX = "sasl."
#: A refused handshake must end the worker this fast (its imports take most of it).
FAIL_FAST_S = 30.0


@dataclass(frozen=True)
class Secured:
    """The broker with its SASL_SSL listener and the CA files clients may be given."""

    kafka: ApacheKafka
    cafile: Path
    untrusted_cafile: Path  # a second CA, which did not sign the broker's certificate

    def env(
        self, workdir: Path, password: str = PASSWORD, cafile: Path | None = None
    ) -> dict[str, str]:
        """Return the LEARNSTREAM_* variables of a client of the SASL_SSL listener."""
        return {
            "LEARNSTREAM_BROKER_URL": f"kafka://{self.kafka.sasl_ssl_bootstrap}",
            "LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SASL_SSL",
            "LEARNSTREAM_BROKER__SASL_MECHANISM": "SCRAM-SHA-512",
            "LEARNSTREAM_BROKER__SASL_USERNAME": USER,
            "LEARNSTREAM_BROKER__SASL_PASSWORD": password,
            "LEARNSTREAM_BROKER__SSL_CAFILE": str(cafile or self.cafile),
            "LEARNSTREAM_APP_ID": "ls-sasl",
            "LEARNSTREAM_TOPICS__PREFIX": PREFIX,
            "LEARNSTREAM_DATA_DIR": str(workdir / "data"),
            "LEARNSTREAM_JOIN__SWEEP_INTERVAL": "1",
            "LEARNSTREAM_WEB_PORT": str(free_port()),
        }

    def connection(self) -> KafkaConnection:
        """Return the connection the tests read and publish with."""
        return KafkaConnection(
            self.kafka.sasl_ssl_bootstrap,
            "SASL_SSL",
            "SCRAM-SHA-512",
            USER,
            SecretStr(PASSWORD),
            str(self.cafile),
        )


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    """Start Apache Kafka with a SASL_SSL listener whose certificate a test CA signed."""
    files = tmp_path_factory.mktemp("tls")
    ca = Authority()
    issued = ca.issue("learnstream test broker")
    listener = SaslSslListener(issued.certificate, issued.private_key, ((USER, PASSWORD),))
    untrusted = Authority("another CA").write(files / "another-ca.pem")
    with ApacheKafka(sasl_ssl=listener) as kafka:
        yield Secured(kafka, ca.write(files / "ca.pem"), untrusted)


@pytest.fixture(scope="module")
def worker(secured: Secured, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """Run one worker that reaches the broker through the SASL_SSL listener only."""
    workdir = tmp_path_factory.mktemp("worker")
    proc = WorkerProcess(secured.env(workdir), workdir / "worker.log")
    try:
        proc.start(timeout=120)
        yield proc
    finally:
        proc.stop()
    assert PASSWORD not in proc.log()


@pytest.fixture
def cli_env(secured: Secured, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Give the CLI the SASL_SSL settings (and nothing else from the shell)."""
    for name in list(os.environ):
        if name.startswith("LEARNSTREAM_"):
            monkeypatch.delenv(name)
    for name, value in secured.env(tmp_path).items():
        monkeypatch.setenv(name, value)


async def _publish(connection: KafkaConnection) -> str:
    """Publish a plan, its approval and one bad record; return the plan id."""
    sim, now = Simulator(seed=7, pii_ratio=0.0), datetime.now(UTC)
    snap = sim.plan(now, sim.uuid())
    async with RuntimePublisher(connection, TopicSettings(prefix=PREFIX)) as pub:
        pub.publish_plan(snap)
        await asyncio.sleep(0.5)
        pub.publish_decision(sim.decision(snap, True, now))
        field, value, _reason = BAD_RECORDS[0]
        pub.publish_raw(field, b"bad-key", value)
    assert (pub.stats.dropped, pub.stats.failed) == (0, 0)
    return str(snap["plan"]["plan_id"])


def test_samples_come_out_over_sasl_ssl(secured: Secured, worker: WorkerProcess) -> None:
    connection = secured.connection()
    plan_id = asyncio.run(_publish(connection))
    samples_topic = TopicSettings(prefix=PREFIX).name("samples")
    records = asyncio.run(read_until(connection, samples_topic, 2, max_wait=60))
    samples = [decode_any(r.value) for r in records]
    families = sorted((s["sample_family"], s["feedback"]["quality_label"]) for s in samples)
    assert families == [("confirm_decision", "good"), ("intent_resolution", "good")]
    assert {s["meta"]["plan_id"] for s in samples} == {plan_id}
    for sample in samples:
        assert validate_sample(sample) == []


@pytest.mark.usefixtures("cli_env")
def test_cli_commands_over_sasl_ssl(worker: WorkerProcess, tmp_path: Path) -> None:
    created = CliRunner().invoke(main, ["topics", "create"])
    assert created.exit_code == 0, created.output
    assert f"exists   {PREFIX}mplp.learning_samples" in created.output.splitlines()

    deadline, shown = time.monotonic() + 60, None
    while time.monotonic() < deadline:  # the worker dead-letters the bad record
        shown = CliRunner().invoke(main, ["dlq", "show", "--json"])
        assert shown.exit_code == 0, shown.output
        if shown.output.strip():
            break
        time.sleep(1.0)
    assert shown is not None
    letters = [json.loads(line) for line in shown.output.splitlines()]
    assert [letter["reason"] for letter in letters] == [BAD_RECORDS[0][2]]

    out = tmp_path / "samples.jsonl"
    exported = CliRunner().invoke(main, ["export", "--format", "mplp", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["sample_family"] for r in rows) == ["confirm_decision", "intent_resolution"]


def _worker_refused(env: dict[str, str]) -> tuple[int, list[str], float]:
    """Run ``learnstream worker``; return its exit code, output lines and run time."""
    began = time.monotonic()
    done = subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "learnstream", "worker"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=FAIL_FAST_S * 2,
        check=False,
    )
    return done.returncode, (done.stdout + done.stderr).splitlines(), time.monotonic() - began


def _assert_refused(code: int, lines: list[str], took: float, line: str) -> None:
    assert code == 1
    assert lines == [f"Error: {line}"]  # no retry, no traceback, no password
    assert took < FAIL_FAST_S


def test_a_wrong_password_stops_the_worker_and_the_cli_in_one_line(
    secured: Secured, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = secured.env(tmp_path, password=WRONG)
    line = (
        f"the broker at {secured.kafka.sasl_ssl_bootstrap} rejected the SASL credentials of "
        f"user {USER} (SCRAM-SHA-512): check LEARNSTREAM_BROKER__SASL_USERNAME / __SASL_PASSWORD"
    )
    _assert_refused(*_worker_refused(env), line)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, ["topics", "create"])
    assert (result.exit_code, result.output) == (1, f"Error: {line}\n")


def test_an_untrusted_ca_stops_the_worker_and_the_cli_in_one_line(
    secured: Secured, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = secured.env(tmp_path, cafile=secured.untrusted_cafile)
    line = (
        f"TLS to {secured.kafka.sasl_ssl_bootstrap} failed: the broker's certificate is not "
        "signed by LEARNSTREAM_BROKER__SSL_CAFILE (certificate verify failed)"
    )
    _assert_refused(*_worker_refused(env), line)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, ["dlq", "show"])
    assert (result.exit_code, result.output) == (1, f"Error: {line}\n")
