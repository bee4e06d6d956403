"""The embedded broker wrapper finds its binary or says clearly what to do."""

from __future__ import annotations

import pytest

from streams.app import one_record_per_batch
from streams.embedded import ENV_BINARY, EmbeddedBrokerError, find_binary
from streams.settings import BrokerSettings, Settings


def test_override_that_is_not_executable_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_BINARY, str(tmp_path / "nope"))
    with pytest.raises(EmbeddedBrokerError, match=ENV_BINARY):
        find_binary()


def test_bundled_binary_is_found(monkeypatch):
    monkeypatch.delenv(ENV_BINARY, raising=False)
    assert find_binary().endswith(tuple(["tansu", "tansu-v0.6.0-510f3e2"]))


@pytest.mark.parametrize(
    ("forced", "embedded", "expected"),
    [(None, True, True), (None, False, False), (False, True, False), (True, False, True)],
)
def test_one_record_per_batch_follows_the_broker(forced, embedded, expected):
    settings = Settings(broker=BrokerSettings(one_record_per_batch=forced))
    assert one_record_per_batch(settings, embedded) is expected
