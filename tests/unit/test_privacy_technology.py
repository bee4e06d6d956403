"""Software words, hyphenated compounds of things, modifier chains, places beside products.

The sentences are written for these tests; none comes from a benchmark corpus.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from learnstream.streams.privacy.names import name_spans
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.technology import TECH_FILE, build, is_tech_word, parts
from learnstream.streams.privacy.words import is_name_word


def test_the_shipped_list_holds_software_words_and_no_english_or_listed_names() -> None:
    with gzip.open(TECH_FILE, "rt", encoding="utf-8") as f:
        words = set(f.read().split())
    assert {"pylint", "pulumi", "qiskit"} <= words
    assert not {"dana", "kevin", "smith", "robot", "mode"} & words


def test_parts_counts_each_package_name_once() -> None:
    counts = parts(["zorb-cli", "zorb_utils", "ZORB-CLI", "@acme/zorb-ui", "xy-zorb"])
    assert counts["zorb"] == 4  # zorb-cli, zorb_utils, zorb-ui, xy-zorb
    assert "xy" not in counts  # two letters: too short to tell anything


def test_build_keeps_words_of_many_names_that_the_word_list_does_not_hold(tmp_path: Path) -> None:
    python = tmp_path / "python.tsv"
    npm = tmp_path / "npm.tsv"
    rows = [f"zorb-{i}\t1.0\t\t\t" for i in range(6)] + [f"dana-{i}\t1.0\t\t\t" for i in range(12)]
    rows += [f"popular-{i}\t1.0\t\t{i + 1}\t" for i in range(12)]  # ranked: left out
    python.write_text("name\tversion\tmonth\trank_among_15000_most_downloaded\tsummary\n"
                      + "\n".join(rows) + "\n")  # fmt: skip
    npm.write_text("name\tversion\tdownloads\tsummary\n"
                   + "\n".join(f"zorb-js-{i}\t1\t1\t" for i in range(5)) + "\n")  # fmt: skip
    word_list = tmp_path / "words"
    word_list.write_text("Dana\nrobot\n")
    out = tmp_path / "tech.txt.gz"
    assert build(python, npm, word_list, out) == 1
    with gzip.open(out, "rt", encoding="utf-8") as f:
        assert f.read().split() == ["zorb"]  # 11 names; Dana is a name there; popular ranked


@pytest.mark.parametrize(
    "text",
    [
        "Lint the module with Pylint before the release.",
        "Provision the buckets with Pulumi, then tag them.",
        "Run the circuit on Qiskit Runtime overnight.",
    ],
)
def test_a_lone_software_word_is_not_a_person(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_a_full_name_keeps_a_word_that_is_also_a_package_word() -> None:
    text = "Send the report to Marko Petrovski today."
    at = text.index("Marko")
    found = [("PERSON", at, at + len("Marko Petrovski"))]
    assert name_spans(text, found) == found


@pytest.mark.parametrize(
    ("word", "name"),
    [("Font-Awesome", False), ("Python-Markdown", False), ("Open-Source", False),
     ("Smith-Jones", True), ("Anne-Sophie", True), ("Jean-Luc", True)],
)  # fmt: skip
def test_a_hyphenated_word_of_things_is_no_name(word: str, name: bool) -> None:
    assert is_name_word(word) is name


def test_a_hyphenated_word_of_things_is_left_in_text(anonymizer: Anonymizer) -> None:
    text = "Icons from Font-Awesome for the toolbar."
    assert anonymizer.anonymize_text(text)[0] == text


def test_is_tech_word_ignores_case() -> None:
    assert is_tech_word("Pylint")
    assert is_tech_word("PYLINT")


@pytest.mark.parametrize(
    "text",
    [
        "Logs from the Ismene VPN gateway",  # Ismene -> VPN -> gateway
        "Plugins for the Tamsin KDE mail libraries",
    ],
)
def test_a_word_modifying_a_noun_through_proper_nouns_is_a_thing(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    "text", ["Ask the Dana Whitfield team to sign off.", "I met a Cecilie Josefsen fan."]
)
def test_a_full_name_modifying_a_noun_stays_a_name(anonymizer: Anonymizer, text: str) -> None:
    assert "<PERSON>" in anonymizer.anonymize_text(text)[0]


@pytest.mark.parametrize(
    "text",
    [
        "Manuals for the GIMP (Portugal)",  # beside four capitals
        "Translations for the GNOME (Brazil) desktop",
        "Ports for NetBSD, Chile and OpenBSD",  # listed with camel-case names
    ],
)
def test_a_one_word_place_beside_or_listed_with_a_products_word_is_kept(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_a_place_in_prose_is_still_masked(anonymizer: Anonymizer) -> None:
    assert "<LOCATION>" in anonymizer.anonymize_text("Ask Dana in Berlin about it.")[0]


@pytest.mark.parametrize(
    "text",
    [
        "the worker got SIGTERM and the client saw connect ECONNREFUSED on retry",
        "the job died with SIGSEGV after ETIMEDOUT from the broker",
    ],
)
def test_signal_and_error_names_in_logs_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_the_systems_names_are_software_words_a_person_beside_them_is_not() -> None:
    assert is_tech_word("SIGTERM")
    assert is_tech_word("econnrefused")
    assert not is_tech_word("Whitfield")
