"""The hash salt never shows: not in a repr, a str, `learnstream config` or a settings error."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from learnstream.streams.config.effective import effective, env_lines
from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import settings_problem
from learnstream.streams.privacy.config import PrivacyConfig, privacy_config
from tests.support.isolation import isolated  # noqa: F401  (autouse fixture)

SALT = "pepper-7Qz9-never-print-me"


def _secret_fields(model: object, prefix: str = "") -> list[str]:
    """Return the dotted names of every SecretStr field below a settings model."""
    names = []
    for name in type(model).model_fields:  # type: ignore[attr-defined]
        value = getattr(model, name)
        if isinstance(value, SecretStr):
            names.append(prefix + name)
        elif hasattr(type(value), "model_fields"):
            names.extend(_secret_fields(value, f"{prefix}{name}."))
    return names


def test_privacy_config_repr_and_str_hide_the_salt():
    config = PrivacyConfig(operator="hash", hash_salt=SALT)
    assert config.hash_salt == SALT  # still there for the hash operator
    for text in (repr(config), str(config), f"{config}", repr([config])):
        assert SALT not in text
        assert "hash_salt" not in text
    assert "operator='hash'" in repr(config)


def test_settings_and_derived_config_never_show_the_salt(monkeypatch):
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__HASH_SALT", SALT)
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__OPERATOR", "hash")
    settings = Settings()
    assert settings.privacy.hash_salt.get_secret_value() == SALT
    assert "privacy.hash_salt" in _secret_fields(settings)
    shown = [
        repr(settings),
        str(settings),
        repr(settings.privacy),
        settings.model_dump_json(),
        str(settings.model_dump()),
        str(effective(settings)),
        "\n".join(env_lines(settings)),
        repr(privacy_config(settings)),
    ]
    for text in shown:
        assert SALT not in text
    assert "LEARNSTREAM_PRIVACY__HASH_SALT='**********'" in env_lines(settings)


@pytest.mark.parametrize(
    ("variable", "named"),
    [
        ("LEARNSTREAM_PRIVACY__OPERATOR", "LEARNSTREAM_PRIVACY__OPERATOR must be"),
        ("LEARNSTREAM_WEB_PORT", "LEARNSTREAM_WEB_PORT must be a whole number"),
        ("LEARNSTREAM_JOIN__GRACE", "LEARNSTREAM_JOIN__GRACE is not a duration"),
        ("LEARNSTREAM_PRIVACY__DETECT_SECRETS", "LEARNSTREAM_PRIVACY__DETECT_SECRETS must be"),
    ],
)
def test_a_bad_setting_error_never_echoes_the_value(monkeypatch, variable, named):
    monkeypatch.setenv(variable, SALT)  # a secret pasted into the wrong variable
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert SALT not in str(caught.value)
    assert SALT not in repr(caught.value)
    line = settings_problem(caught.value)
    assert line.startswith(named)
    assert "\n" not in line
    assert SALT not in line
