"""Cheap tests that tell which pattern recognizers could match a text, and the warm-up text.

Presidio runs every recognizer it is asked for over the whole text; most agent strings hold
no digit, "@" or ":" at all, so asking only the recognizers whose necessary condition the
text meets saves most of the pattern step (tests/unit/test_pii_gates.py checks the gated
result equals the ungated one).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from learnstream.streams.privacy.addresses import may_hold_street
from learnstream.streams.privacy.context import BIRTH_WORDS, PASSPORT_WORDS
from learnstream.streams.privacy.handles import may_hold_username
from learnstream.streams.privacy.nationalids import may_hold_national_id

__all__ = ["MAY_HOLD_PII", "NEEDS", "WARM_TEXT", "Gate", "candidates"]

#: Safe for every pattern entity: emails need "@", scheme URLs ":" and ".", phone / card /
#: national ids / IBAN / IPv4 / addresses / dates need digits, IPv6 ":", a MAC ":", "-" or
#: ".", a username "@", the ":" / "=" after its key or the "." / "_" / digits of a login
#: after "user" or a word of five letters or more there (a glued login: "User hmorrow"), a
#: street named without its number its type written out ("Quellmoor Street"). Names and
#: places are NER's, gated by ``names.worth_ner`` instead.
MAY_HOLD_PII = re.compile(
    r"[\d@:.=_-]|(?i:street|avenue|road|boulevard)|(?<![\w-])[Uu]ser\s+[a-z]{5}"
)
_STREET_TYPE = re.compile(r"(?i)(?<![\w-])(?:street|avenue|road|boulevard)(?![\w-])")
_DIGIT = re.compile(r"\d")  # Unicode digits, as Presidio's patterns read them
_BIRTH = re.compile(rf"(?i)(?<!\w)(?:{BIRTH_WORDS})(?!\w)")
_PASSPORT = re.compile(rf"(?i)(?<!\w)(?:{PASSPORT_WORDS})(?!\w)")
Gate = tuple[int, Callable[[str], bool] | None]

#: What a string needs before a pattern recognizer can find its entity in it: (digits it
#: must hold at least, a test of the text). A card is >= 12 digits, an SSN 9, an IBAN 2
#: check digits in >= 13 characters, an email needs "@", a URL "://" (scheme URLs only), an
#: IPv4 address 3 dots and 4 digits, IPv6 two colons, a MAC five separators, a street a
#: digit or its type written out and a part every address pattern holds
#: (``addresses.may_hold_street``), a date of birth its digits and keyword, a passport number
#: its keyword (a German serial may be letters only), a username "@" or a user word and
#: a mark one of its patterns holds as written (``handles.may_hold_username``). A
#: national id needs its digits (a NIE 7, an NHS number 10, a CPF 11) and a part each of its
#: patterns holds (``nationalids.may_hold_national_id``: the digits grouped as the patterns
#: group them); a codice fiscale may trade digits for letters (omocodia), so it needs one
#: digit in 16 characters (one with all seven traded is not read) and a run of 16 letters
#: and digits.
#: No region's numbers are shorter than 4 digits in phonenumbers' metadata, so a phone
#: needs 4 whatever ``phone_regions`` holds.
NEEDS: dict[str, Gate] = {
    "EMAIL_ADDRESS": (0, lambda t: "@" in t),
    "URL": (0, lambda t: "://" in t),
    "PHONE_NUMBER": (4, None),
    "CREDIT_CARD": (12, None),
    "US_SSN": (9, None),
    "UK_NINO": (6, lambda t: may_hold_national_id("UK_NINO", t)),
    "UK_NHS": (10, lambda t: may_hold_national_id("UK_NHS", t)),
    "ES_NIF": (7, lambda t: may_hold_national_id("ES_NIF", t)),
    "IT_FISCAL_CODE": (1, lambda t: len(t) >= 16 and may_hold_national_id("IT_FISCAL_CODE", t)),
    "BR_CPF": (11, lambda t: may_hold_national_id("BR_CPF", t)),
    "CA_SIN": (9, lambda t: may_hold_national_id("CA_SIN", t)),
    "DE_TAX_ID": (11, lambda t: may_hold_national_id("DE_TAX_ID", t)),
    "FR_NIR": (13, lambda t: may_hold_national_id("FR_NIR", t)),
    "IN_AADHAAR": (12, lambda t: may_hold_national_id("IN_AADHAAR", t)),
    "IN_PAN": (4, lambda t: may_hold_national_id("IN_PAN", t)),
    "IBAN_CODE": (2, lambda t: len(t) >= 13),
    "IP_ADDRESS": (
        0,
        lambda t: t.count(":") >= 2 or (t.count(".") >= 3 and bool(_DIGIT.search(t))),
    ),
    "MAC_ADDRESS": (0, lambda t: t.count(":") >= 5 or t.count("-") >= 5 or t.count(".") >= 2),
    "DATE_OF_BIRTH": (2, lambda t: _BIRTH.search(t) is not None),
    "PASSPORT": (0, lambda t: _PASSPORT.search(t) is not None),  # a German one may hold none
    "STREET_ADDRESS": (
        0,
        lambda t: (
            (_DIGIT.search(t) is not None or bool(_STREET_TYPE.search(t))) and may_hold_street(t)
        ),
    ),
    "USERNAME": (0, may_hold_username),
}

#: Made-up text holding one of each pattern entity, a name and a secret's shape:
#: ``Anonymizer.warm`` runs it once so that what the recognizers load on first use (phone
#: metadata per region, compiled patterns, secret plugins, the NER model's first call) is
#: loaded at start, not while the first records wait.
WARM_TEXT = (
    "Ask Dana Whitfield: call +1 415-555-0100 or 020 7946 0000, mail jane@ops.acme.local, see "
    "https://example.com/x, card 4111 1111 1111 1111, SSN 536-22-8726, NINO AB 12 34 56 C, "
    "Steuer-ID 86095742719, NHS 943 476 5919, DNI 12345678Z, CF RSSMRA85T10A562S, "
    "CPF 529.982.247-25, SIN 130 692 544, NIR 1 84 12 76 451 089 46, Aadhaar 2345 6789 0124, "
    "PAN ABCPD1234E, user=dwhitfield, cc @dana_w, "
    "passport C01X00T47, born 1973-07-08, at 1777 Kramer Court, Johnsonfurt, NE 80119, "
    "IBAN DE89370400440532013000, hosts 10.0.0.12, fd12:3456:789a::1 and 00:1a:2b:3c:4d:5e, "
    "token api_key=EXAMPLEexample0123456789abcdef"
)


def candidates(entities: list[str], text: str) -> list[str]:
    """Return the entities whose recognizer could match ``text`` (ungated ones always)."""
    digits = len(_DIGIT.findall(text))
    return [
        entity
        for entity in entities
        if (gate := NEEDS.get(entity)) is None
        or (digits >= gate[0] and (gate[1] is None or gate[1](text)))
    ]
