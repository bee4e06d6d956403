"""Names found by the role the parse gives them (``roles.py``): the subject of a verb of
speaking, who is spoken at or to, the indirect object of a person's giving, the subject of a
clause with "his" or "her" in it; and sentences of the same shapes about programs left."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.roles import (
    GIVING,
    SPEAKING,
    may_hold_one_case_name,
    may_take_role,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Ines yelled at Tomasz: "Where is the pager?"',
            '<PERSON> yelled at <PERSON>: "Where is the pager?"',
        ),
        ("Not again, muttered Oskar to Lene", "Not again, muttered <PERSON> to <PERSON>"),
        ("Ольга whispered to Пётр.", "<PERSON> whispered to <PERSON>."),
    ],
)
def test_who_speaks_and_who_is_spoken_to_are_people(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Oskar had handed Lene his keys.", "<PERSON> had handed <PERSON> his keys."),
        ("Brannigan sold his old guitars.", "<PERSON> sold his old guitars."),
        (
            "Tavish is back from leave. Ask him first.",  # the next sentence's
            "<PERSON> is back from leave. Ask him first.",
        ),
        (
            "Okafor began painting at school, selling her first canvas in 2001.",
            "<PERSON> began painting at school, selling her first canvas in 2001.",
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
        ("ines yelled at tomasz: why?", "<PERSON> yelled at <PERSON>: why?"),
        ("INES yelled at TOMASZ: why?", "<PERSON> yelled at <PERSON>: why?"),
        ("oskar gave lene his keys", "<PERSON> gave <PERSON> his keys"),
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

    text = "BRANNIGAN sold his HTTP guitars to ines."
    out = recased(text, [])
    assert out == "Brannigan sold his HTTP guitars to Ines."  # acronyms, English kept
    assert len(out) == len(text)
    assert recased(text, [("PERSON", 0, 9)]).startswith("BRANNIGAN")  # a span found keeps its case


def test_a_name_in_capitals_opening_a_clause_with_his_is_masked(anonymizer: Anonymizer) -> None:
    out = anonymizer.anonymize_text("BRANNIGAN sold his old guitars.")[0]
    assert out == "<PERSON> sold his old guitars."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Brisvane is a kind person.", "<PERSON> is a kind person."),
        ("Tremmlin was my best friend at school.", "<PERSON> was my best friend at school."),
        (
            "The shop is the brainchild of its two founders: Orvell and Brisvane.",
            "The shop is the brainchild of its two founders: <PERSON> and <PERSON>.",
        ),
    ],
)
def test_a_noun_for_a_person_marks_the_name_it_is_said_of(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Zenity is a small tool for dialogs.",  # a copula, no noun for a person
        "Kestrel is a friendly parser for people in a hurry.",  # the noun is no attribute
        "The plugins of its two authors: Flake8 and Pylint.",  # no noun for a person
    ],
)
def test_the_same_shapes_about_programs_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Brisvane is from Tollard Corp", "<PERSON> is from <PERSON>"),
        ("Orvell was from Tollard Ltd", "<PERSON> was from <PERSON>"),
    ],
)
def test_who_is_from_a_place_or_a_firm_is_a_person(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Zenity is from the GNOME project.",  # a determiner: what a program is part of
        "Kestrel is from upstream.",  # no name after "from"
    ],
)
def test_what_a_program_is_from_is_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Kai whispered to Orvell about the pager.",
            "<PERSON> whispered to <PERSON> about the pager.",
        ),
        ("Kai shouted at Orvell.", "<PERSON> shouted at <PERSON>."),
    ],
)
def test_who_shouts_or_whispers_is_a_person_even_with_a_tools_word(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Pylint says the import is unused.",  # programs say things
        "Kafka yelled at Flink.",  # products' names
    ],
)
def test_tools_that_say_things_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_recasing_around_spans_found_puts_back_only_their_words() -> None:
    from learnstream.streams.privacy.roles import recased, recased_beside

    text = "ask keith BRANNIGAN and ines about it"
    spans = [("PERSON", 4, 19)]
    assert recased_beside(text, recased(text, []), spans) == recased(text, spans)
    assert recased_beside(text, recased(text, []), []) == recased(text, [])


def test_a_long_first_line_heads_no_contact_block() -> None:
    from learnstream.streams.privacy.names import may_head

    assert may_head("}} Dana K. Whitfield\n14 Harrowgate Lane")
    assert not may_head("Ask Dana about the report before Friday\n14 Harrowgate Lane")


def test_a_lone_letter_between_words_in_one_case_is_read_as_an_initial() -> None:
    from learnstream.streams.privacy.roles import recased

    assert recased("ask keith k. pellacott", []) == "ask Keith K. Pellacott"
    assert recased("put a flag on x y z", []) == "put a flag on x y z"


def test_words_in_one_case_inside_an_address_or_a_path_get_no_reading() -> None:
    from learnstream.streams.privacy.roles import one_case_reading, recased

    def reading(text: str) -> str | None:
        return one_case_reading(text, [], recased(text, []))

    # "dana" reads as a name, but only inside the address; the tag is no name either
    assert reading("Fix the error reported by dana.whitfield@example.org (ref qzvkrbta)") is None
    assert reading("see src/keith/pellacott_utils.py (ref qzvkrbta)") is None
    # a name outside the address or the path is still read
    assert reading("mail keith pellacott at dana.whitfield@example.org") is not None
    assert reading("said GRETA to GREGORY about build_keith.log") is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Fix the login error reported by dana.whitfield@example.org (ref qzvkrbta)",
            "Fix the login error reported by <EMAIL_ADDRESS> (ref qzvkrbta)",
        ),
        (
            "mail keith pellacott at dana.whitfield@example.org",
            "mail <PERSON> at <EMAIL_ADDRESS>",
        ),
        (
            "said GRETA to GREGORY about build_keith.log",
            "said <PERSON> to <PERSON> about build_keith.log",
        ),
    ],
)
def test_a_name_in_one_case_beside_an_address_or_a_path_is_masked(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "may"),
    [
        ("ask greta orvick about it", True),
        ("cc greta k. orvick", True),  # an initial between keeps the pair
        ("keith, greta and sophia", True),
        ("GRETA ORVICK approved", True),
        ("greta, orvick", True),
        ("greta", False),
        ("greta is orvick", False),  # a word of two letters between ends it
        ("greta - orvick", False),
        ("deploy the service now", False),
    ],
)
def test_the_one_case_gate_asks_for_two_words_in_one_case_side_by_side(
    text: str, may: bool
) -> None:
    assert may_hold_one_case_name(text) is may
