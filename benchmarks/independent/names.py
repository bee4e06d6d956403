"""Name forms presidio-evaluator's templates lack: other scripts, other cases, handles, logins.

Names in Cyrillic, CJK, Arabic and Devanagari come from Faker's locales (family name first
where the locale writes it so); the lower-case, ALL-CAPS and @handle forms are made from
the English name the template was filled with. A login name says little in prose, so it is
written after the keys and flags that carry one in configs, logs and commands: those
carriers are this module's own (``USER_KEYS``), which the report says.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from faker import Faker

__all__ = ["FORMS", "SCRIPTS", "USER_KEYS", "handle", "login", "script_maker", "script_name"]

#: Script -> the Faker locales whose names are written in it.
SCRIPTS: dict[str, tuple[str, ...]] = {
    "Cyrillic": ("ru_RU", "uk_UA", "bg_BG"),
    "CJK": ("zh_CN", "zh_TW", "ja_JP", "ko_KR"),
    "Arabic": ("ar_AA", "ar_SA"),
    "Devanagari": ("hi_IN", "ne_NP"),
}
_FAMILY_FIRST = {"zh_CN": "", "zh_TW": "", "ko_KR": "", "ja_JP": " "}
#: Where a login name stands in configs, logs and commands (this project's carriers).
USER_KEYS: tuple[str, ...] = (
    "user: {u}", "username={u}", "User {u}", "--user {u}", '"login": "{u}"',
    "ssh {u}@build-01 'systemctl restart worker'", "sudo -u {u} psql", "owner={u} group=staff",
    "Failed password for {u} from 10.0.0.5 port 52144", "git log --author={u}",
)  # fmt: skip


def script_name(faker: Faker, locale: str, words: int) -> str:
    """Return a first or family name alone (``words`` 1) or both, as ``locale`` writes them."""
    first, last = faker.first_name(), faker.last_name()
    if words == 1:
        return faker.random_element((first, last))
    if locale in _FAMILY_FIRST:
        return f"{last}{_FAMILY_FIRST[locale]}{first}"
    return f"{first} {last}"


def script_maker(script: str, seed: int) -> Callable[[str], str]:
    """Return what replaces a name by one in ``script`` of as many parts (1, or 2 and more)."""
    locales = SCRIPTS[script]
    fakers = {locale: Faker(locale) for locale in locales}
    for n, faker in enumerate(fakers.values()):
        faker.seed_instance(seed * 101 + n)
    rng = random.Random(seed)

    def make(name: str) -> str:
        locale = rng.choice(locales)
        return script_name(fakers[locale], locale, 1 if " " not in name.strip() else 2)

    return make


def _ascii_words(name: str) -> list[str]:
    return ["".join(c for c in w.lower() if c.isascii() and c.isalnum()) for w in name.split()]


def login(name: str, rng: random.Random) -> str:
    """Return a login name made from a person's name: jsmith, john.smith, smithj, john_s42."""
    words = [w for w in _ascii_words(name) if w] or ["user"]
    first, last = words[0], words[-1]
    shapes = (
        f"{first[0]}{last}", f"{first}.{last}", f"{last}{first[0]}", f"{first}_{last[0]}",
        f"{first}{last}{rng.randint(1, 99)}", f"{first}{rng.randint(70, 99)}",
    )  # fmt: skip
    return rng.choice(shapes if len(words) > 1 else shapes[-1:] + (first,))


def handle(name: str, rng: random.Random) -> str:
    """Return an @handle made from a person's name."""
    return "@" + login(name, rng)


#: Form -> how an English name becomes it (the scripts are drawn from Faker instead).
FORMS: dict[str, Callable[[str, random.Random], str]] = {
    "lower-case": lambda name, _rng: name.lower(),
    "ALL-CAPS": lambda name, _rng: name.upper(),
    "@handle": handle,
}
