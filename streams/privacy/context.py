"""Recognizers for values whose shape is common but whose keyword makes them personal.

A date is a timestamp until "born" or "DOB" stands before it; six to nine letters and digits
are a build id until "passport" does. Each recognizer finds the keyword, then the value
within a few words after it, and flags the value only.
"""

from __future__ import annotations

import re

from presidio_analyzer import EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

__all__ = ["BIRTH_WORDS", "PASSPORT_WORDS", "KeywordValueRecognizer", "date_of_birth", "passport"]

#: Month names and abbreviations in the default regions' languages (en, de, fr).
_MONTHS = (
    r"(?:jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|f[ée]v(?:rier)?|mar(?:ch|s)?|m[äa]rz|"
    r"apr(?:il)?|avr(?:il)?|may|mai|june?|juni?|juin|july?|juli?|juil(?:let)?|aug(?:ust)?|"
    r"ao[ûu]t|sep(?:t(?:ember|embre)?)?|oct(?:ober|obre)?|okt(?:ober)?|nov(?:ember|embre)?|"
    r"de[cz](?:ember)?|d[ée]c(?:embre)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th|er|\.)?"
_DATE = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"
    r"|\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2})"
    rf"|{_DAY}[ -](?:of )?{_MONTHS}[ -],? ?\d{{2,4}}"
    rf"|{_MONTHS} {_DAY},? \d{{2,4}}"
    r"|\d{8})(?![\w])"
)
BIRTH_WORDS = (
    r"born|birth|birthday|birthdate|dob|d\.o\.b\.?|geb\.|geboren|geburtsdatum|"
    r"née|né|naissance"
)
PASSPORT_WORDS = r"passport|passports|reisepass|passnummer|passeport"
#: At most this many characters between the keyword's end and the value.
_GAP = r"[^\n\d]{0,30}?"


class KeywordValueRecognizer(EntityRecognizer):
    """Recognize a value that follows one of its keywords within a few words."""

    def __init__(self, entity: str, keywords: str, value: str) -> None:
        super().__init__(supported_entities=[entity], supported_language="en")
        self._regex = re.compile(
            rf"(?<![\w])(?:{keywords})(?![\w]){_GAP}(?<![\w])(?P<value>{value})", re.IGNORECASE
        )

    def load(self) -> None:
        """Compile nothing more: the regex is built in ``__init__``."""

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        """Return the values that follow a keyword."""
        entity = self.supported_entities[0]
        return [RecognizerResult(entity, *m.span("value"), 0.8) for m in self._regex.finditer(text)]


def date_of_birth() -> KeywordValueRecognizer:
    """Build the DATE_OF_BIRTH recognizer: a date after born, birth, DOB, geboren, née."""
    return KeywordValueRecognizer("DATE_OF_BIRTH", BIRTH_WORDS, _DATE)


#: A German passport's serial: nine characters, the first one of C F G H J K, the others
#: from the alphabet the German serials use (digits and the consonants C F G H J K L M N P R
#: T V W X Y Z: no vowel, nor B, D, Q, S), so it may hold no digit at all ("passport no.
#: HZXTKWNPC", made up). No English word has that shape: nine consonants of that set.
_DE_PASSPORT = r"[CFGHJK][CFGHJKLMNPRTVWXYZ0-9]{8}(?![\w])"


def passport() -> KeywordValueRecognizer:
    """Build the PASSPORT recognizer: 6 to 9 capitals and digits, a digit among them, or a
    German serial, which may be letters only."""
    value = rf"(?=[A-Z]{{0,8}}\d)[A-Z0-9]{{1,2}} ?[A-Z0-9]{{4,8}}(?![\w])|{_DE_PASSPORT}"
    return KeywordValueRecognizer("PASSPORT", PASSPORT_WORDS, value)
