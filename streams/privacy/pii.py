"""PII anonymization of LearningSample payloads with Presidio (offline, cached)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import re
from collections import Counter
from typing import Any

from presidio_anonymizer import AnonymizerEngine, OperatorConfig, RecognizerResult

from streams.privacy.cache import DigestCache
from streams.privacy.config import NER_ENTITIES, PrivacyConfig
from streams.privacy.context import BIRTH_WORDS, PASSPORT_WORDS
from streams.privacy.idkeys import META_IDS, META_TEXT, is_id_key, is_wellformed_id
from streams.privacy.ner import NerDetector, may_name
from streams.privacy.recognizers import build_analyzer
from streams.privacy.secrets import Span, find_secrets, may_hold_secret

__all__ = ["CACHE_SIZE", "Anonymizer", "build_anonymizer"]

CACHE_SIZE = 10_000
#: Cheap pre-filter, safe for every pattern entity: emails need "@", scheme URLs ":" and ".",
#: phone / card / national ids / IBAN / IPv4 / addresses / dates need digits, IPv6 ":", a MAC
#: ":", "-" or ".". Names and places are NER's, gated by ``ner.may_name`` instead.
_MAY_HOLD_PII = re.compile(r"[\d@:.-]")
_DIGIT = re.compile(r"\d")  # Unicode digits, as Presidio's patterns read them
_BIRTH = re.compile(rf"(?i)(?<!\w)(?:{BIRTH_WORDS})(?!\w)")
_PASSPORT = re.compile(rf"(?i)(?<!\w)(?:{PASSPORT_WORDS})(?!\w)")
_Counts = tuple[tuple[str, int], ...]
_Spans = list[tuple[str, int, int]]
#: What a string needs before a pattern recognizer can find its entity in it: (digits it
#: must hold at least, a test of the text). Each is a necessary condition of the recognizer's
#: patterns (tests/unit/test_pii_gates.py checks the gated result equals the ungated one):
#: a card is >= 12 digits, an SSN 9, an IBAN 2 check digits in >= 13 characters, an email
#: needs "@", a URL "://" (scheme URLs only), an IPv4 address 3 dots and 4 digits, IPv6 two
#: colons, a MAC five separators, a date of birth or passport number its keyword. No
#: region's numbers are shorter than 4 digits in phonenumbers' metadata, so a phone needs 4
#: whatever ``phone_regions`` holds.
_NEEDS: dict[str, tuple[int, Any]] = {
    "EMAIL_ADDRESS": (0, lambda t: "@" in t),
    "URL": (0, lambda t: "://" in t),
    "PHONE_NUMBER": (4, None),
    "CREDIT_CARD": (12, None),
    "US_SSN": (9, None),
    "UK_NINO": (6, None),
    "DE_TAX_ID": (11, None),
    "FR_NIR": (13, None),
    "IN_AADHAAR": (12, None),
    "IN_PAN": (4, None),
    "IBAN_CODE": (2, lambda t: len(t) >= 13),
    "IP_ADDRESS": (
        0,
        lambda t: t.count(":") >= 2 or (t.count(".") >= 3 and bool(_DIGIT.search(t))),
    ),
    "MAC_ADDRESS": (0, lambda t: t.count(":") >= 5 or t.count("-") >= 5 or t.count(".") >= 2),
    "DATE_OF_BIRTH": (2, lambda t: _BIRTH.search(t) is not None),
    "PASSPORT": (1, lambda t: _PASSPORT.search(t) is not None),
    "STREET_ADDRESS": (1, None),
}


#: Made-up text holding one of each pattern entity, a name and a secret's shape:
#: ``Anonymizer.warm`` runs it once so that what the recognizers load on first use (phone
#: metadata per region, compiled patterns, secret plugins, the NER model's first call) is
#: loaded at start, not while the first records wait.
_WARM_TEXT = (
    "Dana Whitfield: call +1 415-555-0100 or 020 7946 0000, mail jane@ops.acme.local, see "
    "https://example.com/x, card 4111 1111 1111 1111, SSN 536-22-8726, NINO AB 12 34 56 C, "
    "Steuer-ID 86095742719, NIR 1 84 12 76 451 089 46, Aadhaar 2345 6789 0124, PAN ABCPD1234E, "
    "passport C01X00T47, born 1973-07-08, at 1777 Kramer Court, Johnsonfurt, NE 80119, "
    "IBAN DE89370400440532013000, hosts 192.0.2.1, 2001:db8::1 and 00:1a:2b:3c:4d:5e, "
    "token api_key=EXAMPLEexample0123456789abcdef"
)


def _operator(config: PrivacyConfig) -> OperatorConfig:
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


def _config_key(config: PrivacyConfig) -> bytes:
    """Return a digest of every setting that changes what a text anonymizes to."""
    return hashlib.sha256(repr(dataclasses.astuple(config)).encode()).digest()


class Anonymizer:
    """Replace PII in sample payloads; engines are built once per instance."""

    def __init__(self, config: PrivacyConfig) -> None:
        """Build the Presidio analyzer, the NER model and the anonymizer (none if PII is off)."""
        self.config = config
        pii_on = config.anonymize_pii and bool(config.analyzed_entities)
        self._entities = [e for e in config.entities if e not in NER_ENTITIES]
        self._secrets = config.anonymize_pii and config.detect_secrets
        self._enabled = self._secrets or pii_on
        self._gates = {e: _NEEDS[e] for e in self._entities if e in _NEEDS}
        self._operators = {"DEFAULT": _operator(config)}
        self._analyzer = build_analyzer(config) if pii_on and self._entities else None
        self._ner = NerDetector() if pii_on and config.ner else None
        self._engine = AnonymizerEngine()  # type: ignore[no-untyped-call]
        self._cache: DigestCache[tuple[str, _Counts]] = DigestCache(CACHE_SIZE, _config_key(config))
        self._ahead: dict[bytes, _Spans] = {}  # NER spans found for a record's texts at once

    def warm(self) -> None:
        """Run every configured recognizer once on made-up text (nothing is cached).

        Presidio, phonenumbers and spaCy load a good part of what they need on first use; a
        worker calls this at start, before it freezes its start-up objects out of the
        collector, so neither the first records nor every later full collection pays for it.
        """
        if self._enabled:
            self._anonymize_uncached(_WARM_TEXT)

    def anonymize_text(self, text: str) -> tuple[str, Counter[str]]:
        """Return text with PII and secrets replaced and the count of entities found, by type."""
        if not self._needs_reading(text):
            return text, Counter()  # e.g. "src/app.py": a dot, but no entity's shape
        key = self._cache.digest(text)
        done = self._cache.get(key)
        if done is None:
            done = self._anonymize_uncached(text, self._ahead.pop(key, None))
            self._cache.put(key, done)
        return done[0], Counter(dict(done[1]))

    def _needs_reading(self, text: str) -> bool:
        """Tell whether any configured detector could find something in text."""
        if not self._enabled or not text:
            return False
        if self._ner is not None and may_name(text):
            return True
        return self._may_hold_pii(text) or (self._secrets and may_hold_secret(text))

    def _may_hold_pii(self, text: str) -> bool:
        """Tell whether a configured pattern recognizer could match text at all."""
        if self._analyzer is None or not _MAY_HOLD_PII.search(text):
            return False
        return bool(self.candidates(text))

    def candidates(self, text: str) -> list[str]:
        """Return the configured pattern entities whose recognizer could match ``text``."""
        digits = len(_DIGIT.findall(text))
        return [
            entity
            for entity in self._entities
            if (gate := self._gates.get(entity)) is None
            or (digits >= gate[0] and (gate[1] is None or gate[1](text)))
        ]

    def _anonymize_uncached(self, text: str, names: _Spans | None = None) -> tuple[str, _Counts]:
        """Analyze and anonymize one string (memoized by anonymize_text)."""
        found = []
        if self._analyzer is not None and (entities := self.candidates(text)):
            found = self._analyzer.analyze(text, language="en", entities=entities)
        pii = [RecognizerResult(r.entity_type, r.start, r.end, r.score) for r in found]
        if names is None and self._ner is not None and may_name(text):
            names = self._ner.find([text])[0]
        secrets = find_secrets(text) if self._secrets else []
        pii += _names_beside(pii, secrets, names or [])
        results = _absorb(pii, secrets) if secrets else pii
        if not results:
            return text, ()
        out = self._engine.anonymize(
            text, results, operators=self._operators, merge_entities_with_spaces=False
        )
        return out.text, tuple(Counter(item.entity_type for item in out.items).items())

    def _read_names_ahead(self, texts: list[str]) -> None:
        """Run NER once over the texts of a record that it has not read yet (``nlp.pipe``)."""
        if self._ner is None:
            return
        todo = {}
        for text in texts:
            key = self._cache.digest(text) if text and may_name(text) else None
            if key is not None and key not in todo and self._cache.get(key) is None:
                todo[key] = text
        if todo:
            self._ahead = dict(zip(todo, self._ner.find(list(todo.values())), strict=True))

    def _walk(self, value: Any, counts: Counter[str], under_id: bool = False) -> Any:
        """Return a copy of value with every string leaf anonymized.

        Under an id key only well-formed ids are kept unread: ``customer_id: "jane@corp.com"``
        is scanned like any other string.
        """
        if isinstance(value, str):
            if under_id and is_wellformed_id(value):  # nothing a detector reads: kept as is
                return value
            text, found = self.anonymize_text(value)
            counts.update(found)
            return text
        if isinstance(value, dict):
            return {k: self._walk(v, counts, is_id_key(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            items = [self._walk(v, counts, under_id) for v in value]
            return tuple(items) if isinstance(value, tuple) else items
        if value is None or isinstance(value, int | float):  # immutable: nothing to copy
            return value
        return copy.deepcopy(value)

    def anonymize_sample(self, sample: dict[str, Any]) -> tuple[dict[str, Any], Counter[str]]:
        """Return a new sample with input, state, output and feedback.details anonymized.

        Well-formed ids under id keys ("id", "*_id", "*_ids") are kept. In meta, the fields
        taken from the runtime's input are read too: ``id_refs`` and ``source_flow_id`` as ids,
        ``ambiguity_flags`` as text. sample_id, sample_family, created_at, the rest of meta
        and feedback.source/type/quality_label are copied untouched.
        """
        counts: Counter[str] = Counter()
        self._read_names_ahead(
            [t for k, v in sample.items() if k != "sample_id" for t in _strings(v)]
        )
        try:
            out = {k: self._section(k, v, counts) for k, v in sample.items()}
        finally:
            self._ahead = {}
        return out, counts

    def _section(self, key: str, value: Any, counts: Counter[str]) -> Any:
        """Return the anonymized copy of one top-level section of a sample."""
        if key in ("input", "state", "output"):
            return self._walk(value, counts)
        if key == "feedback" and isinstance(value, dict):
            return {
                k: self._walk(v, counts) if k == "details" else copy.deepcopy(v)
                for k, v in value.items()
            }
        if key == "meta" and isinstance(value, dict):
            return {k: self._meta_field(k, v, counts) for k, v in value.items()}
        return copy.deepcopy(value)

    def _meta_field(self, key: str, value: Any, counts: Counter[str]) -> Any:
        """Return one meta field: runtime ids and text anonymized, our provenance copied."""
        if key in META_IDS and isinstance(value, dict):  # id_refs: {path: runtime id}
            return {k: self._walk(v, counts, under_id=True) for k, v in value.items()}
        if key in META_IDS or key in META_TEXT:
            return self._walk(value, counts, under_id=key in META_IDS)
        return copy.deepcopy(value)


def _names_beside(
    found: list[RecognizerResult], secrets: list[Span], names: _Spans
) -> list[RecognizerResult]:
    """Return NER's spans that overlap no pattern hit and no secret, as results.

    A pattern hit or a secret is the more precise of the two: the small model sometimes
    takes a whole short text with an IBAN or a token in it for a name, which would hide
    the kind found and merge neighbouring secrets into one.
    """
    taken = [(hit.start, hit.end) for hit in found] + [(s, e) for _, s, e in secrets]
    return [
        RecognizerResult(entity, start, end, 0.85)
        for entity, start, end in names
        if not any(s < end and start < e for s, e in taken)
    ]


def _strings(value: Any) -> list[str]:
    """Return every string leaf below value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _strings(v)]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _strings(v)]
    return []


def _absorb(pii: list[RecognizerResult], secrets: list[Span]) -> list[RecognizerResult]:
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
    return rest + [RecognizerResult(entity, start, end, 1.0) for entity, start, end in spans]


def build_anonymizer(config: PrivacyConfig) -> Anonymizer:
    """Build an Anonymizer for config (engines are constructed once, here)."""
    return Anonymizer(config)
