"""Find credentials in the shapes prose and commands carry them, beside detect-secrets.

The plugins read assignments (``password = "…"``); people and agents also write an
``Authorization:`` header, a ``curl -u user:password``, or "the db pw is hunter2". A value
after "is" is a password only if it does not read as an ordinary word of the sentence
("the password is required"): one with a digit or a symbol, or a word not of that kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from learnstream.streams.privacy.words import word_set

__all__ = ["CREDENTIAL_ENTITIES", "CREDENTIAL_GATE", "credential_spans"]

CREDENTIAL_ENTITIES = ("BEARER_TOKEN",)
#: Words the secret gate must let through for the patterns below (lower-cased text).
CREDENTIAL_GATE = r"bearer|authorization|curl|pw"
_TOKEN = r"[A-Za-z0-9._~+/=-]"  # noqa: S105 - a character class, not a password
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (entity, re.compile(rx))
    for entity, rx in (
        # Bearer <token>: any header or prose, the token long and holding a digit
        ("BEARER_TOKEN", rf"(?i:bearer)\s+(?P<value>(?=\S*\d){_TOKEN}{{16,}})"),
        # Authorization: Basic <base64 of user:password>, in a header or a quoted one
        (
            "BASIC_AUTH_PASSWORD",
            rf"(?i:authorization[\"']?\s*[:=]\s*[\"']?basic)\s+(?P<value>{_TOKEN}{{8,}})",
        ),
        # curl -u user:password / --user=user:password: the whole credential goes
        (
            "BASIC_AUTH_PASSWORD",
            r"(?<![\w-])curl\b[^\n]*?\s(?:-u\s*|--user[\s=])[\"']?(?P<value>[^\s\"']+)",
        ),
        # the password is X / pw: X / passwd = X, in any case
        (
            "PASSWORD",
            r"(?i:(?<![\w-])(?:password|passwd|passphrase|pwd|pw)(?P<is>\s+(?:is|was)\s+|"
            r"\s*[:=]\s*))[\"']?(?!(?:str|int|bytes|bool|None|Optional|SecretStr)\b)"
            r"(?![\w.]*\()(?P<value>[^\s\"',;()\[\]{}][^\s\"',;]*?)[\"']?(?=[\s\"',;]|[.!?](?:\s|$)|$)",
        ),
    )
)


#: Words that follow "password is" in a sentence about passwords, not in a disclosure.
_PROSE = word_set(
    "a an the not no too also never only now still set empty required incorrect invalid "
    "wrong correct missing optional hashed encrypted stored saved sent reset expired "
    "changed weak strong long short case derived used needed shown hidden visible given "
    "known unknown same different checked verified generated protected blank none null "
    "secret masked ignored entered typed accepted rejected please"
)


#: Adverbs that follow "password is" ("is currently stored"). A list, not the "-ly" ending:
#: dictionary words are common passwords, and "dragonfly" or "butterfly" end in it too.
_ADVERBS = word_set(
    "actually already always automatically currently definitely easily entirely exactly "
    "finally first fully generally likely mostly normally now often only partially "
    "periodically possibly probably properly randomly really regularly securely simply "
    "sometimes still strictly supposedly temporarily then typically unlikely usually "
    "very"
)


def _prose(value: str) -> bool:
    """Tell whether a value after "is" reads as the sentence's next word, not a password:
    a word of the list above, or a participle or adjective ("expired", "missing",
    "guessable")."""
    word = value.rstrip(".!?").lower()
    if not word.isalpha():
        return False
    return word in _PROSE or word in _ADVERBS or word.endswith(("ed", "ing", "able", "ible"))


def credential_spans(line: str) -> Iterator[tuple[str, int, int]]:
    """Yield (entity, start, end) of every credential value in one line."""
    for entity, regex in _PATTERNS:
        for match in regex.finditer(line):
            value = match.group("value")
            if (
                "is" in regex.groupindex
                and match.group("is").strip() in ("is", "was")
                and _prose(value)
            ):
                continue
            if value.strip("*.") and not value.startswith(("$", "<", "{")):
                yield entity, *match.span("value")
