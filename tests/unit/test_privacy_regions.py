"""A country, a continent, a language or a writing system names no one: NER reads them as
places, and they stay in a sample; a city is still masked, and so is a person named like a
country (streams/privacy/regions.py)."""

from __future__ import annotations

import gzip

import pytest

from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.regions import REGIONS_FILE, is_region, names


@pytest.mark.parametrize(
    "text",
    [
        "Support Latin, Greek and Cyrillic characters in the PDF export",
        "Serve the map tiles for western Sudan and eastern Chad",
        "Price the plans for customers in Peru and Spain",
    ],
)
def test_a_country_or_a_script_stays(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("Open the support office in Manchester", "Open the support office in <LOCATION>"),
        ("Ask Georgia Whitfield to approve the plan", "Ask <PERSON> to approve the plan"),
    ],
)
def test_a_city_and_a_person_named_like_a_country_are_masked(
    anonymizer: Anonymizer, text: str, out: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == out


def test_is_region_reads_the_whole_span_in_any_case() -> None:
    found = ["Cambodia", "cyrillic", "South  America", "(Spain),"]  # the last as NER cuts it
    assert [is_region(text) for text in found] == [True] * 4
    assert [is_region(text) for text in ("Manchester", "Cambodia office")] == [False, False]


def test_glossed_names_give_their_parts_and_no_digits() -> None:
    written = ["Bengali (Bangla)", "Modern Greek (1453-)"]
    assert list(names(written)) == ["bengali (bangla)", "bengali", "bangla", "modern greek"]


def test_the_shipped_list_holds_countries_scripts_languages_and_continents() -> None:
    with gzip.open(REGIONS_FILE, "rt", encoding="utf-8") as f:
        shipped = set(f.read().splitlines())
    assert {"cambodia", "spain", "cyrillic", "devanagari", "japanese", "europe"} <= shipped
    assert len(shipped) > 900
    assert not {"manchester", "london", "frankfurt"} & shipped  # cities are no country
