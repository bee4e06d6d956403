"""Names found by the role the parse gives them (``roles.py``): the subject of a verb of
speaking, who is spoken at or to, the indirect object of a person's giving, the subject of a
clause with "his" or "her" in it; and sentences of the same shapes about programs left."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.roles import GIVING, SPEAKING, may_take_role


@pytest.fixture(scope="module")
def anonymizer() -> Anonymizer:
    """Build the default anonymizer once (loading the NER model is slow)."""
    return Anonymizer(PrivacyConfig())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Sophia shouted at Tomasz: "What are you doing here?"',
            '<PERSON> shouted at <PERSON>: "What are you doing here?"',
        ),
        ("I'm so jealous! said Hans to Kíra", "I'm so jealous! said <PERSON> to <PERSON>"),
        ("Иван shouted at Пётр.", "<PERSON> shouted at <PERSON>."),
    ],
)
def test_who_speaks_and_who_is_spoken_to_are_people(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Richard had given Maja his address.", "<PERSON> had given <PERSON> his address."),
        ("Kinsey listed his top 20 songs.", "<PERSON> listed his top 20 songs."),
        (
            "Cintia is very reliable. You can always depend on him.",  # the next sentence's
            "<PERSON> is very reliable. You can always depend on him.",
        ),
        (
            "Marrero began writing as a teenager, publishing her first story in 1999.",
            "<PERSON> began writing as a teenager, publishing her first story in 1999.",
        ),
    ],
)
def test_a_persons_giving_and_pronouns_mark_names(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "It sends Hunspell the word list.",  # a program's subject gives a program
        "Give Zorbel more memory and restart it.",  # an imperative: no subject
        "Zenity shows a dialog and returns the answer.",  # not a verb of speaking
        "Zorbel reports its status to Prometheus.",  # "its": a thing's pronoun
        "Deploy is blocked until Zorbel passes.",
        "Zorbel is fast. It scales to many nodes.",
        "Zorbel is a parser. Its author says he wrote it in C.",  # "he": someone else
        "Zorbel complained about a missing key at startup.",  # compilers complain
    ],
)
def test_the_same_shapes_about_programs_are_left(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_the_verbs_come_in_every_form_and_gate_the_parse() -> None:
    assert {"shout", "shouts", "shouted", "shouting", "said"} <= SPEAKING
    assert {"give", "gave", "given", "sent", "handed"} <= GIVING
    assert not {"report", "reports", "explain", "replied", "asked"} & SPEAKING
    assert may_take_role("Dana whispered to Priya")
    assert not may_take_role("Dana approved it")  # no verb or pronoun of the rules
    assert not may_take_role("the build shouted")  # no name-shaped word


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sophia shouted at tomasz: what?", "<PERSON> shouted at <PERSON>: what?"),
        ("SOPHIA shouted at TOMASZ: what?", "<PERSON> shouted at <PERSON>: what?"),
        ("richard had given maja his address", "<PERSON> had given <PERSON> his address"),
    ],
)
def test_a_role_marks_a_name_in_lower_case_or_capitals(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "HTTP said no",  # an acronym: no vowel
        "The RFC says so",  # a determiner: no name takes one
        "RFC 2231 says so",  # nor a number
        "The API told him no.",
        "the server told zorbel to stop",  # an object told, not a recipient given
        "update his profile photo",  # no name-shaped word in a role
    ],
)
def test_acronyms_and_words_in_one_case_elsewhere_are_left(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_words_in_one_case_are_title_cased_for_the_parse_in_place() -> None:
    from learnstream.streams.privacy.roles import recased

    text = "KINSEY listed his top 20 HTTP songs with sophia."
    out = recased(text, [])
    assert out == "Kinsey listed his top 20 HTTP songs with Sophia."  # acronyms, English kept
    assert len(out) == len(text)
    assert recased(text, [("PERSON", 0, 6)]).startswith("KINSEY")  # a span found keeps its case


def test_a_name_in_capitals_opening_a_clause_with_his_is_masked(anonymizer: Anonymizer) -> None:
    out = anonymizer.anonymize_text("KINSEY listed his top 20 songs.")[0]
    assert out == "<PERSON> listed his top 20 songs."
