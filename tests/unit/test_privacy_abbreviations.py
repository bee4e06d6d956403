"""A name beside an abbreviation a message writes in capitals ("Dana Whitfield PTAL",
"ask Dana Whitfield ASAP") is still masked: NER reads the abbreviation into the name's
span, and the abbreviation is no product's acronym."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.names import name_spans
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.words import is_code_shaped


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("Ask Dana Whitfield ASAP about the deploy", "Ask <PERSON> ASAP about the deploy"),
        ("Dana Whitfield PTAL", "<PERSON> PTAL"),
        ("Hand it to Dana Whitfield ASAP", "Hand it to <PERSON> ASAP"),
        ("Dana Whitfield FYI", "<PERSON> FYI"),
        ("FYI Dana Whitfield, the deploy is done", "FYI <PERSON>, the deploy is done"),
        ("Dana Whitfield OOO until Monday", "<PERSON> OOO until Monday"),
        ("LGTM Dana Whitfield", "LGTM <PERSON>"),
        # only in capitals: a name written like one of them is the name's
        ("Please ask Tia Johnson about the deploy", "Please ask <PERSON> about the deploy"),
    ],
)
def test_a_name_beside_a_message_abbreviation_is_masked(
    anonymizer: Anonymizer, text: str, out: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == out


@pytest.mark.parametrize(
    "text",
    [
        "Update Firefox ESR to 128",  # an acronym a product's name ends in stays a product
        "Move the data to Amazon S3 ASAP",
        "Upgrade Apache Kafka ASAP",
    ],
)
def test_products_beside_an_abbreviation_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


def test_ner_span_is_cut_before_the_abbreviation_only() -> None:
    text = "Ask Dana Whitfield ASAP"
    assert name_spans(text, [("PERSON", 4, 23)]) == [("PERSON", 4, 18)]
    assert name_spans("Ask Tia Johnson ASAP", [("PERSON", 4, 20)]) == [("PERSON", 4, 15)]
    # nothing cut: NER's span keeps the possessive it read
    said = "Dana Whitfield's review"
    assert name_spans(said, [("PERSON", 0, 16)]) == [("PERSON", 0, 16)]


def test_an_abbreviation_is_not_code_shaped_but_a_long_acronym_is() -> None:
    assert not is_code_shaped("ASAP")
    assert not is_code_shaped("PTAL")
    assert is_code_shaped("ONNX")
