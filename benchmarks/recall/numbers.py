"""Phones, cards, bank and national numbers: valid by their own rules (Luhn, checksums).

A detector that validates a checksum must find these; a detector that does not may find
them anyway. Phone numbers are checked with ``phonenumbers`` so that only numbers a real
person could have are planted.
"""

from __future__ import annotations

import phonenumbers

from benchmarks.recall.source import Source, Value, plain

__all__ = [
    "aadhaar",
    "card",
    "iban",
    "insee",
    "luhn_ok",
    "nino",
    "pan",
    "passport",
    "phone_international",
    "phone_national",
    "steuer_id",
    "us_ssn",
]

#: (region, country code, national significant number prefixes, its length).
_PHONE_PLANS = (
    ("US", 1, ("415", "212", "312", "617", "503", "720"), 10),
    ("GB", 44, ("20", "161", "131", "7700", "7911", "7400"), 10),
    ("DE", 49, ("30", "89", "40", "151", "160", "176"), 10),
    ("FR", 33, ("1", "4", "6", "7"), 9),
    ("IN", 91, ("98", "99", "70", "80", "11"), 10),
)
#: How people in a region write a number besides its national format and bare digits.
_LOCAL_FORMS = {"US": ("dots", "dashes"), "GB": (), "DE": ("area slash",), "FR": ("dots",),
                "IN": ("dashes",)}  # fmt: skip
#: Network: (prefixes, length); Maestro and UnionPay also come in 19 digits.
_CARDS: dict[str, tuple[tuple[str, ...], int]] = {
    "visa": (("4",), 16),
    "mastercard": (("51", "52", "53", "54", "55"), 16),
    "mastercard 2-series": (("2221", "2300", "2500", "2654", "2720"), 16),
    "amex": (("34", "37"), 15),
    "discover": (("6011", "644", "649", "65"), 16),
    "jcb": (("3528", "3550", "3589"), 16),
    "unionpay": (("62",), 19),
    "diners": (("300", "305", "36", "38"), 14),
    "maestro": (("5018", "5020", "6304", "6759"), 19),
}


def _valid_phone(src: Source) -> tuple[str, phonenumbers.PhoneNumber]:
    """Return (region, number) of a random valid number of a default region."""
    region, code, prefixes, length = src.rng.choice(_PHONE_PLANS)
    while True:
        prefix = src.rng.choice(prefixes)
        number = phonenumbers.parse(f"+{code}{prefix}{src.digits(length - len(prefix))}")
        if phonenumbers.is_valid_number(number):
            return region, number


def phone_national(src: Source) -> Value:
    """Return a phone number as written in its own country, in one of its usual forms."""
    region, number = _valid_phone(src)
    national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
    groups = national.replace("(", " ").replace(")", " ").replace("-", " ").split()
    forms = {
        "national": national,
        "digits only": "".join(groups),
        "dots": ".".join(groups),
        "dashes": "-".join(groups),
        "area slash": f"{groups[0]}/{''.join(groups[1:])}",
    }
    form = src.rng.choice(("national", "digits only", *_LOCAL_FORMS[region]))
    return plain(forms[form], f"{region} {form}")


def phone_international(src: Source) -> Value:
    """Return a phone number in international form (``+CC ...`` or E.164)."""
    region, number = _valid_phone(src)
    form = src.rng.choice(("international", "e164", "00 prefix", "trunk (0)", "dashes"))
    fmt = phonenumbers.PhoneNumberFormat
    text = phonenumbers.format_number(number, fmt.E164 if form == "e164" else fmt.INTERNATIONAL)
    code, _, rest = text.partition(" ")
    if form == "00 prefix":
        text = "00" + text[1:]
    elif form == "trunk (0)" and region != "US":  # how GB, DE and FR numbers are often printed
        text = f"{code} (0){rest}"
    elif form == "dashes":
        text = f"{code}-{rest.replace(' ', '-')}"
    return plain(text, f"{region} {form}")


def luhn_ok(number: str) -> bool:
    """Tell whether the digits of ``number`` pass the Luhn check."""
    digits = [int(c) for c in number if c.isdigit()][::-1]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits))
    return total % 10 == 0


def _luhn_complete(body: str) -> str:
    return next(body + c for c in "0123456789" if luhn_ok(body + c))


def card(src: Source) -> Value:
    """Return a Luhn-valid card number of a random network, grouped as printed."""
    network = src.rng.choice(tuple(_CARDS))
    prefixes, length = _CARDS[network]
    if network in ("unionpay", "maestro") and src.rng.random() < 0.5:
        length = 16
    prefix = src.rng.choice(prefixes)
    number = _luhn_complete(prefix + src.digits(length - len(prefix) - 1))
    groups = {15: (4, 6, 5), 14: (4, 6, 4), 16: (4, 4, 4, 4), 19: (4, 4, 4, 4, 3)}[length]
    sep = src.rng.choice((" ", "-", ""))
    at, pieces = 0, []
    for size in groups:
        pieces.append(number[at : at + size])
        at += size
    return plain(sep.join(pieces), network)


def iban(src: Source) -> Value:
    """Return a Faker IBAN of a European default locale, compact or in groups of four."""
    locale, faker = src.locale(("en_GB", "de_DE", "fr_FR"))
    text = faker.iban()
    if src.rng.random() < 0.5:
        return plain(" ".join(text[i : i + 4] for i in range(0, len(text), 4)), f"{locale} grouped")
    return plain(text, f"{locale} compact")


def us_ssn(src: Source) -> Value:
    """Return a Faker US Social Security number, dashed, spaced or bare."""
    ssn = src.faker("en_US").ssn()
    form = src.rng.choice(("dashed", "spaced", "bare"))
    return plain(
        {"dashed": ssn, "spaced": ssn.replace("-", " "), "bare": ssn.replace("-", "")}[form], form
    )


def nino(src: Source) -> Value:
    """Return a UK National Insurance number with a valid prefix (``AB 12 34 56 C``)."""
    while True:
        prefix = src.chars("ABCEGHJKLMNOPRSTWXYZ", 1) + src.chars("ABCEGHJKLMNPRSTWXYZ", 1)
        if prefix not in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
            break
    digits, suffix = src.digits(6), src.chars("ABCD", 1)
    if src.rng.random() < 0.6:
        return plain(f"{prefix} {digits[:2]} {digits[2:4]} {digits[4:]} {suffix}", "spaced")
    return plain(f"{prefix}{digits}{suffix}", "compact")


def steuer_id(src: Source) -> Value:
    """Return a German tax id (11 digits, one digit twice in the first ten, ISO 7064 check)."""
    while True:
        pool = [str(d) for d in range(10)]
        src.rng.shuffle(pool)
        first = pool[:9] + [src.rng.choice(pool[:9])]
        src.rng.shuffle(first)
        if first[0] != "0":
            break
    product = 10
    for c in first:
        total = (int(c) + product) % 10 or 10
        product = total * 2 % 11
    number = "".join(first) + str((11 - product) % 10)
    if src.rng.random() < 0.5:
        return plain(f"{number[:2]} {number[2:5]} {number[5:8]} {number[8:]}", "grouped")
    return plain(number, "compact")


def insee(src: Source) -> Value:
    """Return a French social security number (NIR) with its key, grouped or compact."""
    rng = src.rng
    dept = rng.choice([f"{d:02d}" for d in range(1, 96) if d != 20])
    body = f"{rng.randint(1, 2)}{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{dept}"
    body += f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}"
    key = f"{97 - int(body) % 97:02d}"
    if rng.random() < 0.5:
        parts = (body[0], body[1:3], body[3:5], body[5:7], body[7:10], body[10:13], key)
        return plain(" ".join(parts), "grouped")
    return plain(body + key, "compact")


def _verhoeff_d(i: int, j: int) -> int:
    """Return the dihedral group D5 product the Verhoeff check uses."""
    if i < 5 and j < 5:
        return (i + j) % 5
    if i < 5:
        return (i + (j - 5)) % 5 + 5
    if j < 5:
        return (i - 5 - j) % 5 + 5
    return (i - j) % 5


_VERHOEFF_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]
for _ in range(7):
    _VERHOEFF_P.append([[1, 5, 7, 6, 2, 8, 3, 0, 9, 4][d] for d in _VERHOEFF_P[-1]])


def verhoeff_ok(number: str) -> bool:
    """Tell whether ``number`` (digits, spaces allowed) passes the Verhoeff check."""
    check = 0
    for i, c in enumerate(reversed(number.replace(" ", ""))):
        check = _verhoeff_d(check, _VERHOEFF_P[i % 8][int(c)])
    return check == 0


def aadhaar(src: Source) -> Value:
    """Return an Indian Aadhaar number (12 digits, first 2-9, Verhoeff check digit)."""
    body = src.chars("23456789", 1) + src.digits(10)
    number = next(body + c for c in "0123456789" if verhoeff_ok(body + c))
    if src.rng.random() < 0.6:
        return plain(f"{number[:4]} {number[4:8]} {number[8:]}", "grouped")
    return plain(number, "compact")


def pan(src: Source) -> Value:
    """Return an Indian PAN (``ABCPE1234F``: the 4th letter is the holder's type)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    holder = src.rng.choice("PPPPCHFT")
    text = src.chars(letters, 3) + holder + src.chars(letters, 1) + src.digits(4)
    text += src.chars(letters, 1)
    return plain(text, f"type {holder}")


def passport(src: Source) -> Value:
    """Return a passport number of a default region after a passport keyword."""
    shapes = {
        "US": lambda: src.digits(9),
        "GB": lambda: src.digits(9),
        "DE": lambda: src.chars("CFGHJK", 1) + src.chars("CFGHJKLMNPRTVWXYZ0123456789", 8),
        "FR": lambda: src.digits(2) + src.chars("ABCDEFGHJKLMNPRSTUVWXYZ", 2) + src.digits(5),
        "IN": lambda: src.chars("ABCDEFGHJKLMNPRSTUVWXYZ", 1) + src.digits(7),
    }
    region = src.rng.choice(tuple(shapes))
    number = shapes[region]()
    keyword = src.rng.choice(
        ("passport", "passport no.", "passport number", "Reisepass", "passeport")
    )
    return Value(f"{keyword} {number}", (number,), region)
