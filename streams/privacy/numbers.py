"""Presidio's phone and US SSN recognizers, with the checks agent text needs.

Agent text is full of digit runs (short hashes, PR numbers, build ids), so a phone number
written without any separator must be long enough to dial, and a bare nine-digit SSN
counts only next to a word that says a person's record is meant.
"""

from __future__ import annotations

import re

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberMatch, PhoneNumberMatcher
from presidio_analyzer import EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts
from presidio_analyzer.predefined_recognizers import PhoneRecognizer, UsSsnRecognizer

from learnstream.streams.privacy.cache import DigestCache

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


#: A number written in groups as people write phones: an optional ``+`` and country code, an
#: optional trunk or area code in brackets, then two to five groups of 2-4 digits joined by
#: one space, dash or dot, or an area code and the subscriber's 5-8 digits (``96 466712``,
#: ``(72) 583-350``, ``20-33-70-48``, ``189.490.5807``, ``+447700 484887``); or one run of
#: 9-15 digits, a phone only right after a phone label (``_RUN_LABEL``). Any of them may end
#: in an extension as directories and vCards write one (``x469``, ``ext. 12``).
_GROUPED = re.compile(
    r"(?<![\w.+/#=:-])(?:\+\d{8,15}|(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?"
    r"\d{2,4}(?:[ .-]\d{2,4}){1,4}|(?:\+\d{1,3}[ .-]?)?\d{2,4}[ .-]\d{5,8}|\d{9,15})"
    r"(?:[ ]?(?:x|ext\.?)[ ]?\d{1,6})?(?!\w|[.-]\d|:\d)"
)
#: A phone label and its colon right before a number written as one run (``Desk: 00103288541``):
#: without the label such a run is as often an id.
_RUN_LABEL = re.compile(r"(?i)(?<!\w)(?:phone|tel|mobile|cell|fax|desk|office)\s*:\s*\Z")
#: Words that say a number is dialled: Presidio's phone context words, the TEL types of vCard
#: (RFC 6350: text, voice, fax, cell, video, pager, textphone, work, home) and the verbs and
#: labels of calling and texting, and of a call taken or missed (answering, voicemail).
_PHONE_CUES = re.compile(
    r"(?i)(?<!\w)(?:phones?|telephone|tel|mobile|cell(?:phone)?|call(?:ed|ing)?|fax|pager|"
    r"textphone|sms|texts?|messages?|whatsapp|dial(?:led)?|reach|answer(?:s|ed|ing)?|"
    r"voicemail|hotline)(?!\w)"
)
#: A vCard-like label right before (``Office: …``) or right after (``… office``) the number.
_LABEL_BEFORE = re.compile(r"(?i)(?<!\w)(?:office|desk|home|work|voice)\s*:?\s*\Z")
_LABEL_AFTER = re.compile(r"(?i)\A\s*[-,]?\s*(?:office|desk|home|work|voice)(?!\w)")
#: A date or a calendar version in groups (2024-05-01, 01.05.2024), never a phone.
_DATE = re.compile(r"(?:19|20)\d\d[ .-]\d\d[ .-]\d\d|\d\d[ .-]\d\d[ .-](?:19|20)\d\d")
#: A count written with thousands spaces: one to three digits, then groups of three.
_THOUSANDS = re.compile(r"\d{1,3}(?: \d{3})+")
#: What follows a count and never a phone: "per", or a plural word or unit ("100 000 rows",
#: "250 000 qps"), but the short words ending in s that follow a phone ("… is his number").
_COUNTED = re.compile(r"\A\s+(?:per|(?!(?:as|is|us|was|has|his|its|this|thus|yes)\b)[a-z]+s)\b")
_BEFORE, _AFTER = 32, 12
_CUED_DIGITS, _BARE_DIGITS = 6, 8


#: Candidates phonenumbers read as no phone, remembered per worker (their digests only).
NOT_A_PHONE_CACHE_SIZE = 8192


class _RememberingMatcher(PhoneNumberMatcher):
    """phonenumbers' matcher, told which candidates it already read as no phone.

    The matcher parses every digit run that may be a number once per region, and most are
    not phones (card numbers, addresses, versions, ids): the same ones come again in text
    after text. Whether a candidate is a phone for a region under the "valid" leniency
    depends on the candidate, the region and the two characters around it only
    (``PhoneNumberMatcher._parse_and_verify``), so a "no" for that key holds everywhere.
    A "yes" is not kept: the cache holds no number, only digests.
    """

    def __init__(self, text: str, region: str, leniency: int, refused: DigestCache[bool]) -> None:
        super().__init__(text, region, leniency=leniency)
        self._refused = refused

    def _parse_and_verify(self, candidate: str, offset: int) -> PhoneNumberMatch | None:
        end = offset + len(candidate)
        around = (self.text[offset - 1 : offset], self.text[end : end + 1])
        key = self._refused.digest(f"{self.preferred_region}|{self.leniency}|{around}|{candidate}")
        if self._refused.get(key):
            return None
        match = super()._parse_and_verify(candidate, offset)
        if match is None:
            self._refused.put(key, True)
        return match


class DialablePhoneRecognizer(PhoneRecognizer):
    """Find phone numbers, leaving short digit runs and path segments alone."""

    def __init__(self, supported_regions: tuple[str, ...] | list[str]) -> None:
        super().__init__(supported_regions=supported_regions)
        self._refused: DigestCache[bool] = DigestCache(NOT_A_PHONE_CACHE_SIZE, b"phone")

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts = None,  # type: ignore[assignment]  # Presidio's default
    ) -> list[RecognizerResult]:
        """Return phonenumbers' matches that are separated or long enough to dial, and
        numbers grouped as phones that phonenumbers does not read for the configured regions
        (another country's, or a local number without its area code)."""
        found = [r for r in self._matched(text, nlp_artifacts) if _dialable(text, r.start, r.end)]
        for m in _GROUPED.finditer(text):
            start, end = m.span()
            taken = any(r.start < end and start < r.end for r in found)
            if not taken and _grouped_phone(text, start, end):
                found.append(RecognizerResult("PHONE_NUMBER", start, end, 0.5))
        return found

    def _matched(self, text: str, nlp_artifacts: NlpArtifacts) -> list[RecognizerResult]:
        """Return what Presidio's phone recognizer returns, each region's matcher told the
        candidates already read as no phone."""
        leniency = 1 if self.leniency is None else self.leniency  # 1 (valid): Presidio's
        results = []
        for region in self.supported_regions:
            for match in _RememberingMatcher(text, region, leniency, self._refused):
                own = _region_of(match, region)
                result = self._get_recognizer_result(match, text, own, nlp_artifacts)  # type: ignore[no-untyped-call]
                results.append(result)
        return EntityRecognizer.remove_duplicates(results)


def _region_of(match: PhoneNumberMatch, region: str) -> str | None:
    """Return the region a match is explained under: its own when written with a country
    code, else the region whose matcher found it. (Presidio's loop gives a match written
    without one the region of the match before it, when that one had a country code: only
    the explanation differs, never a span or a score.)"""
    try:
        number = phonenumbers.parse(match.raw_string)
    except NumberParseException:
        return region
    return phonenumbers.region_code_for_number(number)


def _grouped_phone(text: str, start: int, end: int) -> bool:
    """Tell whether a grouped number is a phone: written with its country code or an area
    code in brackets, or with enough digits beside a word that says it is dialled (a phone
    label, "call", "fax").

    A grouped number alone is as often a count with thousands spaces (``1 000 000``), a
    date or a dotted version, so only the ``+`` of an international number or a bracketed
    area code stands alone.
    """
    value = text[start:end]
    count = sum(c.isdigit() for c in value)
    if count > 15 or _DATE.search(value) or _dotted_quad(value):
        return False
    if value.startswith(("+", "(")):
        return count >= _BARE_DIGITS
    before, after = text[max(0, start - _BEFORE) : start], text[end : end + _AFTER]
    if value.isdigit():
        return _RUN_LABEL.search(before) is not None
    if count < _CUED_DIGITS or _counted(text, start, end):
        return False
    if _LABEL_BEFORE.search(before) or _LABEL_AFTER.search(after):
        return True
    return _PHONE_CUES.search(f"{before} {after}") is not None


def _counted(text: str, start: int, end: int) -> bool:
    """Tell whether a grouped number is a count: written in thousands (``1 000 000``, of
    which the match may be the tail) and followed by what it counts (``250 000 per second``,
    ``100 000 queries``), or the tail of a longer number in thousands."""
    head = re.search(r"(?:\d{1,3} )+\Z", text[max(0, start - 16) : start])
    whole = (head.group() if head else "") + text[start:end]
    if not _THOUSANDS.fullmatch(whole):
        return False
    return head is not None or _COUNTED.match(text[end : end + 24]) is not None


def _dotted_quad(value: str) -> bool:
    """Tell whether value is four dotted groups of up to three digits (an IPv4 address)."""
    parts = value.split(".")
    return len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts)


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
