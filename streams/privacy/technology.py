"""Words that name software: the parts of package names many packages share.

Technical text names tools, libraries and services in title case ("Deploy with Pulumi",
"a plugin for Pylint", "Connect with Ollama"), where a lone capitalised word is as often a
person's name, and neither the model nor the grammar tells them apart. Package registries
list what software is called: a word that is a part of the names of ten packages or more
("pulumi-aws", "pulumi_random", "pylint-django") names a tool or the ecosystem around one.

``data/tech_words.txt.gz`` holds those words, built from the lists of package names of the
Python Package Index and of npm as listed on 2026-11-25 (package names only, no summaries):
each name is split at ``-``, ``_``, ``.`` and ``/`` (npm's ``@scope/`` dropped), the parts
of three ASCII letters or more are counted once per distinct package name, and the parts in
ten names or more are kept, less every word the SCOWL word list holds in any case: a
capitalised one may be a person's given name or surname there, and a lower-case one is an
English word (``dictionary.py`` reads those). The Python list's 15,000 most-downloaded
packages are left out: the summaries ``benchmarks/independent`` measures precision on are
theirs, and a sentence's own package name must not make the list. Some given names of
other languages are such a word too ("Aditya", "Marko", "Kai"): only a lone word, or a span
of such words only, is read against the list (``names.py``), never a full name with a
surname outside it. ``data/TECH-WORDS-SOURCE`` gives the provenance and the licence note.

Rebuild it (the package lists are the registries' own name lists, one package a row)::

    python -m learnstream.streams.privacy.technology PYTHON_TSV NPM_TSV \\
        /usr/share/dict/american-english
"""

from __future__ import annotations

import csv
import errno
import re
import signal
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from learnstream.streams.privacy.dictionary import read_word_list, write_word_list

__all__ = ["MIN_PACKAGES", "TECH_FILE", "build", "is_tech_word", "system_names"]

TECH_FILE = Path(__file__).parent / "data" / "tech_words.txt.gz"
#: How many distinct package names a word must be a part of.
MIN_PACKAGES = 10
_PART = re.compile(r"[a-z]{3,}")
_SPLIT = re.compile(r"[-_./]")


def is_tech_word(word: str) -> bool:
    """Tell whether ``word`` is a part of the names of many software packages, or the
    operating system's name for a signal or an error number (``system_names``)."""
    low = word.lower()
    return low in read_word_list(TECH_FILE) or low in system_names()


@cache
def system_names() -> frozenset[str]:
    """Return the operating system's names of its signals and error numbers (SIGTERM,
    SIGKILL, ENOENT, ECONNREFUSED), lower-cased, as Python's ``signal`` and ``errno`` read
    them from the C library: logs and agents write them in capitals, where a long one reads
    as a name shouted ("the worker got SIGTERM" masked a person)."""
    names = {name.lower() for name in errno.errorcode.values()}
    names |= {sig.name.lower() for sig in signal.Signals}
    return frozenset(names)


def _names(path: Path, skip_ranked: bool) -> Iterator[str]:
    """Yield the package names of a registry's list (a header row, the name first)."""
    csv.field_size_limit(1 << 24)
    with path.open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(rows)
        ranked = header.index("rank_among_15000_most_downloaded") if skip_ranked else -1
        for row in rows:
            if row and not (ranked >= 0 and len(row) > ranked and row[ranked]):
                yield row[0]


def parts(names: Iterable[str]) -> Counter[str]:
    """Count, per word, the distinct package names it is a part of."""
    counts: Counter[str] = Counter()
    for name in {n.lower().split("/", 1)[-1] if n.startswith("@") else n.lower() for n in names}:
        counts.update({p for p in _SPLIT.split(name) if _PART.fullmatch(p)})
    return counts


def build(python: Path, npm: Path, word_list: Path, out: Path = TECH_FILE) -> int:
    """Write the words of many package names that the word list does not hold; return how
    many."""
    listed = {w.lower() for w in word_list.read_text(encoding="utf-8").split()}
    counts = parts([*_names(python, skip_ranked=True), *_names(npm, skip_ranked=False)])
    words = sorted(w for w, n in counts.items() if n >= MIN_PACKAGES and w not in listed)
    return write_word_list(words, out)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python -m learnstream.streams.privacy.technology PYTHON NPM WORD_LIST")
    args = [Path(a) for a in sys.argv[1:]]
    print(f"{build(*args)} words written to {TECH_FILE}")
