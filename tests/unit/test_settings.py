"""Settings from LEARNSTREAM_* variables: nesting, durations, masked secrets, clear errors."""

from __future__ import annotations

import json
import os
from datetime import timedelta

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from learnstream.agents.cli.main import main
from learnstream.streams.config.settings import Settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every test from the defaults, whatever the shell exported."""
    for name in list(os.environ):
        if name.startswith("LEARNSTREAM_"):
            monkeypatch.delenv(name)


def test_defaults() -> None:
    settings = Settings()
    assert settings.kafka_url is None
    assert settings.join.grace == timedelta(minutes=5)
    assert settings.join.plan_ttl == timedelta(hours=24)
    assert settings.join.corrections_lateness == timedelta(0)
    assert settings.learning.opt_out_patterns == ("*.secret", "*.env")
    assert settings.privacy.hash_salt.get_secret_value() == ""
    assert (settings.sample_format, settings.store) == ("avro", "memory://")


def test_a_negative_corrections_lateness_is_refused() -> None:
    # From the environment "-1" is no duration at all; in code it must not pass either.
    with pytest.raises(ValidationError, match="CORRECTIONS_LATENESS must be at least 0"):
        Settings(join={"corrections_lateness": -1})
    assert Settings(join={"grace": 0}).join.corrections_lateness == timedelta(0)


def test_broker_url_flat_alias_and_nested(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_BROKER_URL", "kafka://k1:9092")
    assert Settings().kafka_url == "kafka://k1:9092"
    monkeypatch.delenv("LEARNSTREAM_BROKER_URL")
    monkeypatch.setenv("LEARNSTREAM_BROKER__URL", "kafka://k2:9092")
    assert Settings().kafka_url == "kafka://k2:9092"
    monkeypatch.setenv("LEARNSTREAM_BROKER_URL", "kafka://k1:9092")
    assert Settings().kafka_url == "kafka://k1:9092"  # the flat alias wins


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("90", timedelta(seconds=90)),
        ("5m", timedelta(minutes=5)),
        ("250ms", timedelta(milliseconds=250)),
        ("1.5h", timedelta(minutes=90)),
        ("2d", timedelta(days=2)),
        ("PT30S", timedelta(seconds=30)),
        (" 7 s ", timedelta(seconds=7)),
    ],
)
def test_join_grace_durations(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: timedelta
) -> None:
    monkeypatch.setenv("LEARNSTREAM_JOIN__GRACE", raw)
    assert Settings().join.grace == expected


def test_window_sizes_accept_a_json_list_of_durations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_WINDOWS__SIZES", '["1m", 600]')
    assert Settings().windows.sizes == (timedelta(minutes=1), timedelta(minutes=10))


def test_nested_sections_and_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_LEARNING__OPT_OUT_PATTERNS", '["*.key"]')
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__OPERATOR", "hash")
    monkeypatch.setenv("LEARNSTREAM_TOPICS__PREFIX", "t1.")
    monkeypatch.setenv("LEARNSTREAM_TOPICS__PARTITIONS", "8")
    settings = Settings()
    assert settings.learning.opt_out_patterns == ("*.key",)
    assert settings.privacy.operator == "hash"
    assert settings.topics.name("plans") == "t1.mplp.plans"
    assert settings.topics.partitions == 8


def test_hash_salt_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__HASH_SALT", "pepper-3f9a")
    settings = Settings()
    assert settings.privacy.hash_salt.get_secret_value() == "pepper-3f9a"
    dumped = settings.model_dump_json()
    assert "pepper-3f9a" not in dumped
    assert json.loads(dumped)["privacy"]["hash_salt"] == "**********"
    assert "pepper-3f9a" not in repr(settings)


def test_config_command_prints_masked_effective_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__HASH_SALT", "pepper-3f9a")
    monkeypatch.setenv("LEARNSTREAM_JOIN__GRACE", "250ms")
    monkeypatch.setenv("LEARNSTREAM_BROKER_URL", "kafka://k1:9092")
    result = CliRunner().invoke(main, ["config", "--json"])
    assert result.exit_code == 0, result.output
    assert "pepper-3f9a" not in result.output
    shown = json.loads(result.output)
    assert shown["privacy"]["hash_salt"] == "**********"
    assert shown["join"]["grace"] == "250ms"
    assert shown["broker"]["url"] == "kafka://k1:9092"
    assert "broker_url" not in shown


def test_config_shows_each_value_once_as_the_variable_a_user_sets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LEARNSTREAM_BROKER__URL", "kafka://k2:9092")
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__HASH_SALT", "pepper-3f9a")
    result = CliRunner().invoke(main, ["config"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    names = [line.split("=", 1)[0] for line in lines]
    assert len(names) == len(set(names))
    assert [n for n in names if "BROKER" in n and n.endswith("URL")] == ["LEARNSTREAM_BROKER_URL"]
    assert "LEARNSTREAM_BROKER_URL=kafka://k2:9092" in lines
    assert "LEARNSTREAM_JOIN__GRACE=5m" in lines
    assert "LEARNSTREAM_JOIN__PLAN_TTL=24h" in lines
    assert 'LEARNSTREAM_WINDOWS__SIZES=\'["5m", "1h"]\'' in lines
    assert "LEARNSTREAM_PRIVACY__HASH_SALT='**********'" in lines
    assert "pepper-3f9a" not in result.output


def test_config_says_an_unset_broker_means_the_embedded_one() -> None:
    result = CliRunner().invoke(main, ["config"])
    assert "LEARNSTREAM_BROKER_URL=  # unset: `learnstream worker` starts the embedded broker" in (
        result.output.splitlines()
    )


@pytest.mark.parametrize(
    ("raw", "shown"),
    [("90", "90s"), ("5m", "5m"), ("1.5h", "90m"), ("2d", "48h"), ("250ms", "250ms"), ("0", "0s")],
)
def test_durations_print_as_typed(monkeypatch: pytest.MonkeyPatch, raw: str, shown: str) -> None:
    monkeypatch.setenv("LEARNSTREAM_JOIN__GRACE", raw)
    assert json.loads(Settings().model_dump_json())["join"]["grace"] == shown
    assert Settings().join.grace == Settings(join={"grace": shown}).join.grace  # round trip


# One line: the variable the user set and what it accepts; never the value itself.
@pytest.mark.parametrize(
    ("name", "value", "line"),
    [
        (
            "LEARNSTREAM_JOIN__GRACE",
            "soon",
            "LEARNSTREAM_JOIN__GRACE is not a duration: write seconds (90) or 250ms, 5m, 1h",
        ),
        ("LEARNSTREAM_SAMPLE_FORMAT", "xml", "LEARNSTREAM_SAMPLE_FORMAT must be 'avro' or 'json'"),
        ("LEARNSTREAM_TOPICS__PARTITIONS", "0", "LEARNSTREAM_TOPICS__PARTITIONS must be >= 1"),
        ("LEARNSTREAM_WEB_PORT", "sixty", "LEARNSTREAM_WEB_PORT must be a whole number"),
        (
            "LEARNSTREAM_LEARNING__ENABLED",
            "maybe",
            "LEARNSTREAM_LEARNING__ENABLED must be true or false",
        ),
        (
            "LEARNSTREAM_JOIN__GRACEE",
            "5",
            "LEARNSTREAM_JOIN__GRACEE is not a setting "
            "(this section has: corrections_lateness, grace, hold_in_memory, lead_backlog, "
            "lead_wait, plan_ttl, sweep_interval)",
        ),
        (
            "LEARNSTREAM_LEARNING__OPT_OUT_PATTERNS",
            "*.key",
            "LEARNSTREAM_LEARNING__OPT_OUT_PATTERNS is not valid JSON: lists are written as "
            """JSON, e.g. '["*.secret", "*.env"]'""",
        ),
        (
            "LEARNSTREAM_JOIN__CORRECTIONS_LATENESS",
            "10m",
            "LEARNSTREAM_JOIN__CORRECTIONS_LATENESS must be at least 0 and at most "
            "LEARNSTREAM_JOIN__GRACE (5m)",
        ),
        (
            "LEARNSTREAM_BROKER_URL",
            "broker1:9092",
            "LEARNSTREAM_BROKER_URL must look like kafka://host:9092 "
            "(several: kafka://h1:9092,h2:9092)",
        ),
        (
            "LEARNSTREAM_BROKER__URL",
            "http://broker1:9092",
            "LEARNSTREAM_BROKER__URL must look like kafka://host:9092 "
            "(several: kafka://h1:9092,h2:9092)",
        ),
    ],
)
def test_invalid_value_fails_the_cli_in_one_line(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, line: str
) -> None:
    monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, ["config"])
    assert result.exit_code == 1
    assert result.output == f"Error: {line}\n"
    assert value not in line


@pytest.mark.parametrize(
    "url",
    [
        "kafka://b1:9092",
        "kafka://b1:9092,b2:9092",
        "kafka://b1:9092;kafka://b2",
        "kafka://[::1]:9092",
    ],
)
def test_broker_urls_faust_understands_are_accepted(url: str) -> None:
    assert Settings(broker_url=url).kafka_url == url


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValidationError, match="frozen"):
        settings.app_id = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        settings.join.grace = timedelta(0)  # type: ignore[misc]
    assert hash(settings.join) == hash(Settings().join)


def test_demo_honours_learnstream_web_port(monkeypatch: pytest.MonkeyPatch) -> None:
    from learnstream.streams.io.demo import choose_web_port
    from learnstream.streams.io.embedded import free_port

    port = free_port()
    monkeypatch.setenv("LEARNSTREAM_WEB_PORT", str(port))
    assert choose_web_port(Settings(), None) == (port, "(port from LEARNSTREAM_WEB_PORT)")
    other = free_port()
    assert choose_web_port(Settings(), other) == (other, "(port from --web-port)")


def test_demo_without_a_choice_moves_off_a_busy_6066() -> None:
    import socket

    from learnstream.streams.config.usererrors import UserError
    from learnstream.streams.io.demo import DEFAULT_WEB_PORT, choose_web_port
    from learnstream.streams.io.preflight import check_port_free

    with socket.socket() as sock:
        try:  # hold 6066 unless another program already does
            check_port_free("127.0.0.1", DEFAULT_WEB_PORT, "LEARNSTREAM_WEB_PORT")
            sock.bind(("127.0.0.1", DEFAULT_WEB_PORT))
            sock.listen()
        except UserError:
            pass
        port, note = choose_web_port(Settings(), None)
    assert port != DEFAULT_WEB_PORT
    assert note == "(port 6066 is busy; LEARNSTREAM_WEB_PORT picks one)"
