"""Check characters of the national ids beyond checksums.py: ES, IT, BR, UK NHS, CA, IN PAN."""

from __future__ import annotations

from learnstream.streams.privacy.checksums import digits, luhn_ok

__all__ = ["ca_sin_ok", "cpf_ok", "es_nif_ok", "it_fiscal_code_ok", "nhs_ok", "pan_ok"]

_NIF_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_NIE_PREFIX = {"X": "0", "Y": "1", "Z": "2"}
#: Values of a codice fiscale's characters at odd positions (1st, 3rd, ...), digits and
#: letters alike, as the Ministry's decree sets them; even positions count 0-9 and A=0..Z=25.
_CF_ODD: tuple[int, ...] = (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12)
_CF_ODD += (14, 16, 10, 22, 25, 24, 23)
_CF_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _compact(text: str) -> str:
    """Return text upper-cased with spaces, dots and dashes dropped."""
    return "".join(c for c in text.upper() if c.isalnum())


def es_nif_ok(text: str) -> bool:
    """Tell whether text is a Spanish DNI (8 digits) or NIE (X/Y/Z, 7 digits): its letter fits."""
    compact = _compact(text)
    number = _NIE_PREFIX.get(compact[:1], compact[:1]) + compact[1:-1]
    if len(compact) != 9 or not number.isdigit():
        return False
    return _NIF_LETTERS[int(number) % 23] == compact[-1]


def _cf_value(char: str, odd: bool) -> int:
    """Return what one codice fiscale character adds to the check sum."""
    position = int(char) if char.isdigit() else ord(char) - ord("A")
    return _CF_ODD[position] if odd else position


def it_fiscal_code_ok(text: str) -> bool:
    """Tell whether text is an Italian codice fiscale: 16 characters, its last the check."""
    code = _compact(text)
    if len(code) != 16 or not all(c in _CF_ALNUM for c in code):
        return False
    total = sum(_cf_value(c, i % 2 == 0) for i, c in enumerate(code[:15]))
    return chr(ord("A") + total % 26) == code[15]


def cpf_ok(text: str) -> bool:
    """Tell whether text is a Brazilian CPF: 11 digits, not all one, two mod-11 check digits."""
    number = digits(text)
    if len(number) != 11 or len(set(number)) == 1:
        return False
    for size in (9, 10):
        total = sum(int(d) * (size + 1 - i) for i, d in enumerate(number[:size]))
        if (total * 10 % 11) % 10 != int(number[size]):
            return False
    return True


def nhs_ok(text: str) -> bool:
    """Tell whether text is a UK NHS number: 10 digits, the last 11 - weighted sum mod 11."""
    number = digits(text)
    if len(number) != 10:
        return False
    check = 11 - sum(int(d) * (10 - i) for i, d in enumerate(number[:9])) % 11
    return check != 10 and check % 11 == int(number[9])


def ca_sin_ok(text: str) -> bool:
    """Tell whether text is a Canadian SIN: 9 Luhn-valid digits, not starting 0 or 8."""
    number = digits(text)
    return len(number) == 9 and number[0] not in "08" and luhn_ok(number)


def pan_ok(text: str) -> bool:
    """Tell whether text is an Indian PAN a person holds, or any PAN written in capitals.

    Lower case is accepted only with the holder type P (an individual): ten characters of
    lower-case letters and digits are otherwise common identifiers ("build1234a").
    """
    if text.isupper():
        return True
    return text.islower() and text[3] == "p"
