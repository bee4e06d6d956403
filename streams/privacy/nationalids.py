"""Recognizers of IBANs and national ids, in any case, each match checked where it can be.

The ids with a check character (IBAN, Aadhaar, Steuer-ID, NIR, NHS, DNI/NIE, codice
fiscale, CPF, SIN) count only when it fits. A bare run of digits counts too: text written
apart from this project carries a SIN or a CPF with no word naming it ("... seem blue.
78517567749 Against ..."), and a bare SIN passed on is a leak, where a number that happens
to pass a check masked is a number lost. Only a ten-digit run that reads as a Unix time in
seconds (2001-2033, 1 followed by nine digits) needs the word "NHS" before it: one in eleven
such times passes the NHS check. A code of letters and digits must not mix cases.
"""

from __future__ import annotations

from collections.abc import Callable

import regex
from presidio_analyzer import PatternRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts
from presidio_analyzer.predefined_recognizers import IbanRecognizer

from learnstream.streams.privacy.checksums import aadhaar_ok, de_tax_id_ok, fr_nir_ok
from learnstream.streams.privacy.idchecks import (
    ca_sin_ok,
    cpf_ok,
    es_nif_ok,
    it_fiscal_code_ok,
    nhs_ok,
    pan_ok,
)
from learnstream.streams.privacy.patterns import CheckedRecognizer

__all__ = ["NATIONAL_ID_FACTORIES", "CaselessIbanRecognizer", "may_hold_national_id"]

#: Not inside a longer run of digits, letters or a dashed/dotted number.
_L, _R = r"(?<![\w.-])", r"(?![\w]|[.-]\w)"
_AN_L, _AN_R = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
_TO_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _cued(cue: str) -> str:
    """Return a lookbehind: the cue word, then up to 20 characters that are no digit."""
    return rf"(?<=(?i:(?<![a-z]){cue})(?![a-z])[^\d\n]{{0,20}})"


#: UK National Insurance number: two prefix letters (D, F, I, Q, U, V never; O not second;
#: BG, GB, KN, NK, NT, TN, ZZ never issued), three pairs of digits, a suffix A-D.
_NINO = (
    r"(?i)(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r"(?P<s> ?)\d{2}(?P=s)\d{2}(?P=s)\d{2}(?P=s)[A-D](?![A-Za-z0-9])"
)
_DE_TAX_ID = _L + r"[1-9]\d(?P<s> ?)\d{3}(?P=s)\d{3}(?P=s)\d{3}" + _R
_FR_NIR = (
    _L
    + r"[12](?P<s> ?)\d{2}(?P=s)\d{2}(?P=s)(?:\d{2}|2[ABab])(?P=s)\d{3}(?P=s)\d{3}(?P=s)\d{2}"
    + _R
)
_AADHAAR = _L + r"[2-9]\d{3}(?P<s>[ -]?)\d{4}(?P=s)\d{4}" + _R
#: Indian PAN: three letters, the holder type, the surname's initial, four digits, a letter.
_PAN = r"(?i)" + _AN_L + r"[A-Z]{3}[ABCFGHJLPT][A-Z]\d{4}[A-Z]" + _AN_R
_NHS = [
    _L + r"\d{3}(?P<s>[ -])\d{3}(?P=s)\d{4}" + _R,
    _L + r"[02-9]\d{9}" + _R,  # not 1...: a Unix time in seconds
    _cued("nhs") + _L + r"\d{10}" + _R,
]
_ES_NIF = [
    _AN_L + r"\d{8}[ -]?[A-Za-z]" + _AN_R,
    _AN_L + r"[XYZxyz][ -]?\d{7}[ -]?[A-Za-z]" + _AN_R,
]
#: Codice fiscale: surname and name letters, year, month letter, day, town, check letter;
#: digits may be swapped for L-V where two people would share a code (omocodia).
_CF_DIGIT = r"[\dLMNPQRSTUV]"
_IT_FISCAL_CODE = (
    rf"(?i){_AN_L}[A-Z]{{6}}{_CF_DIGIT}{{2}}[ABCDEHLMPRST]{_CF_DIGIT}{{2}}[A-Z]"
    rf"{_CF_DIGIT}{{3}}[A-Z]{_AN_R}"
)
_BR_CPF = [_L + r"\d{3}\.\d{3}\.\d{3}-\d{2}" + _R, _L + r"\d{11}" + _R]
_CA_SIN = [_L + r"\d{3}(?P<s>[ -])\d{3}(?P=s)\d{3}" + _R, _L + r"\d{9}" + _R]


#: A part every match of an id's patterns above holds as is (its digits as they group them,
#: or a code's run of letters and digits), without their lookarounds, cues and back
#: references; searched with the regex module the patterns run on. Most agent text with
#: digits (a version, a time, an address "10.0.0.12") holds none, and the id's patterns
#: need not run over it. A new pattern adds its part here (tests/unit/test_pii_gates.py
#: holds the gate to the recognizers).
_SHAPES = {
    entity: regex.compile(rx, flags=regex.DOTALL | regex.MULTILINE)
    for entity, rx in {
        "UK_NINO": r"\d\d ?\d\d ?\d\d",
        "UK_NHS": r"\d{3}[ -]\d{3}[ -]\d{4}|\d{10}",
        "DE_TAX_ID": r"\d\d ?\d{3} ?\d{3} ?\d{3}",
        "FR_NIR": r"\d{3} ?\d{3} ?\d{2}",
        "IN_AADHAAR": r"\d{4}[ -]?\d{4}[ -]?\d{4}",
        "IN_PAN": r"(?i)[A-Z]\d{4}[A-Z]",
        "ES_NIF": r"\d{7}",
        "IT_FISCAL_CODE": r"(?i)[A-Z\d]{16}",
        "BR_CPF": r"\d{3}\.\d{3}\.\d{3}-\d{2}|\d{11}",
        "CA_SIN": r"\d{3}[ -]\d{3}[ -]\d{3}|\d{9}",
    }.items()
}


def may_hold_national_id(entity: str, text: str) -> bool:
    """Tell cheaply whether the recognizer of ``entity``, a national id, could find one in
    text (true for an entity without a shape above)."""
    shape = _SHAPES.get(entity)
    return shape is None or shape.search(text) is not None


def _one_case(check: Callable[[str], bool]) -> Callable[[str], bool]:
    """Return check, refusing first a code that mixes upper and lower case."""
    return lambda text: (text.isupper() or text.islower()) and check(text)


#: An IBAN's beginning and the runs of letters and digits after it, one separator (space or
#: dash) between runs. Possessive, so a long run with no separator (a digest upper-cased) is
#: read once: split into groups of one to four as Presidio's pattern does, the run could be
#: cut in thousands of ways, each tried before the match failed (~17 ms a start).
_IBAN_CANDIDATE = regex.compile(r"(?<![A-Z0-9])[A-Z]{2}[0-9]{2}[A-Z0-9]*+(?:[ -][A-Z0-9]++)*+")
_GROUP_BREAK = regex.compile(r"[ -]")
#: An IBAN has at most 34 characters: nine groups of four, the last shorter.
_MOST_GROUPS = 9


class CaselessIbanRecognizer(IbanRecognizer):
    """Recognize IBANs in any case: Presidio's patterns and mod-97 check on the text as
    written, then on the text upper-cased for the IBANs written in lower case."""

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts | None = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Return the IBANs of text; only ASCII letters change case, so spans stay put.

        Upper-cased, the words after an IBAN read as more of its groups ("AT50 5955 5022
        1302 6794 break" becomes one candidate that fails mod 97), so the text as written
        is read first and the upper-cased reading adds only what it finds elsewhere.
        """
        found: list[RecognizerResult] = super().analyze(text, entities)
        raised = text.translate(_TO_UPPER)
        upper: list[RecognizerResult] = super().analyze(raised, entities)
        upper += self._trimmed(raised, found + upper)
        found += [u for u in upper if not any(u.start < f.end and f.start < u.end for f in found)]
        return found

    def _trimmed(self, raised: str, found: list[RecognizerResult]) -> list[RecognizerResult]:
        """Return the IBANs of the upper-cased text that end groups earlier than Presidio
        tries: upper-cased, two words after an IBAN ("... 5R9E FEEL OLD") read as two more
        groups, and Presidio drops at most the last two groups it read."""
        trimmed = []
        for match in _IBAN_CANDIDATE.finditer(raised):
            if any(match.start() < f.end and f.start < match.end() for f in found):
                continue
            groups = _GROUP_BREAK.split(match.group())
            longest = min(len(groups) - 1, _MOST_GROUPS)  # all of them: Presidio tried that
            for size in range(longest, 2, -1):  # at least the country's and 2 groups
                candidate = " ".join(groups[:size])  # the separators are one character each
                if self.validate_result(candidate):
                    end = match.start() + len(candidate)
                    trimmed.append(RecognizerResult("IBAN_CODE", match.start(), end, 1.0))
                    break
        return trimmed


NATIONAL_ID_FACTORIES: dict[str, Callable[[], PatternRecognizer]] = {
    "IBAN_CODE": CaselessIbanRecognizer,
    "UK_NINO": lambda: CheckedRecognizer("UK_NINO", [_NINO], _one_case(bool)),
    "UK_NHS": lambda: CheckedRecognizer("UK_NHS", _NHS, nhs_ok),
    "DE_TAX_ID": lambda: CheckedRecognizer("DE_TAX_ID", [_DE_TAX_ID], de_tax_id_ok),
    "FR_NIR": lambda: CheckedRecognizer("FR_NIR", [_FR_NIR], fr_nir_ok),
    "IN_AADHAAR": lambda: CheckedRecognizer("IN_AADHAAR", [_AADHAAR], aadhaar_ok),
    "IN_PAN": lambda: CheckedRecognizer("IN_PAN", [_PAN], pan_ok),
    "ES_NIF": lambda: CheckedRecognizer("ES_NIF", _ES_NIF, es_nif_ok),
    "IT_FISCAL_CODE": lambda: CheckedRecognizer(
        "IT_FISCAL_CODE", [_IT_FISCAL_CODE], _one_case(it_fiscal_code_ok)
    ),
    "BR_CPF": lambda: CheckedRecognizer("BR_CPF", _BR_CPF, cpf_ok),
    "CA_SIN": lambda: CheckedRecognizer("CA_SIN", _CA_SIN, ca_sin_ok),
}
