"""Presidio's phone and US SSN recognizers, with the checks agent text needs.

Agent text is full of digit runs (short hashes, PR numbers, build ids), so a phone number
written without any separator must be long enough to dial, and a bare nine-digit SSN
counts only next to a word that says a person's record is meant.
"""

from __future__ import annotations

import re

from presidio_analyzer import RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts
from presidio_analyzer.predefined_recognizers import PhoneRecognizer, UsSsnRecognizer

__all__ = ["CuedSsnRecognizer", "DialablePhoneRecognizer"]

#: Fewest digits of a phone number written as one run: national numbers of the default
#: regions are 10 or 11 digits with their trunk prefix, so 7 digits in a row is an id.
_RUN_DIGITS = 9
_BARE_SSN = re.compile(r"(?<![\w.-])\d{9}(?![\w]|[.-]\w)")
#: Words that mark a person's identity record around a bare SSN (within ``_NEAR`` chars).
_SSN_CUES = re.compile(
    r"(?i)(?<!\w)(?:ssn|ssns|social security|soc\.? ?sec|tin|taxpayer|employee|applicant|"
    r"identity|hr|onboarding|new hire|hire|payroll|personnel|form|w-?2|w-?4|i-?9)(?!\w)"
)
_NEAR = 60


class DialablePhoneRecognizer(PhoneRecognizer):
    """Find phone numbers, leaving short digit runs and path segments alone."""

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts = None,  # type: ignore[assignment]  # Presidio's default
    ) -> list[RecognizerResult]:
        """Return phonenumbers' matches that are separated or long enough to dial."""
        found = super().analyze(text, entities, nlp_artifacts)
        return [r for r in found if _dialable(text, r.start, r.end)]


def _dialable(text: str, start: int, end: int) -> bool:
    """Tell whether a match reads as a phone number rather than an id or a path part."""
    if start and text[start - 1] in "/#=":
        return False
    body = text[start:end].strip("()")
    if body.startswith("+") or not body.isdigit():
        return True
    return len(body) >= _RUN_DIGITS


class CuedSsnRecognizer(UsSsnRecognizer):
    """Find SSNs: Presidio's separated forms, and nine bare digits beside an identity cue."""

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts | None = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Return the separated SSNs and the bare ones a cue stands near."""
        found = super().analyze(text, entities, nlp_artifacts, regex_flags)
        found = [r for r in found if not text[r.start : r.end].isdigit()]
        for m in _BARE_SSN.finditer(text):
            near = text[max(0, m.start() - _NEAR) : m.end() + _NEAR]
            if _issued(m.group()) and _SSN_CUES.search(near):
                found.append(RecognizerResult("US_SSN", m.start(), m.end(), 0.6))
        return found


def _issued(number: str) -> bool:
    """Tell whether nine digits follow the SSA's rules: area 001-899 but 666, group, serial."""
    area, group, serial = int(number[:3]), number[3:5], number[5:]
    return 0 < area < 900 and area != 666 and group != "00" and serial != "0000"
