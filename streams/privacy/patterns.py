"""Pattern recognizers for PII with a fixed shape, each match checked before it counts.

A shape alone flags too much in agent text (order numbers, epoch milliseconds, hashes), so
every recognizer here either validates what it matches (a card's network prefix and Luhn
digit) or needs a shape no clean text has (an email address). National ids and IBANs, checked
the same way, are in nationalids.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from presidio_analyzer import Pattern, PatternRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

from learnstream.streams.privacy.checksums import card_ok

__all__ = ["PATTERN_FACTORIES", "AnyDomainEmailRecognizer", "CheckedRecognizer"]

_FLAGS = re.DOTALL | re.MULTILINE
#: Not inside a longer run of digits, letters or a dashed/dotted number.
_L, _R = r"(?<![\w.-])", r"(?![\w]|[.-]\w)"


class CheckedRecognizer(PatternRecognizer):
    """Recognize one entity by regexes; a match counts only if ``check`` accepts its text."""

    def __init__(self, entity: str, regexes: list[str], check: Callable[[str], bool]) -> None:
        patterns = [Pattern(f"{entity} {i}", rx, 0.6) for i, rx in enumerate(regexes)]
        super().__init__(entity, patterns=patterns, global_regex_flags=_FLAGS)
        self._check = check

    def validate_result(self, pattern_text: str) -> bool:
        """Keep the match only if its check accepts it."""
        return self._check(pattern_text)


#: An address on any domain: a public-suffix list must not decide what is private, and the
#: domains of the companies that run agents (``ops.acme.local``, ``corp.internal``) are in
#: none. The last label is letters, so ``pkg@1.2.3`` and ``image@sha256:…`` are not addresses.
_EMAIL = (
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![\w-])"
)
#: An address cut short at the end of a text, as when a runtime truncates a title mid-address
#: ("dana.whitfield@example.o", "dana.whitfield@"): its local part alone names a person.
#: A version after "@" (``pkg@1.2.3``) is a package pin, not a cut address.
_CUT_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]*[A-Za-z0-9]@(?!v?\d+(?:\.\d+)*\Z)[A-Za-z0-9.-]*\Z"
)


class AnyDomainEmailRecognizer(PatternRecognizer):
    """Recognize email addresses on any domain, and one cut short at the end of the text."""

    def __init__(self) -> None:
        pattern = Pattern("email", _EMAIL, 1.0)
        super().__init__("EMAIL_ADDRESS", patterns=[pattern], global_regex_flags=_FLAGS)

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts | None = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Return the whole addresses, and one cut short at the end of ``text``."""
        found = super().analyze(text, entities, nlp_artifacts, regex_flags)
        cut = _CUT_EMAIL.search(text)
        if cut and not any(r.end > cut.start() for r in found):
            found.append(RecognizerResult("EMAIL_ADDRESS", *cut.span(), 0.5))
        return found


_SEP = r"(?P<s>[ -]?)"
#: Cards as people write them: 4-4-4-4 (and 12 to 19 digits in groups of four), Amex 4-6-5,
#: Diners 4-6-4, or one run of 12 to 19 digits.
_CARD = [
    _L + rf"\d{{4}}{_SEP}\d{{4}}(?P=s)\d{{4}}(?:(?P=s)\d{{1,4}}(?:(?P=s)\d{{1,3}})?)?" + _R,
    _L + rf"\d{{4}}{_SEP}\d{{6}}(?P=s)\d{{4,5}}" + _R,
    _L + r"\d{12,19}" + _R,
]
PATTERN_FACTORIES: dict[str, Callable[[], PatternRecognizer]] = {
    "EMAIL_ADDRESS": AnyDomainEmailRecognizer,
    "CREDIT_CARD": lambda: CheckedRecognizer("CREDIT_CARD", _CARD, card_ok),
}
