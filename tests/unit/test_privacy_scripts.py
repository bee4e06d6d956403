"""Names in Greek, Cyrillic and capitals inside English text: what is masked and kept.

A Greek name reads like a Cyrillic one (English text switches script for little else),
but one or two Greek letters are symbols. A run of words in capitals is a name only when
no word of it is English, a product's, a package's word or vowel-less, and the text
around it is written in lower case.
"""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.capitals import capitals_runs
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.words import tokens


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Why is Γιώργος so quiet today?", "Γιώργος"),
        ("Send the draft to Ελένη Παπαδοπούλου before Friday.", "Παπαδοπούλου"),
        ("the rollback was signed off by Κωνσταντίνος yesterday", "Κωνσταντίνος"),
        # before a capitalised word the English parse takes them for a verb or a thing
        ("The audit ran late. Оксана Ковальчук Afterwards the team shipped it.", "Ковальчук"),
        ("Budgets were cut. Ελένη Παππά Meanwhile the migration went on.", "Παππά"),
        # in capitals inside lower-case text
        ("the ticket was approved by DANA WHITFIELD yesterday", "WHITFIELD"),
        ("please ask KOFI MENSAH to sign off the change", "KOFI"),
        # a word for a language in the sentence before glosses nothing in this one
        ("Update the glossary term. Ask 刘雷 to review it.", "刘雷"),
        ("Renamed the Greek locale.\nОксана signed it off.", "Оксана"),
    ],
)
def test_a_greek_cyrillic_or_capitals_name_in_english_text_is_masked(
    anonymizer: Anonymizer, text: str, name: str
) -> None:
    out, counts = anonymizer.anonymize_text(text)
    assert name not in out, out
    assert counts["PERSON"] >= 1


@pytest.mark.parametrize(
    "text",
    [
        "Set the step size Δt to 0.1 and keep μ below the mean",  # symbols, not words
        "The Greek word λόγος means reason",  # a word of the language, glossed
        "Add the 中文 locale. It was missing.",  # the gloss in the run's own sentence
        "Tune α and β before the next training run",
    ],
)
def test_greek_symbols_and_glossed_words_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    "text",
    [
        "Read the MIT LICENSE before you ship the build",  # an English word
        "the HTTP GET request returns the JSON body",  # vowel-less and English words
        "set NODE_ENV to production and run the build",  # code, not letters
        "PLEASE READ THE README FIRST",  # a shouted line: no lower-case text around it
        "move the CSV files to the archive bucket",  # one word in capitals is an acronym
        "run the MORGAN CE build before the review",  # two capitals are an acronym
    ],
)
def test_acronyms_and_shouting_in_capitals_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_capitals_runs_are_two_to_four_name_words_in_lower_case_text() -> None:
    text = "approved by DANA WHITFIELD, then by KOFI and the MIT LICENSE team"
    assert [text[a:b] for a, b in capitals_runs(tokens(text))] == ["DANA WHITFIELD"]
    shouted = "APPROVED BY DANA WHITFIELD"
    assert capitals_runs(tokens(shouted)) == []
