"""English words that are never names: a title-cased run of them is a phrase, not a person.

Technical text title-cases features, products and headings ("Dark Mode", "Robot Framework",
"Finite State Machine"), and NER and the use rules take such runs for people. A person's
name holds a word that is a name somewhere: SCOWL, the spell-checker word list Debian ships
as ``wamerican``, lists proper names (given names and surnames: Mark, Grace, Baker, Young)
with a capital and ordinary words in lower case. ``data/common_words.txt.gz`` holds the
lower-case words whose capitalised form the list does not hold: about 63,000 words that
are never a name in it (mode, robot, snowflake; not mark, grace, baker). The list is
general English, written apart from this project and its benchmarks; its licence is in
``data/SCOWL-COPYRIGHT``. ``data/capitalised_words.txt.gz`` holds, in lower case, the words
the same list gives with a capital (about 9,900: Morrow, Bellamy, Mark, Linux), so the login
rules can tell a surname glued to an initial (``hmorrow``) from a word.

Rebuild both from the installed word list (``apt-get install wamerican``)::

    python -m learnstream.streams.privacy.dictionary /usr/share/dict/american-english
"""

from __future__ import annotations

import gzip
import sys
from functools import cache
from pathlib import Path

__all__ = [
    "CAPITALISED_FILE",
    "WORDS_FILE",
    "build",
    "build_capitalised",
    "is_capitalised_word",
    "is_common_word",
    "read_word_list",
    "write_word_list",
]

WORDS_FILE = Path(__file__).parent / "data" / "common_words.txt.gz"
CAPITALISED_FILE = Path(__file__).parent / "data" / "capitalised_words.txt.gz"


@cache
def read_word_list(path: Path) -> frozenset[str]:
    """Return the words of a shipped gzip word list (one read per process)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return frozenset(f.read().split())


def is_common_word(word: str) -> bool:
    """Tell whether ``word`` is an English word that the list never gives as a name."""
    return word.lower() in read_word_list(WORDS_FILE)


def is_capitalised_word(word: str) -> bool:
    """Tell whether the word list gives ``word`` with a capital: somewhere a name or a place."""
    return word.lower() in read_word_list(CAPITALISED_FILE)


def build(source: Path, out: Path = WORDS_FILE) -> int:
    """Write the never-a-name words of the word list ``source`` to ``out``; return how many."""
    listed = set(source.read_text(encoding="utf-8").split())
    common = sorted(
        w
        for w in listed
        if w.isalpha() and w.islower() and w.capitalize() not in listed and w.upper() not in listed
    )
    return write_word_list(common, out)


def build_capitalised(source: Path, out: Path = CAPITALISED_FILE) -> int:
    """Write, in lower case, the words of three letters or more that ``source`` gives
    capitalised (``Morrow``; not ``NASA`` or ``Morrow's``) to ``out``; return how many."""
    listed = source.read_text(encoding="utf-8").split()
    capitalised = sorted(
        {
            w.lower()
            for w in listed
            if len(w) >= 3 and w.isascii() and w.isalpha() and w[0].isupper() and w[1:].islower()
        }
    )
    return write_word_list(capitalised, out)


def write_word_list(words: list[str], out: Path) -> int:
    """Write ``words`` one per line, gzipped, to ``out``; return how many. The same words
    give the same bytes (no time stamp in the gzip header)."""
    with out.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(("\n".join(words) + "\n").encode("utf-8"))
    return len(words)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m learnstream.streams.privacy.dictionary WORD_LIST")
    print(f"{build(Path(sys.argv[1]))} words written to {WORDS_FILE}")
    print(f"{build_capitalised(Path(sys.argv[1]))} words written to {CAPITALISED_FILE}")
