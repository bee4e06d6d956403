"""Names, postal addresses, emails and dates of birth: from Faker, and made up from syllables.

The made-up names and places are in no word list (Faker's or a detector's): recall on them
says whether a detector finds a name by how it is used, not by having seen it.
"""

from __future__ import annotations

import unicodedata

from benchmarks.recall.source import Source, Value, plain

__all__ = [
    "address",
    "date_of_birth",
    "email_internal",
    "email_public",
    "heldout_name",
    "person_name",
    "unseen_address",
    "unseen_name",
]

_ONSETS = ("b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br",
           "dr", "kl", "tr", "st", "sv", "th", "gw", "ny")  # fmt: skip
_NUCLEI = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "ei", "ou", "ia")
_CODAS = ("", "", "", "", "", "n", "r", "l", "s", "nd", "rk")
_CITY_ENDS = ("by", "wick", "heim", "ac", "pur", "ton", "ville", "stead", "au")
_PUBLIC_DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "orange.fr",
                   "rediffmail.com", "proton.me", "icloud.com", "gmx.de")  # fmt: skip
_INTERNAL_DOMAINS = ("ops.acme.local", "payments.corp.internal", "build.internal", "hq.corp",
                     "lab.lan", "eu.acme.corp", "fin.contoso.lan", "sre.globex.local")  # fmt: skip
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip


def _word(src: Source, syllables: int) -> str:
    """Return a capitalised made-up word of ``syllables`` syllables."""
    rng = src.rng
    parts = [
        rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS) for _ in range(syllables)
    ]
    return "".join(parts).capitalize()


def person_name(src: Source) -> Value:
    """Return a Faker first and last name of a random locale."""
    locale, faker = src.locale()
    return plain(f"{faker.first_name()} {faker.last_name()}", locale)


def unseen_name(src: Source) -> Value:
    """Return a made-up first and last name (sometimes with a middle initial)."""
    first, last = _word(src, src.rng.randint(2, 3)), _word(src, src.rng.randint(2, 3))
    if src.rng.random() < 0.2:
        return plain(f"{first} {_word(src, 1)[0]}. {last}", "initial")
    return plain(f"{first} {last}", "first last")


_TITLES = ("Dr.", "Mrs.", "Mr.", "Ms.", "Prof.", "Dr")


def _first(src: Source) -> str:
    """Return a first name: Faker's of a random locale or a made-up one, half each."""
    if src.rng.random() < 0.5:
        return src.locale()[1].first_name()
    return _word(src, src.rng.randint(2, 3))


def heldout_name(src: Source) -> Value:
    """Return a name in a shape the templated kinds lack: lone, titled, or a list of names."""
    rng = src.rng
    shape = rng.choice(("lone first name", "title + last name", "first last", "two names",
                        "three names"))  # fmt: skip
    if shape == "lone first name":
        return plain(_first(src), shape)
    if shape == "title + last name":
        last = src.locale()[1].last_name() if rng.random() < 0.5 else _word(src, 3)
        return Value(f"{rng.choice(_TITLES)} {last}", (last,), shape)
    if shape == "first last":
        return plain(f"{_first(src)} {_word(src, rng.randint(2, 3))}", shape)
    names = [_first(src) for _ in range(2 if shape == "two names" else 3)]
    text = " and ".join(names) if len(names) == 2 else f"{names[0]}, {names[1]} and {names[2]}"
    return Value(text, tuple(names), shape)


def address(src: Source) -> Value:
    """Return a Faker postal address of the US, GB, DE or FR, on one line."""
    locale, faker = src.locale(("en_US", "en_GB", "de_DE", "fr_FR"))
    return plain(faker.address().replace("\n", ", "), locale)


def unseen_address(src: Source) -> Value:
    """Return an address of made-up street and town names in a US, GB, DE, FR or IN shape."""
    rng = src.rng
    street, town = _word(src, rng.randint(2, 3)), _word(src, 2) + rng.choice(_CITY_ENDS)
    house = str(rng.randint(1, 240))
    shapes = {
        "US": f"{house} {street} Street, {town}, {rng.choice(('OR', 'TX', 'OH'))} {src.digits(5)}",
        "GB": f"{house} {street} Road, {town} {_gb_postcode(src)}",
        "DE": f"{street}straße {house}, {rng.randint(10, 99)}{src.digits(3)} {town}",
        "FR": f"{house} rue {street}, {rng.randint(10, 95)}{src.digits(3)} {town}",
        "IN": f"{house}, {street} Nagar, {town} {rng.randint(1, 8)}{src.digits(5)}",
    }
    country = rng.choice(tuple(shapes))
    return plain(shapes[country], country)


def _gb_postcode(src: Source) -> str:
    letters = "ABCDEFGHJKLMNPRSTUWYZ"
    return f"{src.chars(letters, 2)}{src.rng.randint(1, 20)} {src.digits(1)}{src.chars(letters, 2)}"


def _local_part(src: Source) -> str:
    """Return an email local part made from a Faker name or a made-up one."""
    if src.rng.random() < 0.5:
        _, faker = src.locale()
        first, last = faker.first_name(), faker.last_name()
    else:
        first, last = _word(src, 2), _word(src, 3)
    first, last = (_ascii(first), _ascii(last))
    shape = src.rng.choice(("{f}.{l}", "{f}{l}", "{i}{l}", "{f}_{l}{n}", "{l}.{f}"))
    return shape.format(f=first, l=last, i=first[0], n=src.rng.randint(1, 99))


def _ascii(name: str) -> str:
    """Return a name as mail systems usually spell it: lower-case ASCII letters."""
    folded = unicodedata.normalize("NFKD", name.lower().replace("ß", "ss"))
    return "".join(c for c in folded if c.isascii() and c.isalpha())


def email_public(src: Source) -> Value:
    """Return an address on a public mail domain."""
    local = _local_part(src)
    text = f"{local}@{src.rng.choice(_PUBLIC_DOMAINS)}"
    return Value(text, (text,), "public", (local,))


def email_internal(src: Source) -> Value:
    """Return an address on an internal domain (.local, .internal, .corp, .lan)."""
    local, domain = _local_part(src), src.rng.choice(_INTERNAL_DOMAINS)
    text = f"{local}@{domain}"
    return Value(text, (text,), "." + domain.rsplit(".", 1)[1], (local,))


def date_of_birth(src: Source) -> Value:
    """Return a birth date after a birth keyword, in one of the usual written formats."""
    rng = src.rng
    year, month, day = rng.randint(1940, 2005), rng.randint(1, 12), rng.randint(1, 28)
    name = _MONTHS[month - 1]
    formats = {  # variant: (keyword, date as written)
        "iso": ("born", f"{year}-{month:02d}-{day:02d}"),
        "dd/mm/yyyy": ("DOB", f"{day:02d}/{month:02d}/{year}"),
        "m/d/yyyy": ("date of birth:", f"{month}/{day}/{year}"),
        "d month yyyy": ("born on", f"{day} {name} {year}"),
        "month d, yyyy": ("birthday", f"{name} {day}, {year}"),
        "dd.mm.yyyy": ("geb.", f"{day:02d}.{month:02d}.{year}"),
        "né le dd/mm/yyyy": ("né le", f"{day:02d}/{month:02d}/{year}"),
    }
    variant = rng.choice(tuple(formats))
    keyword, date = formats[variant]
    return Value(f"{keyword} {date}", (date,), variant)
