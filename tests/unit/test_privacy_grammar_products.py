"""Shapes of product names the grammar tells from people's names: a capitalised word
modifying an acronym ("Firefox ESR"); and an npm scope written alone."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.pii import Anonymizer


@pytest.mark.parametrize(
    "text",
    [
        "Spanish language pack for Thunderbolt ESR",  # a word, then an acronym it qualifies
        "Client library for Quorvex AI",
        "Parser for Brindle MT messages",
        "Command-line tool for Zarvo Bricks NXT",  # through a chain of proper nouns
        "Bindings to the Tarrow Workspace API",
        "Plugin for Pellow S3 cloud storage",  # an acronym with a digit, inside the chain
    ],
)
def test_a_word_modifying_an_acronym_is_a_product(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "out"),
    [
        # a degree or a job title after a name is no product's acronym
        ("Send the report to Dana Whitfield MD today", "Send the report to <PERSON> today"),
        ("Ask Dana Whitfield CEO about the budget", "Ask <PERSON> CEO about the budget"),
        ("Hand the form to Oskar Tremmlin HR now", "Hand the form to <PERSON> HR now"),
        ("Ask Dana Whitfield (HR) to sign", "Ask <PERSON> (HR) to sign"),
    ],
)
def test_names_beside_an_acronym_are_still_masked(
    anonymizer: Anonymizer, text: str, out: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == out


def test_a_handle_the_text_also_writes_as_an_npm_scope_is_the_scope(
    anonymizer: Anonymizer,
) -> None:
    text = "@zorbel plugin built on top of @zorbel/core to publish release notes"
    assert anonymizer.anonymize_text(text)[0] == text
    out = anonymizer.anonymize_text("ping @zorbel about the @quill/core release")[0]
    assert out == "ping <USERNAME> about the @quill/core release"
