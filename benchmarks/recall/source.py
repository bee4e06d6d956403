"""A planted value, and the seeded randomness every generator draws from."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

from faker import Faker

__all__ = ["LOCALES", "Source", "Value", "plain"]

#: The locales of the five default phone regions
#: (learnstream.streams.config.settings.DEFAULT_PHONE_REGIONS).
LOCALES: tuple[str, ...] = ("en_US", "en_GB", "de_DE", "fr_FR", "en_IN")


@dataclass(frozen=True)
class Value:
    """One planted value: the text put in a sentence and the private parts in it.

    ``secrets`` are the private values themselves (each a substring of ``text``); ``text``
    may hold a keyword or a host around them that is not scored (``DB_PASSWORD=<secret>``).
    ``parts`` are extra identifying pieces that are not tokens of a secret by the scorer's
    rule, like an email's lower-case local part. ``variant`` splits a kind for the report
    (locale, card network, format, keyword or bare).
    """

    text: str
    secrets: tuple[str, ...]
    variant: str
    parts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Refuse a value whose private parts are not in its text."""
        missing = [s for s in (*self.secrets, *self.parts) if s not in self.text]
        if missing or not self.secrets:
            raise ValueError(f"secrets must occur in the planted text ({self.variant})")


def plain(text: str, variant: str) -> Value:
    """Return a value that is all secret."""
    return Value(text, (text,), variant)


@dataclass
class Source:
    """Seeded randomness: one ``random.Random`` and one seeded Faker per locale, made on use."""

    seed: int
    rng: random.Random = field(init=False)
    _fakers: dict[str, Faker] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        """Seed the generator from ``seed``."""
        self.rng = random.Random(self.seed)

    def faker(self, locale: str) -> Faker:
        """Return the Faker of ``locale``, seeded from ``seed`` and the locale."""
        if locale not in self._fakers:
            faker = Faker(locale)
            faker.seed_instance(self.seed * 31 + LOCALES.index(locale))
            self._fakers[locale] = faker
        return self._fakers[locale]

    def locale(self, among: tuple[str, ...] = LOCALES) -> tuple[str, Faker]:
        """Return a random locale of ``among`` and its Faker."""
        name = self.rng.choice(among)
        return name, self.faker(name)

    def chars(self, alphabet: str, n: int) -> str:
        """Return ``n`` random characters of ``alphabet``."""
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def digits(self, n: int) -> str:
        """Return ``n`` random decimal digits."""
        return self.chars(string.digits, n)

    def alnum(self, n: int) -> str:
        """Return ``n`` random ASCII letters and digits, holding at least one of each case."""
        while True:
            text = self.chars(string.ascii_letters + string.digits, n)
            if n < 3 or (not text.islower() and not text.isupper()):
                return text
