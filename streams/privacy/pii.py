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
from streams.privacy.recognizers import build_analyzer

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
#: colons. phonenumbers accepted numbers of 4 digits in a probe of every region Presidio asks
#: for, none of 3, so a phone needs 4.
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


def _is_id_key(key: Any) -> bool:
    """Tell whether a dict key names an identifier (kept verbatim with its subtree)."""
    k = key.lower() if isinstance(key, str) else ""
    return k == "id" or k.endswith(("_id", "_ids"))


class Anonymizer:
    """Replace PII in sample payloads; engines are built once per instance."""

    def __init__(self, config: PrivacyConfig) -> None:
        """Build the Presidio analyzer and anonymizer engines (no-op if PII is off)."""
        self.config = config
        self._enabled = config.anonymize_pii and bool(config.analyzed_entities)
        self._entities = list(config.analyzed_entities)
        self._prefilter = None if config.ner else _MAY_HOLD_PII
        # With NER every string may hold a name or place: no entity is ruled out by shape.
        self._gates = {} if config.ner else {e: _NEEDS[e] for e in self._entities if e in _NEEDS}
        self._operators = {"DEFAULT": _operator(config)}
        self._analyzer = build_analyzer(config) if self._enabled else None
        self._engine = AnonymizerEngine()  # type: ignore[no-untyped-call]
        self._cached = lru_cache(maxsize=CACHE_SIZE)(self._anonymize_uncached)

    def anonymize_text(self, text: str) -> tuple[str, Counter[str]]:
        """Return text with PII replaced and the count of entities found, by type."""
        if not self._enabled or not text:
            return text, Counter()
        if self._prefilter is not None and not self._prefilter.search(text):
            return text, Counter()
        if not self.candidates(text):  # e.g. "src/app.py": a dot, but no entity's shape
            return text, Counter()
        new_text, counts = self._cached(text)
        return new_text, Counter(dict(counts))

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
        entities = self.candidates(text)
        if self._analyzer is None or not entities:
            return text, ()
        found = self._analyzer.analyze(text, language="en", entities=entities)
        if not found:
            return text, ()
        results = [RecognizerResult(r.entity_type, r.start, r.end, r.score) for r in found]
        out = self._engine.anonymize(
            text, results, operators=self._operators, merge_entities_with_spaces=False
        )
        return out.text, tuple(Counter(item.entity_type for item in out.items).items())

    def _walk(self, value: Any, counts: Counter[str]) -> Any:
        """Return a copy of value with every string leaf anonymized, id keys excepted."""
        if isinstance(value, str):
            text, found = self.anonymize_text(value)
            counts.update(found)
            return text
        if isinstance(value, dict):
            return {
                k: copy.deepcopy(v) if _is_id_key(k) else self._walk(v, counts)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            items = [self._walk(v, counts) for v in value]
            return tuple(items) if isinstance(value, tuple) else items
        if value is None or isinstance(value, int | float):  # immutable: nothing to copy
            return value
        return copy.deepcopy(value)

    def anonymize_sample(self, sample: dict[str, Any]) -> tuple[dict[str, Any], Counter[str]]:
        """Return a new sample with input, state, output and feedback.details anonymized.

        Id keys ("id", "*_id", "*_ids") keep their subtree; sample_id, sample_family,
        created_at, meta and feedback.source/type/quality_label are copied untouched.
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
        return copy.deepcopy(value)


def build_anonymizer(config: PrivacyConfig) -> Anonymizer:
    """Build an Anonymizer for config (engines are constructed once, here)."""
    return Anonymizer(config)
