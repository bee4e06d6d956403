"""Plant values no tuning saw in documents scrubadub's generator writes (the fresh recall corpus).

Round 1's recall corpus filled presidio-evaluator's templates, all of which tuning read.
This one takes its sentences and its placement from another package, scrubadub 2.0.1:
``scrubadub.comparison.make_fake_document`` writes paragraphs of Faker's English text and
puts a generated value at a random space or full stop of each piece, with no cue word. The
values come from three packages, none read by this project before:

- scrubadub's own value generators (names, street addresses, emails, phones, US SSNs,
  Twitter handles, cards), for its ``en_US`` and ``en_GB`` locales;
- mimesis 22.2.0's per-locale lists of given and family names (Latin-script locales, and
  Cyrillic, CJK, Arabic-script and Greek ones) and its English-locale addresses;
- identifiers made valid at run time with python-stdnum 2.2's check-digit functions and
  checked with its ``is_valid`` (IBANs of its registry's countries, ES DNI, IT codice
  fiscale, IN Aadhaar and PAN, UK NHS, CA SIN, BR CPF, FR NIR, DE tax id): values only.

Each planted value is a row: the document, the value, its kind and where it came from.
Nothing here is imported by the scorer: the rows are built once and shipped
(``build3.py``), so scoring needs none of these packages.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["FAMILIES", "documents"]

_STOCK_KINDS = {
    "name": "PERSON", "address": "STREET_ADDRESS", "email": "EMAIL_ADDRESS",
    "phone": "PHONE_NUMBER", "social_security_number": "US_SSN", "twitter": "@handle",
    "credit_card": "CREDIT_CARD",
}  # fmt: skip
_LATIN = ("en", "en-gb", "de", "fr", "es", "it", "nl", "pl", "pt-br", "tr", "sv", "cs")
_SCRIPTS = {
    "Cyrillic": ("ru", "uk", "kk"),
    "CJK": ("zh", "ja", "ko"),
    "Arabic": ("ar-ae", "ar-eg", "ar-sa", "fa"),
    "Greek": ("el",),
}
_ADDRESS_LOCALES = ("en", "en-gb", "en-au", "en-ca")


def _mimesis_names(locales: tuple[str, ...], seed: int, form: Callable[[str], str]) -> Callable:
    from mimesis import Person
    from mimesis.locales import Locale

    people = [Person(Locale(code), seed=seed + n) for n, code in enumerate(locales)]
    rng = random.Random(seed)

    def generate(faker: Any = None) -> str:
        person = rng.choice(people)
        return form(person.full_name() if rng.random() < 0.7 else person.last_name())

    return generate


def _mimesis_addresses(seed: int) -> Callable:
    from mimesis import Address
    from mimesis.locales import Locale

    places = [Address(Locale(code), seed=seed + n) for n, code in enumerate(_ADDRESS_LOCALES)]
    rng = random.Random(seed)
    return lambda faker=None: rng.choice(places).address()


def _filth(kind: str, generate: Callable) -> type:
    """Return a scrubadub Filth class of type ``kind`` whose values ``generate`` makes."""
    from scrubadub.filth import Filth

    return type("FreshFilth", (Filth,), {"type": kind, "generate": staticmethod(generate)})


def _id_filths(seed: int) -> list[type]:
    from benchmarks.independent.stdnum_ids import GENERATORS

    rng = random.Random(seed)
    return [_filth(kind, lambda faker=None, g=g: g(rng)) for kind, g in GENERATORS.items()]


#: Family -> (how its values are made, from a seed) and the scrubadub locale of its text.
FAMILIES: dict[str, Callable[[int], tuple[list[type] | None, list[str] | None, str]]] = {
    "scrubadub en_US": lambda s: (None, list(_STOCK_KINDS), "en_US"),
    "scrubadub en_GB": lambda s: (None, [k for k in _STOCK_KINDS if "security" not in k], "en_GB"),
    "mimesis Latin": lambda s: ([_filth("PERSON", _mimesis_names(_LATIN, s, str))], None, "en_US"),
    "mimesis lower-case": lambda s: (
        [_filth("PERSON, lower-case", _mimesis_names(_LATIN, s, str.lower))],
        None,
        "en_US",
    ),
    "mimesis ALL-CAPS": lambda s: (
        [_filth("PERSON, ALL-CAPS", _mimesis_names(_LATIN, s, str.upper))],
        None,
        "en_US",
    ),
    **{
        f"mimesis {script}": lambda s, loc=locales, k=f"PERSON, {script}": (
            [_filth(k, _mimesis_names(loc, s, str))],
            None,
            "en_US",
        )
        for script, locales in _SCRIPTS.items()
    },
    "mimesis addresses": lambda s: (
        [_filth("STREET_ADDRESS", _mimesis_addresses(s))],
        None,
        "en_US",
    ),
    "python-stdnum": lambda s: (_id_filths(s), None, "en_US"),
}


def _rows(family: str, document: str, known: list[dict[str, str]]) -> Iterator[dict[str, Any]]:
    cursor = 0
    digest = hashlib.sha256(document.encode()).hexdigest()[:16]
    for item in known:
        start = document.find(item["match"], cursor)
        cursor = start + len(item["match"])
        kind = _STOCK_KINDS.get(item["filth_type"], item["filth_type"])
        yield {"doc": digest, "kind": kind, "value": item["match"], "variant": family,
               "text": document}  # fmt: skip


def documents(family: str, count: int, seed: int) -> Iterator[dict[str, Any]]:
    """Yield the planted rows of ``count`` one-paragraph documents of a family."""
    from faker import Faker
    from scrubadub.comparison import make_fake_document
    from scrubadub.filth import CreditCardFilth

    extra, types, locale = FAMILIES[family](seed)
    if extra is None:
        extra = [CreditCardFilth]
    else:
        types = [f.type for f in extra]
    faker = Faker(locale)
    for n in range(count):
        document, known = make_fake_document(
            paragraphs=1, locale=locale, seed=seed + n, faker=faker,
            filth_types=types, additional_filth_types=extra,
        )  # fmt: skip
        yield from _rows(family, document, known)
