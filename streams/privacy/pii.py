"""PII anonymization of LearningSample payloads with Presidio (offline, cached)."""

from __future__ import annotations

import copy
import hashlib
import re
from collections import Counter
from functools import lru_cache
from typing import Any

from presidio_anonymizer import AnonymizerEngine, OperatorConfig, RecognizerResult

from streams.privacy.config import PrivacyConfig
from streams.privacy.idkeys import META_IDS, META_TEXT, is_id_key, is_wellformed_id
from streams.privacy.recognizers import build_analyzer
from streams.privacy.secrets import Span, find_secrets, may_hold_secret

__all__ = ["CACHE_SIZE", "Anonymizer", "build_anonymizer"]

CACHE_SIZE = 10_000
#: Cheap pre-filter, safe for every pattern entity: emails need "@", scheme URLs ":" and ".",
#: phone / card / SSN / IBAN / IPv4 need digits, IPv6 needs ":". Disabled when NER is on.
_MAY_HOLD_PII = re.compile(r"[\d@:.]")
_DIGIT = re.compile(r"\d")  # Unicode digits, as Presidio's patterns read them
_Counts = tuple[tuple[str, int], ...]
#: What a string needs before a pattern recognizer can find its entity in it: (digits it
#: must hold at least, a test of the text). Each is a necessary condition of the recognizer's
#: patterns (and tests/unit/test_privacy.py checks the gated result equals Presidio's own):
#: a card is >= 13 digits, an SSN 9, an IBAN 2 check digits in >= 13 characters, an email
#: needs "@", a URL "://" (scheme URLs only), an IPv4 address 3 dots and 4 digits, IPv6 two
#: colons. No region's numbers are shorter than 4 digits in phonenumbers' metadata, so a phone
#: needs 4 whatever ``phone_regions`` holds (tests/unit/test_pii_gates.py checks both).
_NEEDS: dict[str, tuple[int, Any]] = {
    "EMAIL_ADDRESS": (0, lambda t: "@" in t),
    "URL": (0, lambda t: "://" in t),
    "PHONE_NUMBER": (4, None),
    "CREDIT_CARD": (12, None),
    "US_SSN": (9, None),
    "IBAN_CODE": (2, lambda t: len(t) >= 13),
    "IP_ADDRESS": (
        0,
        lambda t: t.count(":") >= 2 or (t.count(".") >= 3 and bool(_DIGIT.search(t))),
    ),
}


#: Made-up text holding one of each pattern entity and a secret's shape: ``Anonymizer.warm``
#: runs it once so that what the recognizers load on first use (phone metadata per region,
#: compiled patterns, secret plugins) is loaded at start, not while the first records wait.
_WARM_TEXT = (
    "Call +1 415-555-0100 or 020 7946 0000, mail jane@example.com, see https://example.com/x, "
    "card 4111 1111 1111 1111, SSN 536-22-8726, IBAN DE89370400440532013000, hosts 192.0.2.1 "
    "and 2001:db8::1, token api_key=EXAMPLEexample0123456789abcdef"
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


class Anonymizer:
    """Replace PII in sample payloads; engines are built once per instance."""

    def __init__(self, config: PrivacyConfig) -> None:
        """Build the Presidio analyzer and anonymizer engines (no-op if PII is off)."""
        self.config = config
        self._entities = list(config.analyzed_entities)
        self._secrets = config.anonymize_pii and config.detect_secrets
        self._enabled = self._secrets or (config.anonymize_pii and bool(self._entities))
        self._prefilter = None if config.ner else _MAY_HOLD_PII
        # With NER every string may hold a name or place: no entity is ruled out by shape.
        self._gates = {} if config.ner else {e: _NEEDS[e] for e in self._entities if e in _NEEDS}
        self._operators = {"DEFAULT": _operator(config)}
        pii_on = config.anonymize_pii and bool(self._entities)
        self._analyzer = build_analyzer(config) if pii_on else None
        self._engine = AnonymizerEngine()  # type: ignore[no-untyped-call]
        self._cached = lru_cache(maxsize=CACHE_SIZE)(self._anonymize_uncached)

    def warm(self) -> None:
        """Run every configured recognizer once on made-up text (nothing is cached).

        Presidio and phonenumbers load a good part of what they need on first use; a worker
        calls this at start, before it freezes its start-up objects out of the collector, so
        neither the first records nor every later full collection pays for it.
        """
        if self._enabled:
            self._anonymize_uncached(_WARM_TEXT)

    def anonymize_text(self, text: str) -> tuple[str, Counter[str]]:
        """Return text with PII and secrets replaced and the count of entities found, by type."""
        if not self._enabled or not text:
            return text, Counter()
        if not self._may_hold_pii(text) and not (self._secrets and may_hold_secret(text)):
            return text, Counter()  # e.g. "src/app.py": a dot, but no entity's shape
        new_text, counts = self._cached(text)
        return new_text, Counter(dict(counts))

    def _may_hold_pii(self, text: str) -> bool:
        """Tell whether a configured PII recognizer could match text at all."""
        if self._analyzer is None:
            return False
        if self._prefilter is not None and not self._prefilter.search(text):
            return False
        return bool(self.candidates(text))

    def candidates(self, text: str) -> list[str]:
        """Return the configured entities whose recognizer could match ``text`` at all."""
        if not self._gates:
            return self._entities
        digits = len(_DIGIT.findall(text))
        return [
            entity
            for entity in self._entities
            if (gate := self._gates.get(entity)) is None
            or (digits >= gate[0] and (gate[1] is None or gate[1](text)))
        ]

    def _anonymize_uncached(self, text: str) -> tuple[str, _Counts]:
        """Analyze and anonymize one string (memoized by anonymize_text)."""
        found = []
        if self._analyzer is not None and (entities := self.candidates(text)):
            found = self._analyzer.analyze(text, language="en", entities=entities)
        pii = [RecognizerResult(r.entity_type, r.start, r.end, r.score) for r in found]
        secrets = find_secrets(text) if self._secrets else []
        results = _absorb(pii, secrets) if secrets else pii
        if not results:
            return text, ()
        out = self._engine.anonymize(
            text, results, operators=self._operators, merge_entities_with_spaces=False
        )
        return out.text, tuple(Counter(item.entity_type for item in out.items).items())

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
        out = {k: self._section(k, v, counts) for k, v in sample.items()}
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
