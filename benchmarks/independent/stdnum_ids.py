"""Make national identifiers and IBANs valid by python-stdnum's own checks, at run time.

Each generator draws the digits and letters an identifier's layout holds, then tries the
check characters until the package's ``is_valid`` accepts the whole; no number is copied
from the package's files. Half are written as the package's ``format`` writes them, half
compact; a quarter of the IBANs in lower case.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterable
from types import ModuleType

__all__ = ["GENERATORS"]

_IBAN_COUNTRIES = tuple(
    [
        "DE",
        "FR",
        "GB",
        "ES",
        "IT",
        "NL",
        "BE",
        "AT",
        "CH",
        "PL",
        "PT",
        "IE",
        "SE",
        "DK",
        "NO",
        "FI",
        "CZ",
        "RO",
        "HU",
        "GR",
        "LU",
        "SI",
        "HR",
        "TR",
        "SA",
        "AE",
    ]
)
_LAYOUT = {
    "n": string.digits,
    "a": string.ascii_uppercase,
    "c": string.digits + string.ascii_uppercase,
}


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _letters(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_uppercase) for _ in range(n))


def _checked(module: ModuleType, body: Callable[[], str], checks: Iterable[str]) -> str:
    """Return the first body + check the module accepts, drawing bodies until one does."""
    checks = tuple(checks)
    while True:
        start = body()
        for check in checks:
            if module.is_valid(start + check):
                return start + check


def _written(module: ModuleType, number: str, rng: random.Random) -> str:
    return module.format(number) if hasattr(module, "format") and rng.random() < 0.5 else number


def _bban(spec: str, rng: random.Random) -> str:
    out, count = "", ""
    for char in spec.replace("!", ""):
        if char.isdigit():
            count += char
        else:
            out += "".join(rng.choice(_LAYOUT[char]) for _ in range(int(count)))
            count = ""
    return out


def _iban(rng: random.Random) -> str:
    from stdnum import iban

    while True:
        country = rng.choice(_IBAN_COUNTRIES)
        bban = _bban(iban._ibandb.info(country)[0][1]["bban"], rng)
        number = country + iban.calc_check_digits(country + "00" + bban) + bban
        if iban.is_valid(number):
            written = _written(iban, number, rng)
            return written.lower() if rng.random() < 0.25 else written


def _module(name: str) -> ModuleType:
    import importlib

    return importlib.import_module(f"stdnum.{name}")


def _maker(name: str, body: Callable[[random.Random], str], checks: Iterable[str]) -> Callable:
    def make(rng: random.Random) -> str:
        module = _module(name)
        return _written(module, _checked(module, lambda: body(rng), checks), rng)

    return make


_TENS = [f"{n:02d}" for n in range(100)]
_MONTHS = "ABCDEHLMPRST"

#: Entity (as learnstream names it) -> a generator of valid values from an ``rng``.
GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "IBAN_CODE": _iban,
    "ES_NIF": _maker("es.dni", lambda r: _digits(r, 8), string.ascii_uppercase),
    "IT_FISCAL_CODE": _maker(
        "it.codicefiscale",
        lambda r: (
            _letters(r, 6)
            + _digits(r, 2)
            + r.choice(_MONTHS)
            + f"{r.randint(1, 28) + r.choice((0, 40)):02d}"
            + r.choice("ABCDEFGHILM")
            + _digits(r, 3)
        ),
        string.ascii_uppercase,
    ),
    "IN_AADHAAR": _maker(
        "in_.aadhaar", lambda r: str(r.randint(2, 9)) + _digits(r, 10), string.digits
    ),
    "IN_PAN": _maker(
        "in_.pan",
        lambda r: (
            _letters(r, 3)
            + r.choice("PCHABGJLFT")
            + _letters(r, 1)
            + _digits(r, 4)
            + _letters(r, 1)
        ),
        ("",),
    ),
    "UK_NHS": _maker("gb.nhs", lambda r: str(r.randint(4, 9)) + _digits(r, 8), string.digits),
    "CA_SIN": _maker(
        "ca.sin", lambda r: str(r.choice((1, 2, 3, 4, 5, 6, 7, 9))) + _digits(r, 7), string.digits
    ),
    "BR_CPF": _maker("br.cpf", lambda r: _digits(r, 9), _TENS),
    "FR_NIR": _maker(
        "fr.nir",
        lambda r: (
            str(r.randint(1, 2))
            + _digits(r, 2)
            + f"{r.randint(1, 12):02d}"
            + f"{r.choice([d for d in range(1, 96) if d != 20]):02d}"
            + _digits(r, 6)
        ),
        _TENS,
    ),
    "DE_TAX_ID": _maker("de.idnr", lambda r: str(r.randint(1, 9)) + _digits(r, 9), string.digits),
}
