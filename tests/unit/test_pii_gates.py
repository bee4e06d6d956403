"""The phone regions setting, and the gates that keep Presidio off strings without PII.

Privacy is a hard rule: a gate may only skip what Presidio, asked for every configured entity
on the whole string, would not flag. The corpora are the ones the privacy and no-leak tests
plant (tests/unit/test_privacy.py, tests/unit/test_no_leaks.py), plus national phone numbers.
"""

from __future__ import annotations

import json
from collections import Counter

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneMetadata
from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.predefined_recognizers import PhoneRecognizer
from pydantic import ValidationError

from learnstream.agents.worker import build_app
from learnstream.streams.config.settings import DEFAULT_PHONE_REGIONS, Settings
from learnstream.streams.config.usererrors import settings_problem
from learnstream.streams.privacy.config import REGIONAL_ENTITIES, PrivacyConfig
from learnstream.streams.privacy.gates import NEEDS as _NEEDS
from learnstream.streams.privacy.gates import WARM_TEXT as _WARM_TEXT
from learnstream.streams.privacy.nationalids import NATIONAL_ID_FACTORIES
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.recognizers import build_analyzer
from tests.unit.test_privacy import ENTITY_EXAMPLES, FRAGMENTS

#: The values tests/unit/test_no_leaks.py plants (copied: that module imports every agent).
PLANTED = ("dana.leak@example.org", "+1 415-555-0177", "4111 1111 1111 1111", "AKIA" + "Q" * 16)

#: National numbers of Presidio's own default regions and of the regions whose numbers are
#: the shortest (4 digits) in phonenumbers' metadata.
NATIONAL = {
    "US": "(415) 555-0199",
    "CA": "416 967 1111",
    "GB": "020 7946 0958",
    "DE": "030 901820",
    "FR": "01 42 68 53 00",
    "IN": "98765 43210",
    "IL": "02-123-4567",
    "BR": "011 91234-5678",
    "NU": "4002",
    "TK": "3010",
}
CORPUS = [
    *FRAGMENTS,
    *(text for text, _, _ in ENTITY_EXAMPLES),
    *PLANTED,
    *NATIONAL.values(),
    "+49 30 901820",
    "+44 20 7946 0958",
    "version 2.2.366 at 2024-05-01T12:00:00Z",
    "line 1234567 of main.py:42",
    "aa-bb-cc-dd-ee-ff",
    "AB:CD:EF:01:23:45",
    "0011.2233.4455",
    "DOB 1/2/1990",
    "d.o.b. 01.02.1990",
    "Passport: AB123456",
    "PSC 1241, Box 5868, APO AP 25384",
    "Flat 0, Francesca Plains, South Joyceborough, SR08 7UX",
    "Leyla-Fröhlich-Weg 6-8, 06690 Groß-Gerau",
    "5, avenue Samson, 57583 Lacroix",
    "ABCPD1234E",
    "abcpd1234e",
    "gb82 west 1234 5698 7654 32",
    "nino ab123456c",
    "NHS number: 9434765919",
    "943-476-5919",
    "dni 12345678z, nie x1234567l",
    "cf rssmra85t10a562s",
    "cpf 529.982.247-25 or CPF: 52998224725",
    "SIN: 130692544 or 130-692-544",
    "P.O. Box 1234",
    "cc @dana_w",
    "username: alice_w",
    "LOGIN=j.doe@corp",
    "sudo -u pgadmin psql; --user=jdoe; ssh jdoe@build-01",
    "Failed password for invalid user bob from 10.0.0.5 port 22",
    # a street of each shape the address patterns read (streams/privacy/addresses.py)
    "his address: 449 Πεντέλης 210",
    "625 ul. Asnyka Adama 82\nSuite 527\nRzeszów",
    "2210 Nordre gate 64 Suite 12",
    "4410 Skovbrynet 12 St.",
    "Quellmoor Mills Street",
    "The shop is on Laugavegur 28",
    "Address:     772 Republica de Chile 7715 Suite 228",
    "at the corner of 262 Thisseos Avenue and Semmens Greens",
    "Flat on the third floor: Apt. 559",
    "350 5th Avenue, 12 W 42nd St",
    "USNS Harmon, FPO AE 12345",
    "Berliner Straße 5",
    "87, rue de Barre",
    "3240 Meadow Drive\n Apt. 983\n Waiatarua\n Netherlands 29952",
    # a login after each cue the username patterns read (streams/privacy/handles.py)
    "User hmorrow approved it; user mark.perez too",
    "git commit --author jdoe --login jdoe",
    "owner=jdoe user: jdoe",
    "Accepted publickey for alice from 10.0.0.5 port 22",
    "rsync -a out/ deploy@web-2",
    "sftp ops@files",
    "scp app.tar jdoe@build-01",
    "ping (@dana_w) about it",
    # a national id in each grouping its patterns read (streams/privacy/nationalids.py)
    "NINO AB 12 34 56 C",
    "steuer-id 86 095 742 719",
    "NIR 1 84 12 76 451 089 46",
    "nir 184127645108946",
    "Aadhaar 2345-6789-0124",
    "NHS 943 476 5919",
    "SIN 130 692 544",
    "CF RSSMRA85T10A562S",
    "PAN: ABCPD1234E",
    "DNI 12345678-Z",
    "NIE X-1234567-L",
    # numbers in prose, no street and no login (the gates skip them)
    "Fix the login 500 error reported by the owner (ref qzvkrbta)",
]
PRESIDIO_REGIONS = PhoneRecognizer.DEFAULT_SUPPORTED_REGIONS
SHORTEST = ("AT", "DE", "IR", "LU", "NU", "SH", "TA", "TK", "UY")
CONFIGS = {
    "default": PrivacyConfig(),
    "presidio regions": PrivacyConfig(phone_regions=PRESIDIO_REGIONS),
    "shortest numbers": PrivacyConfig(phone_regions=SHORTEST, entities=("PHONE_NUMBER",)),
    "with URL": PrivacyConfig(entities=(*PrivacyConfig().entities, "URL")),
    "regional ids": PrivacyConfig(entities=(*PrivacyConfig().entities, *REGIONAL_ENTITIES)),
}


def _masked(regions: tuple[str, ...], text: str) -> tuple[str, Counter[str]]:
    config = PrivacyConfig(phone_regions=regions, operator="mask", detect_secrets=False)
    return Anonymizer(config).anonymize_text(text)


# --- phone regions ----------------------------------------------------------------------------


@pytest.mark.parametrize("region", DEFAULT_PHONE_REGIONS)
def test_a_national_phone_of_a_configured_region_is_found_and_masked(region: str) -> None:
    number = NATIONAL[region]
    text, counts = _masked((region,), f"ring {number} now")
    assert text == f"ring {'*' * len(number)} now"
    assert counts == Counter({"PHONE_NUMBER": 1})


def test_default_regions_cover_every_plus_one_country_and_international_numbers() -> None:
    anonymizer = Anonymizer(PrivacyConfig())
    for number in (NATIONAL["CA"], "+55 11 91234-5678", "+972 2-123-4567", "+49 30 901820"):
        assert anonymizer.anonymize_text(f"ring {number}") == (
            "ring <PHONE_NUMBER>",
            Counter({"PHONE_NUMBER": 1}),
        ), number


def test_a_national_number_of_an_unconfigured_region_is_not_a_phone() -> None:
    assert _masked(("US",), "ruf 030 901820 an") == ("ruf 030 901820 an", Counter())
    assert _masked(("US", "DE"), "ruf 030 901820 an")[1] == Counter({"PHONE_NUMBER": 1})


def test_the_recognizer_gets_exactly_the_configured_regions() -> None:
    analyzer = build_analyzer(PrivacyConfig(phone_regions=("GB", "IN")))
    (phone,) = [r for r in analyzer.registry.recognizers if isinstance(r, PhoneRecognizer)]
    assert tuple(phone.supported_regions) == ("GB", "IN")


def test_default_regions_are_known_to_phonenumbers() -> None:
    assert DEFAULT_PHONE_REGIONS == ("US", "GB", "DE", "FR", "IN")
    assert set(DEFAULT_PHONE_REGIONS) <= phonenumbers.SUPPORTED_REGIONS
    assert Settings().privacy.phone_regions == DEFAULT_PHONE_REGIONS


def test_regions_from_the_environment_are_normalized(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__PHONE_REGIONS", json.dumps(["gb", " in", "GB"]))
    assert Settings().privacy.phone_regions == ("GB", "IN")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["US", "XQ"], "holds unknown region codes (item 2)"),
        (["UK"], "holds unknown region codes (item 1)"),
        ([], "must name a region"),
    ],
)
def test_a_bad_region_list_is_a_one_line_user_error(
    monkeypatch: pytest.MonkeyPatch, value: list[str], expected: str
) -> None:
    monkeypatch.setenv("LEARNSTREAM_PRIVACY__PHONE_REGIONS", json.dumps(value))
    with pytest.raises(ValidationError) as caught:
        Settings()
    line = settings_problem(caught.value)
    assert line.startswith(f"LEARNSTREAM_PRIVACY__PHONE_REGIONS {expected}")
    assert "\n" not in line
    assert "XQ" not in line  # the value is never repeated back


def test_an_empty_region_list_is_refused_by_the_config() -> None:
    with pytest.raises(ValueError, match="phone_regions must name a region"):
        PrivacyConfig(phone_regions=())


# --- gates --------------------------------------------------------------------------------------


def test_no_region_has_phone_numbers_shorter_than_the_gate() -> None:
    """The phone gate asks for 4 digits whatever the regions: phonenumbers' shortest."""
    lengths = {
        region: PhoneMetadata.metadata_for_region(region).general_desc.possible_length  # type: ignore[union-attr]
        for region in phonenumbers.SUPPORTED_REGIONS
    }
    shortest = {region: min(n for n in found if n > 0) for region, found in lengths.items()}
    assert min(shortest.values()) == 4
    assert sorted(r for r, n in shortest.items() if n == 4) == sorted(SHORTEST)


@pytest.fixture(scope="module")
def gated() -> dict[str, tuple[Anonymizer, AnalyzerEngine]]:
    """Return, per config, the worker's anonymizer and a bare analyzer with no gate at all."""
    return {name: (Anonymizer(config), build_analyzer(config)) for name, config in CONFIGS.items()}


def _flagged(analyzer: AnalyzerEngine, config: PrivacyConfig, text: str) -> set[str]:
    found = analyzer.analyze(text, language="en", entities=list(config.analyzed_entities))
    return {result.entity_type for result in found}


def _assert_gate_passes(anonymizer: Anonymizer, analyzer: AnalyzerEngine, text: str) -> None:
    flagged = _flagged(analyzer, anonymizer.config, text)
    if flagged:
        assert anonymizer._may_hold_pii(text), text
        assert flagged <= set(anonymizer.candidates(text)), text


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_corpus_string_presidio_flags_passes_the_gate(
    gated: dict[str, tuple[Anonymizer, AnalyzerEngine]], name: str
) -> None:
    anonymizer, analyzer = gated[name]
    flagged = 0
    for text in CORPUS:
        _assert_gate_passes(anonymizer, analyzer, text)
        flagged += bool(_flagged(analyzer, anonymizer.config, text))
    assert flagged >= 15  # the corpus does exercise every entity's gate


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(list(CONFIGS)),
    text=st.lists(st.sampled_from(CORPUS), min_size=1, max_size=5).map(" ".join),
)
def test_the_gate_never_skips_a_string_presidio_flags(
    gated: dict[str, tuple[Anonymizer, AnalyzerEngine]], name: str, text: str
) -> None:
    _assert_gate_passes(*gated[name], text)


_PHONE_LIKE = st.text(alphabet="0123456789 +-().", min_size=1, max_size=16)


@settings(max_examples=300, deadline=None)
@given(_PHONE_LIKE)
def test_the_phone_gate_holds_for_the_shortest_numbering_plans(
    gated: dict[str, tuple[Anonymizer, AnalyzerEngine]], text: str
) -> None:
    _assert_gate_passes(*gated["shortest numbers"], text)


def test_numbers_grouped_as_no_national_id_groups_them_reach_no_id_recognizer() -> None:
    anonymizer = Anonymizer(PrivacyConfig())
    text = "host 10.20.30.40 answered 503 at 2024-05-01T12:00:00Z (build 4821, ref qzvkrbta)"
    assert set(anonymizer.candidates(text)) & set(NATIONAL_ID_FACTORIES) == {"IBAN_CODE"}


def test_an_email_address_alone_reaches_no_username_recognizer() -> None:
    anonymizer = Anonymizer(PrivacyConfig())
    assert "USERNAME" not in anonymizer.candidates("mail dana.whitfield@example.org, the owner")
    assert "USERNAME" in anonymizer.candidates("mail @dana_w, the owner")


def test_the_warm_up_text_holds_every_pattern_entity_and_a_secret() -> None:
    """``Anonymizer.warm`` must reach every recognizer: each finds its entity in the text,
    so what it loads on first use is loaded at start (and nothing is left in the cache)."""
    anonymizer = Anonymizer(PrivacyConfig(entities=tuple(sorted(_NEEDS))))
    _text, found = anonymizer._anonymize_uncached(_WARM_TEXT)
    assert set(dict(found)) == set(_NEEDS) | {"PASSWORD", "PERSON"}
    anonymizer.warm()
    assert len(anonymizer._cache) == 0


def test_a_worker_app_comes_with_a_warm_anonymizer(monkeypatch: pytest.MonkeyPatch) -> None:
    warmed: list[Anonymizer] = []
    monkeypatch.setattr(Anonymizer, "warm", lambda self: warmed.append(self))
    build_app(Settings(), "kafka://127.0.0.1:9", embedded=False)
    assert len(warmed) == 1
