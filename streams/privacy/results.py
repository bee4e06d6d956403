"""Turn pattern hits, secrets and name spans into the one list of results Presidio replaces."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from presidio_anonymizer import OperatorConfig, RecognizerResult

from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.secrets import Span

__all__ = [
    "logins_in_names",
    "NAMES",
    "SECRETS",
    "Found",
    "absorb",
    "names_beside",
    "operator",
    "recognizer",
    "tagged",
]

#: The recognizer names of what Presidio's analyzer does not find (``learnstream privacy
#: explain`` shows them): names and places (streams/privacy/names.py), secrets (secrets.py).
NAMES, SECRETS = "names", "secrets"


@dataclass(frozen=True)
class Found:
    """What one text holds: the results to mask, and PII hits an allowed item let through."""

    results: list[RecognizerResult]
    allowed: list[RecognizerResult]


class Tagged(RecognizerResult):
    """A result that names the recognizer that found it (the anonymizer's has no room)."""

    def __init__(self, entity: str, start: int, end: int, score: float, name: str) -> None:
        """Keep the result and the recognizer's name."""
        super().__init__(entity, start, end, score)
        self.recognizer = name


def tagged(entity: str, start: int, end: int, score: float, name: str) -> RecognizerResult:
    """Return a result that names the recognizer that found it."""
    return Tagged(entity, start, end, score, name)


def recognizer(result: RecognizerResult) -> str:
    """Return the name of the recognizer that found result ("" when none was named)."""
    return result.recognizer if isinstance(result, Tagged) else ""


def operator(config: PrivacyConfig) -> OperatorConfig:
    """Translate the configured operator into a Presidio operator config."""
    if config.operator == "mask":
        params = {"masking_char": "*", "chars_to_mask": 1_000_000, "from_end": False}
        return OperatorConfig("mask", params)
    if config.operator == "hash":
        salt = hashlib.sha256(config.hash_salt.encode()).hexdigest()  # >= 16 bytes, stable
        return OperatorConfig("hash", {"hash_type": "sha256", "salt": salt})
    if config.operator == "redact":
        return OperatorConfig("redact", {})
    return OperatorConfig("replace", {})


def logins_in_names(found: list[RecognizerResult], names: list[Span]) -> list[RecognizerResult]:
    """Return the pattern hits without the usernames that lie inside a wider person's name:
    the login read after "User:" is the first word of a name written out ("User: Dana
    Whitfield"), which the whole name masks; else the name, overlapping it, would be
    dropped and its surname left."""
    people = [(a, b) for entity, a, b in names if entity == "PERSON"]
    return [
        hit
        for hit in found
        if hit.entity_type != "USERNAME"
        or not any(
            a <= hit.start and hit.end <= b and b - a > hit.end - hit.start for a, b in people
        )
    ]


def names_beside(
    found: list[RecognizerResult], secrets: list[Span], names: list[Span]
) -> list[RecognizerResult]:
    """Return the name spans that overlap no pattern hit and no secret, as results.

    A pattern hit or a secret is the more precise of the two: the small model sometimes
    takes a whole short text with an IBAN or a token in it for a name, which would hide
    the kind found and merge neighbouring secrets into one.
    """
    taken = [(hit.start, hit.end) for hit in found] + [(s, e) for _, s, e in secrets]
    return [
        tagged(entity, start, end, 0.85, NAMES)
        for entity, start, end in names
        if not any(s < end and start < e for s, e in taken)
    ]


def absorb(pii: list[RecognizerResult], secrets: list[Span]) -> list[RecognizerResult]:
    """Return secrets and PII as results, a secret taking in every PII hit it overlaps.

    The secret's whole value must go: an email inside ``https://bob:pw@corp.com`` must not
    leave half of the password behind, so overlapping spans become one secret span.
    """
    spans, rest, changed = list(secrets), list(pii), True
    while changed:  # an absorbed hit widens a span, which may then overlap another hit
        changed = False
        for hit in list(rest):
            touching = [s for s in spans if hit.start < s[2] and s[1] < hit.end]
            if touching:
                starts, ends = (
                    [hit.start, *(s[1] for s in touching)],
                    [hit.end, *(s[2] for s in touching)],
                )
                spans = [s for s in spans if s not in touching]
                spans.append((touching[0][0], min(starts), max(ends)))
                rest.remove(hit)
                changed = True
    return rest + [tagged(entity, start, end, 1.0, SECRETS) for entity, start, end in spans]
