"""Names two population records vouch for (``streams/privacy/namelists.py``).

The sentences are written here in the shapes the recall benchmark's dev split leaked
(a full name between words the parser reads as its modifiers, a name in capitals) and the
shapes technical text has that must stay (a product's name, a pair in lower case).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from learnstream.streams.privacy import namelists
from learnstream.streams.privacy.namelists import (
    SortedWords,
    is_given_name,
    is_surname,
    listed_names,
)
from learnstream.streams.privacy.pii import Anonymizer


def _spans(text: str, found: list[tuple[str, int, int]] | None = None) -> list[str]:
    return [text[a:b] for _, a, b in listed_names(text, found or [])]


def test_the_records_are_read_with_accents_dropped() -> None:
    assert is_given_name("Stephanie")
    assert is_given_name("STEPHANIE")
    assert is_surname("Costa")
    assert is_surname("Bélanger")
    assert not is_given_name("Platform")
    assert not is_surname("Kubernetes")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Call entire Stephanie Costa easy option.", "Stephanie Costa"),  # modifiers, to the parse
        ("Sea north form Scott Manning author", "Scott Manning"),
        ("century player LENA PELOQUIN present voice", "LENA PELOQUIN"),
        ("Ana Sousa Pereira approved the rollback", "Ana Sousa Pereira"),
    ],
)
def test_a_given_name_and_surnames_are_a_name_wherever_they_stand(text: str, name: str) -> None:
    assert _spans(text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "Ask the Platform Team to approve",  # no given name
        "If the flag is given, the fields will be JSON.",  # lower case: an English phrase
        "Grant SELECT on the orders table",  # two cases: a verb and a keyword
        "Stephanie, Costa and Reis",  # punctuation ends the name
        "see https://example.org/Stephanie_Costa for the notes",  # inside a URL
        "Update the Swift package to Alamofire 5.9",
    ],
)
def test_shapes_that_name_things_are_not_listed_names(text: str) -> None:
    assert _spans(text) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Better case environmental beautiful Sygietyńska project.", ["Sygietyńska"]),
        ("Escalate it to Hošťálek before the window.", ["Hošťálek"]),
        ("Cell find husband up. Kittlová Record six", []),  # opening a sentence: any word
        ("The café opens at nine; ask ΠΑΠΑΣ", []),  # lower case; Greek is read elsewhere
        ("Set RÉSUMÉ_DIR and restart", []),  # capitals: an acronym's or a constant's
    ],
)
def test_a_word_spelt_with_letters_english_does_not_use_is_a_name(
    text: str, names: list[str]
) -> None:
    assert _spans(text) == names


def test_a_model_span_is_vouched_for_only_by_rare_listed_names() -> None:
    text = "Carry way to unit Guyon benefit. A lexer for Ruby in a host file."
    guyon, ruby = text.index("Guyon"), text.index("Ruby")
    found = [("PERSON", guyon, guyon + 5), ("PERSON", ruby, ruby + 4)]
    # "Ruby" is a given name, and the English word list gives it capitalised: a language
    assert _spans(text, found) == ["Guyon"]


def test_a_model_span_after_an_article_is_a_things_name() -> None:
    text = "A Pettersen package for managing storage buckets."
    assert _spans(text, [("PERSON", 2, 11)]) == []
    assert _spans("Ask Pettersen first.", [("PERSON", 4, 13)]) == ["Pettersen"]


def test_the_anonymizer_masks_a_listed_name_the_grammar_dropped(anonymizer: Anonymizer) -> None:
    out, counts = anonymizer.anonymize_text("Call entire Stephanie Costa easy option.")
    assert out == "Call entire <PERSON> easy option."
    assert counts["PERSON"] == 1


def test_build_keeps_the_first_column_lower_cased_letters_only(tmp_path: Path) -> None:
    given, surnames = tmp_path / "given.csv", tmp_path / "surnames.csv"
    given.write_text("name,white\nAARON,0.9\nJO ANN,0.5\nABBAS,0.7\n", encoding="utf-8")
    surnames.write_text("name,white\nSMITH,0.7\nO'NEIL,0.8\n", encoding="utf-8")
    out_given, out_surnames = tmp_path / "g.txt.gz", tmp_path / "s.txt.gz"
    assert namelists.build(given, surnames, out_given, out_surnames) == (2, 1)
    with gzip.open(out_given, "rt") as written:
        assert written.read().split() == ["aaron", "abbas"]
    with gzip.open(out_surnames, "rt") as written:
        assert written.read().split() == ["smith"]


def test_sorted_words_finds_each_word_and_nothing_between() -> None:
    words = SortedWords(b"aab\nbelanger\ncosta\nzywiec\n")
    assert len(words) == 4
    assert [w for w in ("aab", "belanger", "costa", "zywiec") if words.holds(w)] == [
        "aab",
        "belanger",
        "costa",
        "zywiec",
    ]
    assert not any(words.holds(w) for w in ("", "aa", "aaba", "bel", "cost", "zz", "zywie"))


def test_the_shipped_surnames_are_sorted_as_bytes_so_each_is_found() -> None:
    with gzip.open(namelists.SURNAME_FILE, "rt", encoding="utf-8") as stream:
        listed = stream.read().split()
    assert len(listed) > 150_000
    assert listed == sorted(listed, key=str.encode)
    assert all(is_surname(w) for w in listed[::101])
