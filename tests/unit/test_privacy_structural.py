"""Structural detectors: IBANs and national ids in any case, a wrong check character kept.

Each id is found in upper and lower case; the same shape with a wrong check character (or
mixed case, or a Unix time that needs the word NHS) comes out unchanged. A bare run of digits
that passes its check is an id, named or not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from learnstream.streams.privacy.config import DEFAULT_ENTITIES, REGIONAL_ENTITIES, PrivacyConfig
from learnstream.streams.privacy.idchecks import (
    ca_sin_ok,
    cpf_ok,
    es_nif_ok,
    it_fiscal_code_ok,
    nhs_ok,
    pan_ok,
)
from learnstream.streams.privacy.pii import Anonymizer

IDS = ("IBAN_CODE", "UK_NINO", "UK_NHS", "DE_TAX_ID", "FR_NIR", "IN_AADHAAR", "IN_PAN")


@pytest.fixture(scope="module")
def ids() -> Anonymizer:
    """Return an anonymizer of the ids alone: no phone, no names, no secrets."""
    config = PrivacyConfig(entities=IDS + REGIONAL_ENTITIES, ner=False, detect_secrets=False)
    return Anonymizer(config)


FOUND = [
    ("pay gb82 west 1234 5698 7654 32 on file", "gb82 west 1234 5698 7654 32", "IBAN_CODE"),
    ("iban de89370400440532013000 on file", "de89370400440532013000", "IBAN_CODE"),
    # upper-cased, the two words after it read as two more groups of the IBAN
    ("pay lu28 0019 4006 4475 0000 next week on file", "lu28 0019 4006 4475 0000", "IBAN_CODE"),
    ("iban DE89 3704 0044 0532 0130 00 on file", "DE89 3704 0044 0532 0130 00", "IBAN_CODE"),
    ("nino ab123456c on file", "ab123456c", "UK_NINO"),
    ("nino AB 12 34 56 C on file", "AB 12 34 56 C", "UK_NINO"),
    ("nhs 943 476 5919 on file", "943 476 5919", "UK_NHS"),
    ("NHS number: 9434765919 on file", "9434765919", "UK_NHS"),
    ("pan abcpd1234e on file", "abcpd1234e", "IN_PAN"),
    ("pan ABCFD1234E on file", "ABCFD1234E", "IN_PAN"),
    ("aadhaar 2345 6789 0124 on file", "2345 6789 0124", "IN_AADHAAR"),
    ("nir 2 55 08 2a 168 025 97 on file", "2 55 08 2a 168 025 97", None),
    ("dni 12345678z on file", "12345678z", "ES_NIF"),
    ("DNI 12345678-Z on file", "12345678-Z", "ES_NIF"),
    ("nie X1234567L on file", "X1234567L", "ES_NIF"),
    ("cf RSSMRA85T10A562S on file", "RSSMRA85T10A562S", "IT_FISCAL_CODE"),
    ("cf rssmra85t10a562s on file", "rssmra85t10a562s", "IT_FISCAL_CODE"),
    ("cpf 529.982.247-25 on file", "529.982.247-25", "BR_CPF"),
    ("CPF: 52998224725 on file", "52998224725", "BR_CPF"),
    ("sin 130 692 544 on file", "130 692 544", "CA_SIN"),
    ("Social insurance number 130692544 on file", "130692544", "CA_SIN"),
    # bare, with no word naming them, as text written elsewhere carries them
    ("ticket 9434765919 on file", "9434765919", "UK_NHS"),
    ("order 52998224725 on file", "52998224725", "BR_CPF"),
    ("build 130692544 on file", "130692544", "CA_SIN"),
    ("NHS 1733097600 on file", "1733097600", "UK_NHS"),  # named: a Unix time counts
]


@pytest.mark.parametrize(("text", "value", "entity"), FOUND)
def test_an_id_is_found_in_any_case(
    ids: Anonymizer, text: str, value: str, entity: str | None
) -> None:
    out, counts = ids.anonymize_text(text)
    assert value not in out
    assert out.endswith(" on file")
    if entity is not None:
        assert counts == Counter({entity: 1})


KEPT = [
    "iban de89370400440532013001 on file",  # mod 97 fails
    # a digest: letters and digits with no separator, no IBAN however it is cut
    "digest ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56abcd on file",
    "nino Ab123456c on file",  # mixed case
    "nino ab123456e on file",  # suffix is A-D
    "nhs 943 476 5918 on file",  # mod 11 fails
    "since 1733097600 on file",  # a Unix time passing the NHS check needs the word NHS
    "ticket 9434765918 on file",  # mod 11 fails
    "build1234a and abcfd1234e on file",  # lower case only for a person's PAN (P)
    "dni 12345678a on file",  # wrong letter
    "nie x1234567m on file",  # wrong letter
    "cf RSSMRA85T10A562T on file",  # wrong check character
    "cf RssMra85t10a562s on file",  # mixed case
    "cpf 529.982.247-26 on file",  # second check digit fails
    "cpf 111.111.111-11 on file",  # one digit repeated
    "order 52998224726 on file",  # second check digit fails
    "sin 130 692 545 on file",  # Luhn fails
    "build 130692545 on file",  # Luhn fails
    "build 046454286 on file",  # Luhn-valid, but 0 opens no issued SIN
]


@pytest.mark.parametrize("text", KEPT)
def test_a_wrong_check_or_shape_is_kept(ids: Anonymizer, text: str) -> None:
    assert ids.anonymize_text(text) == (text, Counter())


CHECKS = [
    (es_nif_ok, "12345678Z", "12345678Y"),
    (es_nif_ok, "z-1234567-r", "z-1234567-s"),
    (it_fiscal_code_ok, "RSSMRA85T10A562S", "RSSMRA85T10A563S"),
    (cpf_ok, "52998224725", "52998224735"),
    (nhs_ok, "9434765919", "9434765929"),
    (ca_sin_ok, "130692544", "046454286"),  # Luhn-valid, but 0 opens no issued SIN
    (pan_ok, "abcpd1234e", "abcfd1234e"),
]


@pytest.mark.parametrize(("check", "good", "bad"), CHECKS)
def test_a_check_accepts_a_known_id_and_refuses_a_near_one(
    check: Callable[[str], bool], good: str, bad: str
) -> None:
    assert check(good)
    assert not check(bad)


def test_regional_ids_are_found_by_default() -> None:
    """A runtime's users are not all in its operators' regions: a Spanish DNI, an Italian
    codice fiscale, a Brazilian CPF and a Canadian SIN are masked with the defaults."""
    assert set(REGIONAL_ENTITIES) <= set(DEFAULT_ENTITIES)
    assert "UK_NHS" in DEFAULT_ENTITIES
    text = (
        "dni 12345678Z, cf RSSMRA85T10A562S, cpf 123.456.789-09, sin 130-692-544, nhs 943 476 5919"
    )
    out, counts = Anonymizer(PrivacyConfig(ner=False)).anonymize_text(text)
    assert out == "dni <ES_NIF>, cf <IT_FISCAL_CODE>, cpf <BR_CPF>, sin <CA_SIN>, nhs <UK_NHS>"
    assert counts == Counter(ES_NIF=1, IT_FISCAL_CODE=1, BR_CPF=1, CA_SIN=1, UK_NHS=1)
    # the check still decides: one wrong letter, and the code is left (a CPF that fails its
    # check is still dialable, so the phone rule takes it: checked with the ids above)
    kept = "dni 12345678A, cf RSSMRA85T10A562X"
    assert Anonymizer(PrivacyConfig(ner=False)).anonymize_text(kept)[0] == kept


@pytest.fixture(scope="module")
def defaults() -> Anonymizer:
    """Return the worker's anonymizer with the default settings."""
    return Anonymizer(PrivacyConfig())


GLUED_LOGINS = [
    ("User hmorrow", "User <USERNAME>"),
    ("user tbellamy was locked out", "user <USERNAME> was locked out"),
    ("User quinnr logged in", "User <USERNAME> logged in"),
]


@pytest.mark.parametrize(("text", "expected"), GLUED_LOGINS)
def test_a_login_of_an_initial_glued_to_a_surname_after_user_is_masked(
    defaults: Anonymizer, text: str, expected: str
) -> None:
    assert defaults.anonymize_text(text) == (expected, Counter(USERNAME=1))


@pytest.mark.parametrize(
    "text",
    [
        "User xattrs are copied with the file.",  # not a word, but no surname in it
        "User jobs are scheduled nightly.",  # a word of the list (Job is also a name)
        "User namespaces are enabled by default.",
        "User guide and reference",
        "User mfa is required.",  # too short to read
    ],
)
def test_a_word_after_user_that_is_no_glued_surname_is_kept(
    defaults: Anonymizer, text: str
) -> None:
    assert defaults.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Nobody is answering at 48 917263", "Nobody is answering at <PHONE_NUMBER>"),
        ("She never answers on 732 118 604", "She never answers on <PHONE_NUMBER>"),
        ("left a voicemail at 41 55 873 20", "left a voicemail at <PHONE_NUMBER>"),
    ],
)
def test_a_grouped_number_beside_a_word_of_a_call_taken_is_a_phone(
    defaults: Anonymizer, text: str, expected: str
) -> None:
    assert defaults.anonymize_text(text) == (expected, Counter(PHONE_NUMBER=1))


@pytest.mark.parametrize(
    "text",
    [
        "The resolver stopped answering at 400 000 queries per second.",
        "The broker handles messages at 250 000 per second.",
        "We expect to reach 3 000 000 users by spring.",
        "The hotline dashboard shows 120 000 tickets.",
    ],
)
def test_a_count_in_thousands_beside_a_call_word_is_kept(defaults: Anonymizer, text: str) -> None:
    assert defaults.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Desk: +1-833-132-6665x469", "Desk: <PHONE_NUMBER>"),
        ("(005)828-9616x2674 mobile", "<PHONE_NUMBER> mobile"),
        ("Call me on 0117 496 0123 ext. 12", "Call me on <PHONE_NUMBER>"),
        ("+447700 484887 mobile", "<PHONE_NUMBER> mobile"),
        ("Desk: 00103288541", "Desk: <PHONE_NUMBER>"),
        ("Fax: 442079460958", "Fax: <PHONE_NUMBER>"),
    ],
)
def test_a_phone_with_its_extension_or_as_one_run_after_its_label_is_masked_whole(
    defaults: Anonymizer, text: str, expected: str
) -> None:
    assert defaults.anonymize_text(text) == (expected, Counter(PHONE_NUMBER=1))


@pytest.mark.parametrize(
    "text",
    [
        "Set the resolution to 1920x1080 or 1280 x 720.",
        "Build 202411301234 failed on the runner.",
        "issue 123456789 closed",
        "timeout: 300000000 ms",
    ],
)
def test_a_run_of_digits_with_no_phone_label_before_it_is_kept(
    defaults: Anonymizer, text: str
) -> None:
    assert defaults.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "iban"),
    [
        ("Since plan the month AT50 5955 5022 1302 6794 break box", "AT50 5955 5022 1302 6794"),
        ("Sort free RO42GRPM6W0EC12JFQQDZH1Z yourself whom", "RO42GRPM6W0EC12JFQQDZH1Z"),
        ("wire it to de89370400440532013000 today", "de89370400440532013000"),
    ],
)
def test_an_iban_followed_by_lower_case_words_is_masked(
    ids: Anonymizer, text: str, iban: str
) -> None:
    assert ids.anonymize_text(text) == (
        text.replace(iban, "<IBAN_CODE>"),
        Counter(IBAN_CODE=1),
    )
