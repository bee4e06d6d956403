"""The never-a-name word list: what it holds, how it is built, how the name rules use it."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from learnstream.streams.privacy.dictionary import (
    WORDS_FILE,
    build,
    build_capitalised,
    is_capitalised_word,
    is_common_word,
)
from learnstream.streams.privacy.names import name_spans
from learnstream.streams.privacy.words import is_code_shaped


def test_the_shipped_list_holds_words_that_are_never_names() -> None:
    with gzip.open(WORDS_FILE, "rt", encoding="utf-8") as f:
        words = f.read().split()
    assert len(words) > 50_000
    assert words == sorted(set(words))
    for word in ("mode", "robot", "snowflake", "framework", "server", "Dark"):
        assert is_common_word(word), word
    # a word the list also gives with a capital is somewhere a name: never in the list
    for word in ("mark", "grace", "baker", "young", "will", "rose", "dana", "jupyter"):
        assert not is_common_word(word), word


def test_build_keeps_lower_case_words_whose_capitalised_form_is_not_listed(
    tmp_path: Path,
) -> None:
    source = tmp_path / "words"
    source.write_text("Mark\nmark\nmode\nBaker\nbaker\nrobot\nNASA\nnasa\nrobot's\nx-ray\n")
    out = tmp_path / "common.txt.gz"
    assert build(source, out) == 2
    assert gzip.decompress(out.read_bytes()).decode() == "mode\nrobot\n"
    first = out.read_bytes()
    build(source, out)
    assert out.read_bytes() == first  # the same list, the same bytes


@pytest.mark.parametrize(
    ("text", "phrase"),
    [("Detect OS Dark Mode from Python", "Dark Mode"),
     ("a Robot Framework test library", "Robot Framework"),
     ("Python wrapper of a Finite State Machine library", "Finite State Machine"),
     ("ASN.1 to C or C++ compiler", "C")],  # one letter: a language, no one's name
)  # fmt: skip
def test_a_span_of_common_words_is_a_phrase_not_a_person(text: str, phrase: str) -> None:
    at = text.index(phrase)
    assert name_spans(text, [("PERSON", at, at + len(phrase))]) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [("Ask Grace Baker to approve", "Grace Baker"),
     ("Rejected: Rose Hill is on leave", "Rose Hill"),
     ("Escalate to Mark Young today", "Mark Young")],
)  # fmt: skip
def test_a_name_with_a_word_that_is_somewhere_a_name_stays(text: str, name: str) -> None:
    at = text.index(name)
    assert name_spans(text, [("PERSON", at, at + len(name))]) == [("PERSON", at, at + len(name))]


@pytest.mark.parametrize(
    ("text", "phrase"),
    [("Python client for the Hetzner Cloud API", "Hetzner Cloud"),  # a product's noun
     ("Cards package for Microsoft Teams", "Microsoft Teams")],
)  # fmt: skip
def test_a_span_holding_a_never_a_name_word_is_a_thing(text: str, phrase: str) -> None:
    at = text.index(phrase)
    assert name_spans(text, [("PERSON", at, at + len(phrase))]) == []


@pytest.mark.parametrize(
    "text",
    ["Write Styler to an Excel sheet.",  # an imperative opens the title
     "While Cppcheck is configurable, it is slow"],
)  # fmt: skip
def test_a_run_an_opening_common_word_made_is_no_name(text: str) -> None:
    assert name_spans(text, []) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [("Meanwhile Dana Whitfield approved the plan", "Dana Whitfield"),  # the opener is cut
     ("Name: Drergir Fondlork\nPhone: 555", "Drergir Fondlork"),  # not widened over "Phone"
     ("the verses from Amber Whitlock's Cautionary Tales", "Amber Whitlock")],
)  # fmt: skip
def test_a_name_is_kept_apart_from_the_common_words_around_it(text: str, name: str) -> None:
    at = text.index(name)
    assert name_spans(text, [("PERSON", at, at + len(name))]) == [("PERSON", at, at + len(name))]


@pytest.mark.parametrize(
    ("text", "span", "kept"),
    [("SAM 2: Segment Anything in Images and Videos", "Images", False),  # never a name
     ("Natural strings sorting in Go", "Go", False),
     ("The offsite is in Leeds this year", "Leeds", True)],  # a town is a name in the list
)  # fmt: skip
def test_a_place_of_one_never_a_name_word_is_dropped(text: str, span: str, kept: bool) -> None:
    at = text.index(span)
    found = [("LOCATION", at, at + len(span))]
    assert name_spans(text, found) == (found if kept else [])


@pytest.mark.parametrize(
    ("word", "shaped"),
    [("Airflow", True), ("EventBridge", True), ("ONNX", True), ("Web3", True),
     ("IBM", False), ("CEO", False), ("PhD", False), ("Dana", False), ("McDonald", False)],
)  # fmt: skip
def test_code_shaped_words(word: str, shaped: bool) -> None:
    assert is_code_shaped(word) is shaped


def test_build_capitalised_keeps_the_words_given_with_a_capital(tmp_path: Path) -> None:
    source = tmp_path / "words"
    source.write_text("Morrow\nMorrow's\nmark\nMark\nNASA\nEd\nrobot\nZoë\n")
    out = tmp_path / "capitalised.txt.gz"
    assert build_capitalised(source, out) == 2
    assert gzip.decompress(out.read_bytes()).decode() == "mark\nmorrow\n"


def test_the_shipped_capitalised_list_holds_names_not_plain_words() -> None:
    for word in ("morrow", "bellamy", "mark", "Quinn"):
        assert is_capitalised_word(word), word
    for word in ("xattrs", "robot", "namespace"):
        assert not is_capitalised_word(word), word
