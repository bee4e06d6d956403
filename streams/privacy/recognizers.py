"""Offline Presidio analyzer of the pattern entities (NER runs beside it: ner.py)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from presidio_analyzer import (
    AnalyzerEngine,
    EntityRecognizer,
    RecognizerRegistry,
    RecognizerResult,
)
from presidio_analyzer.context_aware_enhancers import ContextAwareEnhancer
from presidio_analyzer.nlp_engine import NlpArtifacts
from presidio_analyzer.nlp_engine.no_op_nlp_engine import NoOpNlpEngine
from presidio_analyzer.predefined_recognizers import (
    IpRecognizer,
    MacAddressRecognizer,
    UrlRecognizer,
)

from learnstream.streams.privacy.addresses import StreetAddressRecognizer
from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.context import date_of_birth, passport
from learnstream.streams.privacy.handles import UsernameRecognizer
from learnstream.streams.privacy.nationalids import NATIONAL_ID_FACTORIES
from learnstream.streams.privacy.numbers import CuedSsnRecognizer, DialablePhoneRecognizer
from learnstream.streams.privacy.patterns import PATTERN_FACTORIES

__all__ = ["HostIpRecognizer", "NoContextEnhancer", "build_analyzer"]

#: Networks IANA keeps for documentation (RFC 5737, RFC 3849): an address in them names no
#: one's machine ("like 192.0.2.0/24", "2001:db8::1" in a manual or a config example).
_DOCUMENTATION = tuple(
    ipaddress.ip_network(network)
    for network in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)


class HostIpRecognizer(IpRecognizer):
    """Presidio's IP recognizer, leaving addresses that name no one's machine: loopback
    (127.0.0.1, ::1), unspecified (0.0.0.0, ::) and documentation ones. Private and
    link-local addresses are still masked: they locate a machine inside someone's network."""

    def invalidate_result(self, pattern_text: str) -> bool:
        if super().invalidate_result(pattern_text):
            return True
        ip = ipaddress.ip_interface(pattern_text).ip
        return ip.is_loopback or ip.is_unspecified or any(ip in net for net in _DOCUMENTATION)


def _scheme_url_recognizer() -> UrlRecognizer:
    """Build a URL recognizer that needs http(s)://, so file names like app.py stay."""
    patterns = [p for p in UrlRecognizer.PATTERNS if "https?://" in p.regex]
    return UrlRecognizer(patterns=patterns)


def _phone_recognizer(config: PrivacyConfig) -> DialablePhoneRecognizer:
    """Build a phone recognizer for the configured regions only.

    It runs one phonenumbers matcher per region over the text, so each region is one more
    pass over every string that may hold a phone: only the configured regions run, not
    Presidio's eight defaults (benchmarks/RESULTS.md, findings behind the design).
    """
    return DialablePhoneRecognizer(supported_regions=config.phone_regions)


def _ignoring_config(
    factory: Callable[[], EntityRecognizer],
) -> Callable[[PrivacyConfig], EntityRecognizer]:
    """Return the factory as one that takes (and needs not) the configuration."""
    return lambda _: factory()


_FACTORIES: dict[str, Callable[[PrivacyConfig], EntityRecognizer]] = {
    **{entity: _ignoring_config(factory) for entity, factory in PATTERN_FACTORIES.items()},
    **{entity: _ignoring_config(factory) for entity, factory in NATIONAL_ID_FACTORIES.items()},
    "PHONE_NUMBER": _phone_recognizer,
    "IP_ADDRESS": lambda _: HostIpRecognizer(),
    "US_SSN": lambda _: CuedSsnRecognizer(),
    "MAC_ADDRESS": lambda _: MacAddressRecognizer(),
    "DATE_OF_BIRTH": lambda _: date_of_birth(),
    "PASSPORT": lambda _: passport(),
    "STREET_ADDRESS": lambda _: StreetAddressRecognizer(),
    "USERNAME": lambda _: UsernameRecognizer(),
    "URL": lambda _: _scheme_url_recognizer(),
}


class NoContextEnhancer(ContextAwareEnhancer):
    """Keep scores as the recognizers gave them.

    Presidio's default enhancer raises a score when context words ("phone", "email") sit
    next to a match, reading them from the NLP engine's tokens; the engine here is a no-op
    with no tokens, so it never changes a score, yet running it costs time on every string
    (benchmarks/RESULTS.md, findings behind the design).
    """

    def __init__(self) -> None:
        super().__init__(0.0, 0.0, 0, 0)

    def enhance_using_context(
        self,
        text: str,
        raw_results: list[RecognizerResult],
        nlp_artifacts: NlpArtifacts,
        recognizers: list[EntityRecognizer],
        context: list[str] | None = None,
    ) -> list[RecognizerResult]:
        """Return the results unchanged."""
        return raw_results


def build_analyzer(config: PrivacyConfig) -> AnalyzerEngine:
    """Build an analyzer holding only the recognizers for the configured pattern entities."""
    recognizers = [_FACTORIES[e](config) for e in config.entities if e in _FACTORIES]
    registry = RecognizerRegistry(recognizers=recognizers, supported_languages=["en"])
    engine = NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "no_op"}])
    engine.load()
    return AnalyzerEngine(
        registry=registry,
        nlp_engine=engine,
        supported_languages=["en"],
        default_score_threshold=config.score_threshold,
        context_aware_enhancer=NoContextEnhancer(),
    )
