"""A name spoken to ("Dana, could you …") and a titled name before an envelope's flat.

The sentences are written for these tests; none comes from a benchmark corpus.
"""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.names import may_hold_name
from learnstream.streams.privacy.pii import Anonymizer


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Renata, can I take the pager tonight?", "Renata"),
        ("Dana, could you rerun the nightly job?", "Dana"),
        ("Olusegun, you own this one.", "Olusegun"),
        ("Thanks. Ingeborg, would you review the diff?", "Ingeborg"),
    ],
)
def test_a_name_spoken_to_is_masked(anonymizer: Anonymizer, text: str, name: str) -> None:
    assert may_hold_name(text)
    out = anonymizer.anonymize_text(text)[0]
    assert name not in out
    assert "<PERSON>" in out


@pytest.mark.parametrize(
    "text",
    [
        "Deploy, then verify the canary.",
        "Sometimes, can we skip the smoke test?",
        "Kafka, can I ask why the lag grows?",  # a known product
        "Meanwhile, could you tag the release?",
    ],
)
def test_a_word_before_a_comma_and_a_question_is_not_always_a_name(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Mrs. Dana Whitfield Apt. 4 12 Harrow Lane", "Whitfield"),
        ("Dr. Priya Raman Suite 200 44 Mill Road", "Raman"),
    ],
)
def test_a_titled_name_before_a_flat_is_masked(
    anonymizer: Anonymizer, text: str, name: str
) -> None:
    out = anonymizer.anonymize_text(text)[0]
    assert name not in out
    assert out.startswith("<PERSON>")


def test_a_titled_name_keeps_the_words_after_it(anonymizer: Anonymizer) -> None:
    out = anonymizer.anonymize_text("Ms. Olga Pettersen Reports are due")[0]
    assert out == "<PERSON> Reports are due"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Quorlin and Brevatt were on call that night.", "Brevatt"),
        ("In the end Quorlin and Brevatt have signed it.", "Quorlin"),
    ],
)
def test_names_listed_before_a_plural_verb_are_masked(
    anonymizer: Anonymizer, text: str, name: str
) -> None:
    assert name not in anonymizer.anonymize_text(text)[0]


@pytest.mark.parametrize(
    "text", ["Storage and Compute were scaled up.", "Kafka and Redis were restarted."]
)
def test_things_listed_before_a_plural_verb_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text
