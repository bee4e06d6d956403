"""Find a person's name written all in capitals inside text written in lower case.

A form, a signature or a shouted line writes a name in capitals ("approved by DANA
WHITFIELD yesterday"); the rules that read a capital's use never see it, since every
letter is one. In technical text a run of capitals is an acronym as often ("the AWS IAM
role", "MIT LICENSE", "MEGAN CE"), so a run is a name only when it is two to four words
of three letters or more (CE, UI, OS: two capitals are an acronym far more often), each
with a vowel (HTTP, SQL, GPL have none), none an English word, a product's, a package's
word or a title, standing in text most of whose words are in lower case.
"""

from __future__ import annotations

import re

from learnstream.streams.privacy.dictionary import is_common_word
from learnstream.streams.privacy.technology import is_tech_word
from learnstream.streams.privacy.words import (
    FUNCTION_WORDS,
    HONORIFICS,
    POSTNOMINALS,
    Token,
    is_product,
)

__all__ = ["capitals_runs"]

_LETTERS = re.compile(r"[^\W\d_]{3,}(?:['’-][^\W\d_]+)*")
_VOWEL = re.compile(r"[AEIOUYÀ-ÖØ-Ý]")
#: A name has two to four words here: one word in capitals is an acronym as often.
_MIN_WORDS, _MAX_WORDS = 2, 4


def _name_word(word: str) -> bool:
    """Tell whether a word in capitals may be a part of a name."""
    if not word.isupper() or not _LETTERS.fullmatch(word) or not _VOWEL.search(word):
        return False
    low = word.lower()
    if low in FUNCTION_WORDS or low in HONORIFICS or low in POSTNOMINALS:
        return False
    return not (is_common_word(word) or is_product(word) or is_tech_word(word))


def _lower_case_text(words: list[Token]) -> bool:
    """Tell whether most of the text's words are written in lower case."""
    lower = sum(1 for t in words if t.core.islower())
    return lower >= 3 and 2 * lower > len(words)


def capitals_runs(words: list[Token]) -> list[tuple[int, int]]:
    """Return the (start, end) of each run of two to four name words in capitals."""
    if not _lower_case_text(words):
        return []
    found: list[tuple[int, int]] = []
    run: list[Token] = []
    for t in [*words, None]:
        if t is not None and _name_word(t.core):
            run.append(t)
            if not t.closes:
                continue
        if _MIN_WORDS <= len(run) <= _MAX_WORDS:
            found.append((run[0].start, run[-1].end))
        run = []
    return found
