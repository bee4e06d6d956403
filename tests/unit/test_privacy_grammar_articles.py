"""An article opening a capitalised run is no word of a name: "A Gallagher package" is one
word modifying a common noun, which the grammar reads as a thing's name."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.grammar import worth_parsing
from learnstream.streams.privacy.pii import Anonymizer


@pytest.mark.parametrize(
    ("text", "span", "worth"),
    [
        ("A Gallagher package for training", "A Gallagher", True),  # an article, one word
        ("The Zorbel plugin", "The Zorbel", True),
        ("Ask Dana Whitfield first", "Dana Whitfield", False),  # a full name NER found
        ("Ask Dr Dana Whitfield first", "Dr Dana Whitfield", False),
    ],
)
def test_an_article_is_not_counted_as_a_word_of_a_name(text: str, span: str, worth: bool) -> None:
    at = text.index(span)
    found = [("PERSON", at, at + len(span))]
    assert worth_parsing(text, ("PERSON", at, at + len(span)), found) is worth


@pytest.mark.parametrize(
    "text",
    [
        "A Gallagher package for creating and managing cloud resources.",
        "A Pettersen package for creating and managing storage buckets.",
    ],
)  # NER calls each word a person; without the rule it is masked with its article
def test_a_lone_word_after_an_article_modifying_a_noun_is_a_thing(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    "text",
    ["I met a Cecilie Josefsen fan yesterday.", "The Dana Whitfield report is due."],
)
def test_a_full_name_modifying_a_noun_is_still_masked(anonymizer: Anonymizer, text: str) -> None:
    assert "<PERSON>" in anonymizer.anonymize_text(text)[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dana says she is a 山田太郎 fan.",
            "<PERSON> says she is a <PERSON> fan.",
        ),
        ("We read the शर्मा memo twice.", "We read the <PERSON> memo twice."),
    ],
)
def test_a_name_in_a_script_without_capitals_is_not_read_by_the_english_parse(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    ["The 中文 locale is missing.", "Unlike the Zorbel plugin, it is short."],
)  # a language's word near its gloss; a Latin word modifying a noun is still a thing
def test_glossed_scripts_and_latin_things_are_left(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text
