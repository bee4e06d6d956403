"""Check digits of the numbers the pattern recognizers accept (cards, national ids)."""

from __future__ import annotations

from collections import Counter

__all__ = ["aadhaar_ok", "card_ok", "de_tax_id_ok", "digits", "fr_nir_ok", "luhn_ok"]

#: Verhoeff's dihedral-group tables (multiplication, permutation), as the algorithm defines.
_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def digits(text: str) -> str:
    """Return the ASCII digits of text, separators dropped."""
    return "".join(c for c in text if "0" <= c <= "9")


def luhn_ok(number: str) -> bool:
    """Tell whether a digit string passes the Luhn check (cards, IMEIs)."""
    total = 0
    for i, c in enumerate(reversed(number)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def card_ok(text: str) -> bool:
    """Tell whether text is a card number: 12-19 digits, a network's prefix, Luhn-valid.

    Prefixes: Mastercard 51-55 and 2221-2720, Visa 4, Amex 34/37, Diners 30/36/38/39, JCB
    35, Discover/UnionPay/Maestro 6, Maestro 50 and 56-59, and JCB's original 15-digit
    cards, 1800 and 2131 (in the IIN tables validators and test-card generators follow). Other
    numbers starting 1, 7, 8, 9 or 0 (epoch milliseconds, order numbers) are not cards.
    """
    number = digits(text)
    if len(number) == 15 and number[:4] in ("1800", "2131"):
        return luhn_ok(number)
    if not 12 <= len(number) <= 19 or number[0] not in "23456":
        return False
    if number[0] == "2" and not 2221 <= int(number[:4]) <= 2720:
        return False
    if number[0] == "3" and number[:2] not in ("30", "34", "35", "36", "37", "38", "39"):
        return False
    return luhn_ok(number)


def aadhaar_ok(text: str) -> bool:
    """Tell whether text is an Aadhaar number: 12 digits, not starting 0/1, Verhoeff-valid."""
    number = digits(text)
    if len(number) != 12 or number[0] in "01":
        return False
    check = 0
    for i, c in enumerate(reversed(number)):
        check = _D[check][_P[i % 8][int(c)]]
    return check == 0


def de_tax_id_ok(text: str) -> bool:
    """Tell whether text is a German Steuer-ID: 11 digits, ISO 7064 MOD 11,10 check digit.

    The first ten digits hold one digit two or three times and no other digit twice.
    """
    number = digits(text)
    if len(number) != 11 or number[0] == "0":
        return False
    repeats = [n for n in Counter(number[:10]).values() if n > 1]
    if len(repeats) != 1 or repeats[0] > 3:
        return False
    product = 10
    for c in number[:10]:
        total = (int(c) + product) % 10 or 10
        product = total * 2 % 11
    return (11 - product) % 10 == int(number[10])


def fr_nir_ok(text: str) -> bool:
    """Tell whether text is a French NIR (INSEE number): 13 characters and a mod-97 key."""
    compact = "".join(c for c in text.upper() if c.isalnum())
    if len(compact) != 15:
        return False
    body = compact[:13].replace("2A", "19", 1).replace("2B", "18", 1)
    if not (body.isdigit() and compact[13:].isdigit()):
        return False
    return 97 - int(body) % 97 == int(compact[13:])
