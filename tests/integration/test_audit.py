"""`learnstream audit` end to end: PII of every configured kind planted in runtime events;
the samples topic audits clean (exit 0), the raw input topic shows every kind (exit 1),
names included unless the audit is told --no-ner."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.sim.simulate import PII_SAMPLES, Simulator

pytestmark = pytest.mark.integration

#: A value of each kind the audit must find: the simulator's values, IBAN, SSN, a secret,
#: a street address, a date of birth and a name.
PLANTED = {
    **PII_SAMPLES,
    "iban": "DE89 3704 0044 0532 0130 00",
    "ssn": "219-09-9999",
    "aws": "AKIA" + "QLEAKQLEAKQLEAK7",
    "address": "14 Harrowgate Lane, Bexbridge BX4 7QT",
    "dob": "1973-07-08",
    "name": "Quillon Brevatt",  # made up: only the NER model finds it
}
KINDS = {
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IP_ADDRESS",
    "IBAN_CODE",
    "US_SSN",
    "AWS_ACCESS_KEY",
    "STREET_ADDRESS",
    "DATE_OF_BIRTH",
    "PERSON",
}
TEXT = (
    "Refund the duplicate charge for {name}. "
    "Write to {email} or call {phone}; card {card}; block {ip}; "
    "refund to IBAN {iban}; SSN {ssn}; rotate key {aws}; ship to {address}; born {dob}"
).format(**PLANTED)

# The audit command as `learnstream audit` runs it, whether cli.py registers it yet or not.
_RUN = (
    "from learnstream.agents.cli.main import main; from learnstream.agents.cli.audit import audit; "
    "main.add_command(audit); main(prog_name='learnstream')"
)


def _audit(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-c", _RUN, "audit", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


async def _publish(bootstrap: str, topics: TopicSettings, embedded: bool) -> str:
    """Publish a plan whose intent holds every planted value, its approval, a bad record."""
    sim, t0 = Simulator(seed=31, pii_ratio=1.0), datetime.now(UTC)
    snap = sim.plan(t0)
    snap["intent"]["text"] = snap["plan"]["objective"] = TEXT
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        pub.publish_plan(snap)
        await asyncio.sleep(1.0)
        pub.publish_decision(sim.decision(snap, True, t0))
        pub.publish_raw("plans", b"bad", b'{"note": "' + PLANTED["email"].encode())  # no JSON
    assert pub.stats.dropped == pub.stats.failed == 0
    return str(snap["plan"]["plan_id"])


def _kinds(stdout: str) -> set[str]:
    return {line.split(" at ", 1)[0] for line in stdout.splitlines()}


async def test_audit_finds_no_pii_in_samples_and_every_kind_in_inputs(
    broker, start_worker, worker_env, namespace
):
    topics = TopicSettings(prefix=namespace)
    start_worker(LEARNSTREAM_SAMPLE_FORMAT="avro")
    since = datetime.now(UTC) - timedelta(seconds=1)
    await _publish(broker.bootstrap, topics, broker.embedded)
    await read_until(broker.bootstrap, topics.name("samples"), 1)
    await read_until(broker.bootstrap, topics.name("dlq"), 1)
    await asyncio.sleep(2.0)
    samples = [
        decode_any(r.value) for r in await read_topic(broker.bootstrap, topics.name("samples"))
    ]
    wire = json.dumps(samples)
    # The planted text reached the samples, replaced: the clean audit below is not vacuous.
    replaced = ("<EMAIL_ADDRESS>", "<IBAN_CODE>", "<US_SSN>", "<CREDIT_CARD>", "<IP_ADDRESS>")
    for token in (*replaced, "<PERSON>"):
        assert token in wire, token
    until = _iso(datetime.now(UTC) + timedelta(seconds=5))

    clean = _audit(worker_env, "--since", _iso(since), "--until", until)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout == ""
    assert clean.stderr.strip() == (
        f"no PII found in {len(samples)} records of {topics.name('samples')}"
    )

    raw = _audit(worker_env, "--since", _iso(since), "--until", until, "--topic", "plans")
    assert raw.returncode == 1, raw.stderr
    # The worker's NER setting (on by default) holds in the audit too, without a flag.
    assert _kinds(raw.stdout) >= KINDS
    summary = raw.stderr.strip().splitlines()
    assert len(summary) == 1
    assert summary[0].startswith("PII found: ")
    assert summary[0].endswith(f"in 2 of 2 records of {topics.name('plans')}")
    lines = raw.stdout.splitlines()
    assert f"EMAIL_ADDRESS at {topics.name('plans')}/" in raw.stdout
    assert any(line.endswith(" $.intent.text") and "IBAN_CODE" in line for line in lines)
    assert any(line.startswith("EMAIL_ADDRESS at ") and line.endswith(" $") for line in lines)
    for value in PLANTED.values():  # kinds and paths only, never the matched text
        assert value not in raw.stdout + raw.stderr + clean.stdout + clean.stderr

    no_ner = _audit(
        {**worker_env, "LEARNSTREAM_PRIVACY__NER": "false"},
        *("--since", _iso(since), "--until", until, "--topic", "plans"),
    )
    forced = _audit(
        {**worker_env, "LEARNSTREAM_PRIVACY__NER": "false"},
        *("--since", _iso(since), "--until", until, "--topic", "plans", "--ner"),
    )
    nameless = _audit(
        worker_env, "--since", _iso(since), "--until", until, "--topic", "plans", "--no-ner"
    )
    assert "PERSON" not in _kinds(no_ner.stdout) | _kinds(nameless.stdout)
    assert "EMAIL_ADDRESS" in _kinds(no_ner.stdout) & _kinds(nameless.stdout)
    assert "PERSON" in _kinds(forced.stdout)


async def test_audit_refuses_a_backwards_range(worker_env):
    done = _audit(worker_env, "--since", "2026-11-24T09:00:00Z", "--until", "2026-11-24T08:00:00Z")
    assert done.returncode == 1
    assert done.stderr.strip() == "Error: --until must be after --since"


async def test_audit_refuses_a_topic_the_broker_does_not_have(worker_env):
    args = ("--since", "2026-11-24T08:00:00Z", "--until", "2026-11-24T09:00:00Z")
    done = _audit(worker_env, *args, "--topic", "no.such.topic")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Error: the broker has no topic no.such.topic: check --topic and LEARNSTREAM_TOPICS__PREFIX"
    )
