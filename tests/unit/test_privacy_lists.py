"""A user's allow and deny lists: the settings that carry them, the pipeline applying them."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from pydantic import ValidationError

from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import settings_problem
from learnstream.streams.privacy.config import PrivacyConfig, privacy_config
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy

ALLOW = ("Alamofire", "Dana Whitfield", r"re:ops@[a-z.]+\.corp")
DENY = ("Project Falcon", r"re:(?i)ticket-\d+", "acme")


@pytest.fixture(scope="module")
def listed() -> Anonymizer:
    return Anonymizer(PrivacyConfig(allow=ALLOW, deny=DENY))


# --- settings ------------------------------------------------------------------------------


def test_the_lists_are_empty_by_default() -> None:
    assert Settings().privacy.allow == ()
    assert Settings().privacy.deny == ()
    assert "DENY_LIST" not in privacy_config(Settings()).reported_entities


def test_the_lists_are_json_lists_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__ALLOW", json.dumps([" Kafka ", "", "Kafka", "C++"]))
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__DENY", json.dumps(["Falcon", r"re:PRJ-\d{4}"]))
    config = privacy_config(Settings())
    assert config.allow == ("Kafka", "C++")
    assert config.deny == ("Falcon", r"re:PRJ-\d{4}")
    assert config.reported_entities[-1] == "DENY_LIST"  # a bounded metric label


def test_a_bad_pattern_is_a_one_line_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # a blank and a repeated item before it: the number is where the user wrote it
    items = ["ok", " ", "ok", "re:secret-(\\d"]
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__DENY", json.dumps(items))
    with pytest.raises(ValidationError) as caught:
        Settings()
    line = settings_problem(caught.value)
    assert line.startswith("LEARNSTREAM_PRIVACY__DENY holds invalid regular expressions")
    assert "(item 4)" in line
    assert "secret-" not in line  # the value is never repeated back


# --- the anonymizer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "counts"),
    [
        ("Escalate to Dana Whitfield now", "Escalate to Dana Whitfield now", {}),
        (
            "mail ops@hq.corp and jo@hq.corp",
            "mail ops@hq.corp and <EMAIL_ADDRESS>",
            {"EMAIL_ADDRESS": 1},
        ),
        ("project falcon is late", "<DENY_LIST> is late", {"DENY_LIST": 1}),
        ("see TICKET-42 and ticket-7", "see <DENY_LIST> and <DENY_LIST>", {"DENY_LIST": 2}),
        ("acme and acmes", "<DENY_LIST> and acmes", {"DENY_LIST": 1}),  # whole words only
        ("nothing here", "nothing here", {}),
    ],
)
def test_allowed_spans_stay_and_denied_ones_go(
    listed: Anonymizer, text: str, expected: str, counts: dict[str, int]
) -> None:
    assert listed.anonymize_text(text) == (expected, Counter(counts))


def test_an_allowed_word_inside_a_wider_finding_does_not_save_it() -> None:
    anonymizer = Anonymizer(PrivacyConfig(allow=("Dana",)))
    assert anonymizer.anonymize_text("Escalate to Dana Whitfield now")[0] == (
        "Escalate to <PERSON> now"
    )


@pytest.mark.parametrize(
    ("allow", "text", "secret"),
    [
        (r"re:https://git\.corp/\S*", "clone https://bob:hunter2@git.corp/x now", "hunter2"),
        (r"re:[0-9a-f]{40}", "Authorization: Bearer " + "3f9a" * 10, "3f9a" * 10),
    ],
)
def test_an_allow_item_never_releases_a_secret(allow: str, text: str, secret: str) -> None:
    """An item written for hosts or commit hashes must not let the credential beside it out."""
    out, counts = Anonymizer(PrivacyConfig(allow=(allow,))).anonymize_text(text)
    assert secret not in out
    assert counts, out


def test_a_denied_word_joins_the_span_it_overlaps() -> None:
    """A denial that cuts into a found span masks both, so no half of either is left."""
    anonymizer = Anonymizer(PrivacyConfig(deny=("re:com and",)))
    out, counts = anonymizer.anonymize_text("mail bob@example.com and wait")
    assert out == "mail <DENY_LIST> wait"
    assert counts == Counter(DENY_LIST=1)


def test_deny_beats_allow_and_a_whole_person_value_can_be_allowed(listed: Anonymizer) -> None:
    both = Anonymizer(PrivacyConfig(allow=("acme",), deny=("acme",)))
    assert both.anonymize_text("ask acme") == ("ask <DENY_LIST>", Counter(DENY_LIST=1))
    assert listed.anonymize_person("Dana Whitfield") == ("Dana Whitfield", Counter())
    assert listed.anonymize_person("Bob Jones") == ("<PERSON>", Counter(PERSON=1))


def test_a_deny_list_works_with_every_detector_off() -> None:
    config = PrivacyConfig(entities=(), ner=False, detect_secrets=False, deny=("falcon",))
    assert Anonymizer(config).anonymize_text("Falcon ok") == (
        "<DENY_LIST> ok",
        Counter(DENY_LIST=1),
    )
    off = PrivacyConfig(anonymize_pii=False, deny=("falcon",))
    assert Anonymizer(off).anonymize_text("Falcon ok") == ("Falcon ok", Counter())


# --- the pipeline --------------------------------------------------------------------------


def _sample() -> dict[str, Any]:
    return {
        "sample_id": "0f0e0d0c-0b0a-4908-8706-050403020100",
        "sample_family": "plan_correction",
        "created_at": "2024-05-01T12:00:00+00:00",
        "input": {"prompt": "Update the Swift package to Alamofire 5.9 for Project Falcon"},
        "output": {"plan": "mail ops@hq.corp, then close TICKET-9"},
        "state": {"note": "Dana Whitfield approved"},
        "feedback": {"source": "human", "details": {"comment": "acme wants it"}},
        "meta": {"project_id": "acme"},
    }


def test_the_pipeline_applies_both_lists_to_the_payload(listed: Anonymizer) -> None:
    out, counts = apply_privacy(_sample(), listed)
    assert "Alamofire 5.9 for <DENY_LIST>" in out["input"]["prompt"]
    assert out["output"]["plan"] == "mail ops@hq.corp, then close <DENY_LIST>"
    assert out["state"]["note"] == "Dana Whitfield approved"
    assert out["feedback"]["details"]["comment"] == "<DENY_LIST> wants it"
    assert out["meta"] == {"project_id": "acme"}  # the envelope is never modified
    assert counts["DENY_LIST"] == 3


def test_learnstream_config_counts_the_denied_items_and_never_shows_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from learnstream.streams.config.effective import effective, env_lines

    monkeypatch.setenv("LEARNSTREAM_PRIVACY__DENY", json.dumps(["Project Falcon", r"re:acme-\d+"]))
    settings = Settings()
    assert settings.privacy.deny == ("Project Falcon", r"re:acme-\d+")  # in force, unchanged
    shown = "\n".join(env_lines(settings)) + json.dumps(effective(settings))
    assert "Falcon" not in shown
    assert "acme" not in shown
    assert effective(settings)["privacy"]["deny"] == ["**********", "**********"]
