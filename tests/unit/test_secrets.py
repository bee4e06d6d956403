"""Secrets are PII too: detect-secrets plugins, run offline in-process, replace every secret.

Fake secrets are assembled from parts so that no scanner mistakes this file for a leak.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import time
from collections import Counter
from typing import Any

import detect_secrets.plugins.base
import detect_secrets.settings
import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import generate_latest

from learnstream.streams.config.settings import DEFAULT_PII_ENTITIES, Settings
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.privacy import secrets as secrets_module
from learnstream.streams.privacy.config import PrivacyConfig, privacy_config
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy
from learnstream.streams.privacy.secrets import SECRET_ENTITIES, find_secrets, may_hold_secret

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
KEY_BLOCK = "\n".join(
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEAu1SU1L",
        "q7tVZ8Q",
        "-----END RSA PRIVATE KEY-----",
    ]
)
TOKENS = {
    "GITHUB_TOKEN": "ghp" + "_" + "a1B2c3D4" * 4 + "e5F6",
    "GITLAB_TOKEN": "glpat" + "-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm",
    "SLACK_TOKEN": "xoxb" + "-1234567890-0987654321-" + "AbCdEfGhIjKlMnOp",
    "STRIPE_KEY": "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "TWILIO_KEY": "SK" + "0123456789abcdef" * 2,
    "SENDGRID_KEY": "SG" + "." + "a1" * 11 + "." + "b2c" * 14 + "d",
    "OPENAI_KEY": "sk" + "-" + "A1b2C3d4E5f6G7h8I9j0" + "T3BlbkFJ" + "K1l2M3n4O5p6Q7r8S9t0",
    "GCP_API_KEY": "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "AZURE_STORAGE_KEY": "AccountKey=" + "Zm9vYmFy" * 11,
    "JWT": JWT,
    "AWS_ACCESS_KEY": AWS_KEY,
}


def _no_network(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("network access attempted")


@pytest.fixture(autouse=True)
def block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No plugin may verify a secret online: sockets and requests both fail the test."""
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    monkeypatch.setattr(requests.Session, "request", _no_network)


@pytest.mark.parametrize(("entity", "token"), TOKENS.items())
def test_each_vendor_token_is_replaced(anonymizer: Anonymizer, entity: str, token: str) -> None:
    text, counts = anonymizer.anonymize_text(f"use {token}\nfor the deploy")
    assert text == f"use <{entity}>\nfor the deploy"
    assert counts == Counter({entity: 1})


@pytest.mark.parametrize(
    ("text", "expected", "entity"),
    [
        ("PASSWORD=hunter2", "PASSWORD=<PASSWORD>", "PASSWORD"),
        ("set api_key: s3cr3t-value now", "set api_key: <PASSWORD>", "PASSWORD"),
        ('db_pass = "correct horse"', 'db_pass = "<PASSWORD>"', "PASSWORD"),
        (f'aws_secret_key = "{AWS_SECRET}"', 'aws_secret_key = "<AWS_ACCESS_KEY>"', None),
        (
            "db https://bob:pa55w0rd@db.internal/x",
            "db https://bob:<BASIC_AUTH_PASSWORD>/x",  # "pa55w0rd@db.internal" is an address too
            None,
        ),
        ("token 'kJ8sd9F3mQ2zXw7Lp4Rt6Vb1Nc5Hy0Ge'", "token '<HIGH_ENTROPY_SECRET>'", None),
        (f"key:\n{KEY_BLOCK}\nthen restart", "key:\n<PRIVATE_KEY>\nthen restart", None),
        ("PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1\nAAAB", "<PRIVATE_KEY>", None),
    ],
)
def test_passwords_keys_and_blocks_are_replaced(
    anonymizer: Anonymizer, text: str, expected: str, entity: str | None
) -> None:
    out, counts = anonymizer.anonymize_text(text)
    assert out == expected
    found = re.search(r"<([A-Z_]+)>", expected)
    assert found is not None
    assert counts == Counter({entity or found.group(1): 1})


def test_the_value_goes_not_only_the_keyword(anonymizer: Anonymizer) -> None:
    text = "export DB_PASSWORD='s3cr3t pass phrase'\nnext: line stays"
    out, _ = anonymizer.anonymize_text(text)
    assert "s3cr3t" not in out
    assert "phrase" not in out
    assert out.endswith("\nnext: line stays")


def test_an_unquoted_keyword_value_runs_to_the_end_of_its_line(anonymizer: Anonymizer) -> None:
    """detect-secrets reads ``password: a b c`` as the value "a b c": it all goes."""
    out, _ = anonymizer.anonymize_text("password: correct horse battery\nok")
    assert out == "password: <PASSWORD>\nok"


def test_a_secret_overlapping_pii_goes_whole(anonymizer: Anonymizer) -> None:
    out, counts = anonymizer.anonymize_text("sync https://bob:hunter22@corp.example.com/x")
    assert "hunter22" not in out
    assert sum(counts.values()) == 1
    assert set(counts) <= set(SECRET_ENTITIES)


@pytest.mark.parametrize(
    "text",
    [
        "Fix the login 500 error reported by the reporter",
        "Patch the session handler and add a regression test",
        "plan 550e8400-e29b-41d4-a716-446655440000 moved to step 3",
        "commit '3f2a9c0d1e2b3a4f5e6d7c8b9a0f1e2d3c4b5a69' is the fix",
        "the password reset page, the secret santa list, api keys docs",
        "see src/app.py:42 and keys/deploy.secret",
        "Migrate billing to the new processor in version 2.2.366",
    ],
)
def test_ordinary_text_is_unchanged(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text) == (text, Counter())


@pytest.mark.parametrize(
    ("operator", "shape"),
    [("mask", r"use \*{20} now"), ("hash", r"use [0-9a-f]{64} now"), ("redact", r"use  now")],
)
def test_operators_apply_to_secrets(operator: str, shape: str) -> None:
    config = PrivacyConfig(operator=operator, hash_salt="pepper")  # type: ignore[arg-type]
    out, counts = Anonymizer(config).anonymize_text(f"use {AWS_KEY} now")
    assert re.fullmatch(shape, out), out
    assert counts == Counter({"AWS_ACCESS_KEY": 1})


def test_secrets_follow_the_switches() -> None:
    text = f"use {AWS_KEY} now"
    assert Anonymizer(PrivacyConfig(detect_secrets=False)).anonymize_text(text) == (text, Counter())
    assert Anonymizer(PrivacyConfig(anonymize_pii=False)).anonymize_text(text) == (text, Counter())
    only_secrets = Anonymizer(PrivacyConfig(entities=()))
    assert only_secrets.anonymize_text(text + " bob@example.com")[0] == (
        "use <AWS_ACCESS_KEY> now bob@example.com"
    )


def test_setting_is_on_by_default_and_reaches_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LEARNSTREAM_PRIVACY__DETECT_SECRETS", "LEARNSTREAM_LEARNING__ANONYMIZE_PII"):
        monkeypatch.delenv(name, raising=False)
    assert privacy_config(Settings()).detect_secrets is True
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__DETECT_SECRETS", "false")
    assert privacy_config(Settings()).detect_secrets is False


def test_metric_entity_labels_are_a_fixed_set() -> None:
    ner = ("PERSON", "LOCATION")
    assert PrivacyConfig().reported_entities == DEFAULT_PII_ENTITIES + ner + SECRET_ENTITIES
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]+", e) for e in SECRET_ENTITIES)
    assert len(SECRET_ENTITIES) == len(set(SECRET_ENTITIES)) < 30
    assert PrivacyConfig(detect_secrets=False).reported_entities == DEFAULT_PII_ENTITIES + ner


def test_the_worker_counts_secrets_under_their_entity_label() -> None:
    metrics = Metrics()
    metrics.track_entities(privacy_config(Settings()).reported_entities)
    exposition = generate_latest(metrics.registry).decode()
    for entity in (*DEFAULT_PII_ENTITIES, *SECRET_ENTITIES):
        assert f'learnstream_pii_entities_total{{entity="{entity}"}} 0.0' in exposition


def test_samples_lose_secrets_in_every_payload_section(anonymizer: Anonymizer) -> None:
    sample = {
        "sample_id": "0f0e0d0c-0b0a-4908-8706-050403020100",
        "input": {"prompt": f"deploy with {AWS_KEY}", "customer_id": AWS_KEY},
        "state": {"env": ["PASSWORD=hunter2"]},
        "output": {"plan": f"auth header Bearer {JWT}"},
        "feedback": {"source": "user", "details": {"note": KEY_BLOCK}},
        "meta": {"project_id": "p"},
    }
    out, counts = apply_privacy(sample, anonymizer)
    wire = json.dumps(out)
    for value in (AWS_KEY, "hunter2", JWT[:40], "MIIEpAIBAAKCAQEAu1SU1L"):
        assert value not in wire
    assert counts == Counter({"AWS_ACCESS_KEY": 2, "PASSWORD": 1, "JWT": 1, "PRIVATE_KEY": 1})


def test_no_global_settings_and_no_verification(monkeypatch: pytest.MonkeyPatch) -> None:
    """detect-secrets' global settings (transient_settings) are never read: no races."""
    monkeypatch.setattr(detect_secrets.settings, "get_settings", _no_network)
    monkeypatch.setattr(detect_secrets.plugins.base, "get_settings", _no_network)
    text = "\n".join([*TOKENS.values(), "PASSWORD=hunter2", KEY_BLOCK])
    assert {entity for entity, _, _ in find_secrets(text)} >= {*TOKENS, "PASSWORD", "PRIVATE_KEY"}


def test_a_plugin_that_fails_redacts_its_line_and_never_raises() -> None:
    """The JWT plugin parses a token's JSON: a deeply nested header raises RecursionError."""
    deep = base64.urlsafe_b64encode(b'{"a":' + b"[" * 2000 + b"}").decode().rstrip("=")
    text = f"ok line\ntoken {deep}.eyJzdWIiOiIxIn0.sig tail\nlast line"
    out, counts = Anonymizer(PrivacyConfig()).anonymize_text(text)
    assert out == "ok line\n<JWT>\nlast line"
    assert counts == Counter({"JWT": 1})


def test_long_lines_are_scanned_in_windows_without_losing_a_secret() -> None:
    assert (secrets_module._WINDOW, secrets_module._OVERLAP) == (8192, 2048)
    for pad in range(8000, 8300, 11):  # the tokens straddle the first window's end
        text = "x " * (pad // 2) + f"auth {JWT} and {TOKENS['GITHUB_TOKEN']} end"
        spans = {text[s:e] for _, s, e in find_secrets(text)}
        assert spans == {JWT, TOKENS["GITHUB_TOKEN"]}, pad


def test_a_pathological_line_costs_seconds_not_minutes() -> None:
    """Two plugin patterns backtrack quadratically; windows bound a 300 kB line. About 4 s
    alone; 22 s was seen beside a CI's Apache Kafka phase on 2 cores. Unbounded, it takes
    many minutes: the bound tells those apart, not a speed."""
    started = time.perf_counter()
    for text in ("eyJ" * 100_000, "http://a:b@" * 30_000):
        find_secrets(text)
    assert time.perf_counter() - started < 60


# --- the gate and robustness ----------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        *TOKENS.values(),
        AWS_SECRET,
        "aws_key=",
        '"',
        "'",
        "PASSWORD=",
        "api_key:",
        "apı_key=",  # IGNORECASE equates ı with i and ſ with s; lower() does not
        "paſſword: ",
        "secret",
        "https://bob:pw@h.example.org",
        "://",
        "@",
        "\n",
        KEY_BLOCK,
        "BEGIN PRIVATE KEY",
        "eyJ",
        "//r.example.org/:_authToken=npm_abc",
        "plain",
        "words",
        "550e8400-e29b-41d4-a716-446655440000",
        "a1b2c3d4e5f6a7b8c9d0",
        " ",
        ".",
        "=",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_FRAGMENTS, min_size=1, max_size=8).map("".join))
def test_the_gate_only_skips_text_no_plugin_matches(text: str) -> None:
    gated = find_secrets(text)
    gate = secrets_module._GATE
    secrets_module._GATE = re.compile("")  # every plugin on every line
    try:
        assert find_secrets(text) == gated
    finally:
        secrets_module._GATE = gate


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300) | st.lists(_FRAGMENTS | st.text(max_size=8)).map("".join))
def test_any_string_is_handled(text: str) -> None:
    spans = find_secrets(text)
    ends = [0, *(end for _, _, end in spans)]
    assert all(0 <= start < end <= len(text) for _, start, end in spans)
    assert all(ends[i] <= spans[i][1] for i in range(len(spans)))  # sorted, disjoint
    assert {entity for entity, _, _ in spans} <= set(SECRET_ENTITIES)
    assert isinstance(may_hold_secret(text), bool)
    out, counts = Anonymizer(PrivacyConfig()).anonymize_text(text)
    assert isinstance(out, str)
    # a PII hit that bridges two secrets (an address "gho_…@glpat-…" cut at the end) merges
    # them into one replaced span: fewer counts, but no secret survives
    assert sum(counts.values()) >= 1 or not spans
    values = [text[start:end] for _, start, end in spans]
    assert all(v not in out for v in values if len(v) >= 8 and text.count(v) == 1)
