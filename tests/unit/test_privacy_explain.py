"""``learnstream privacy explain``: each span masked, who found it, and what was let through."""

from __future__ import annotations

import json
import logging

import pytest
from click.testing import CliRunner

from learnstream.agents.cli.main import main
from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.explain import explain, render
from learnstream.streams.privacy.pii import Anonymizer

TEXT = (
    "Ask Dana Whitfield (dana.w@example.org) to approve Project Falcon; "
    "the db password is Tr0ub4dor-x9 and the tool is Alamofire"
)


@pytest.fixture(scope="module")
def anonymizer() -> Anonymizer:
    return Anonymizer(PrivacyConfig(allow=("Alamofire",), deny=("Project Falcon",)))


def test_each_span_names_its_entity_and_recognizer(anonymizer: Anonymizer) -> None:
    found = explain(anonymizer, TEXT)
    by_text = {TEXT[s.start : s.end]: (s.entity, s.recognizer) for s in found.spans}
    assert by_text["Dana Whitfield"][0] == "PERSON"
    assert by_text["Dana Whitfield"][1].startswith("names and places")
    assert by_text["dana.w@example.org"] == ("EMAIL_ADDRESS", "AnyDomainEmailRecognizer (Presidio)")
    assert by_text["Project Falcon"] == ("DENY_LIST", "deny list (LEARNSTREAM_PRIVACY__DENY)")
    assert by_text["Tr0ub4dor-x9"][1].startswith("secrets")
    assert found.masked == anonymizer.anonymize_text(TEXT)[0]  # what a sample carries
    for secret in ("Dana", "dana.w@", "Falcon", "Tr0ub4dor"):
        assert secret not in found.masked


def test_an_allowed_item_is_shown_as_left(anonymizer: Anonymizer) -> None:
    found = explain(anonymizer, TEXT)
    assert [TEXT[s.start : s.end] for s in found.allowed] == ["Alamofire"]
    assert "Alamofire" in found.masked
    assert "left: an allowed item covers it" in render(found)


def test_a_clean_text_says_nothing_is_masked(anonymizer: Anonymizer) -> None:
    found = explain(anonymizer, "run the unit tests again")
    assert (found.spans, found.allowed, found.masked) == ([], [], "run the unit tests again")
    assert render(found).endswith("nothing is masked")


def test_the_command_reads_stdin_prints_json_and_logs_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__DENY", json.dumps(["Project Falcon"]))
    with caplog.at_level(logging.DEBUG):
        result = CliRunner().invoke(main, ["privacy", "explain", "-", "--json"], input=TEXT + "\n")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["text"] == TEXT
    assert {s["text"]: s["entity"] for s in shown["spans"]}["Project Falcon"] == "DENY_LIST"
    assert "Dana Whitfield" not in shown["masked"]
    assert not [r for r in caplog.records if "Dana" in r.getMessage()]
