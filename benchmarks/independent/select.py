"""Choose the corpus sentences: English technical prose, varied, the same on every run.

A candidate is kept when it is a sentence of 4 to 50 words of mostly ASCII letters holding
an English function word, and carries no link or host name (neither is prose, and the
shipped data names no package registry's host). The
order comes from a keyed hash of the seed and the sentence, not from the order the sources
are read in, so adding a source leaves the others' choices as they were. Caps per item and
per opening keep a thousand "Python 3 bindings for …" from standing in for variety.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

from benchmarks.independent.sources import Candidate

__all__ = [
    "QUOTAS",
    "ROUND2_QUOTAS",
    "ROUND3_QUOTAS",
    "SEED",
    "choose",
    "is_dev",
    "normal",
    "row_id",
    "usable",
]

SEED = 42
#: Sentences taken per source, at most: 4,500 in all, about half of them in each split.
QUOTAS: dict[str, int] = {
    "debian-packages": 1200,
    "debian-appstream": 900,
    "pypi-summaries": 1200,
    "python-docstrings": 1200,
}
#: Round 2's sources (toolchains.py), none of them read in round 1: 3,740 sentences at most.
ROUND2_QUOTAS: dict[str, int] = {
    "jdk-javadoc": 1000,
    "go-doc": 1000,
    "rust-doc": 1000,
    "npm-docs": 600,
    "maven-poms": 140,
}
#: Round 3's sources (sources3.py), text rounds 1 and 2 did not read: 4,000 sentences at most.
ROUND3_QUOTAS: dict[str, int] = {
    "pypi-unranked": 1000,
    "npm-summaries": 1000,
    "debian-other-sections": 900,
    "python-docstrings": 1100,
}
#: Sentences per item at most (a Debian package, a PyPI project, an installed library, a
#: source file, a rustdoc page, a page of npm's manual, a POM); 1 where not listed.
_PER_ITEM = {"debian-appstream": 3, "python-docstrings": 60, "jdk-javadoc": 6, "go-doc": 6,
             "rust-doc": 6, "npm-docs": 15, "maven-poms": 3}  # fmt: skip
_PER_OPENING = 4
_PREFIX = {"debian-packages": "deb", "debian-appstream": "app", "pypi-summaries": "pypi",
           "python-docstrings": "doc", "jdk-javadoc": "jdk", "go-doc": "go",
           "rust-doc": "rs", "npm-docs": "npm", "maven-poms": "mvn", "pypi-unranked": "pypu",
           "npm-summaries": "npms", "debian-other-sections": "debo"}  # fmt: skip
_FUNCTION_WORDS = frozenset(
    ("a", "an", "the", "of", "for", "and", "to", "in", "with", "on", "from", "is", "are", "by",
     "that", "this", "it", "as", "or", "be", "into", "your", "you", "can", "which", "using",
     "based", "not", "all", "its", "their", "when", "if")
)  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+")
_HOST = re.compile(r"://|\bwww\.|(?<![\w.])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev)\b")


def usable(text: str) -> bool:
    """Tell whether a sentence is English technical prose the corpus can hold."""
    words = text.split()
    if not 4 <= len(words) <= 50 or len(text) > 320 or _HOST.search(text):
        return False
    letters = [c for c in text if c.isalpha()]
    foreign = sum(not c.isascii() for c in letters)
    if len(letters) < 0.5 * len(text) or foreign > 0.02 * len(letters):
        return False
    return any(w.lower() in _FUNCTION_WORDS for w in _WORD.findall(text))


def _key(candidate: Candidate) -> str:
    raw = f"{SEED}|{candidate.source}|{candidate.ref}|{candidate.text}"
    return hashlib.sha256(raw.encode()).hexdigest()


def _opening(candidate: Candidate) -> str:
    """Return the first three words, digits dropped: "Python 3 bindings" is one opening."""
    words = [w.lower() for w in _WORD.findall(candidate.text)[:3]]
    return f"{candidate.source}|{' '.join(words)}"


def normal(text: str) -> str:
    """Return a sentence as choose() compares it: case folded, whitespace collapsed."""
    return " ".join(text.casefold().split())


def choose(
    candidates: Iterable[Candidate],
    quotas: dict[str, int] = QUOTAS,
    taken_before: Iterable[str] = (),
) -> list[Candidate]:
    """Return each source's quota of usable, distinct sentences in the seed's order.

    ``taken_before`` holds sentences (as ``normal`` gives them) an earlier round holds:
    none of them is chosen again.
    """
    chosen, seen = [], set(taken_before)
    taken, items, openings = Counter(), Counter(), Counter()
    for candidate in sorted((c for c in candidates if usable(c.text)), key=_key):
        norm = normal(candidate.text)
        item = f"{candidate.source}|{candidate.ref.partition(':')[0]}"
        if (
            norm in seen
            or taken[candidate.source] >= quotas[candidate.source]
            or items[item] >= _PER_ITEM.get(candidate.source, 1)
            or openings[_opening(candidate)] >= _PER_OPENING
        ):
            continue
        seen.add(norm)
        taken[candidate.source] += 1
        items[item] += 1
        openings[_opening(candidate)] += 1
        chosen.append(candidate)
    return chosen


def row_id(candidate: Candidate) -> str:
    """Return a sentence's id: its source's prefix and the start of its text's SHA-256."""
    digest = hashlib.sha256(candidate.text.encode()).hexdigest()
    return f"{_PREFIX[candidate.source]}-{digest[:12]}"


def is_dev(text: str) -> bool:
    """Tell whether a sentence is in the dev split (half of all, by the hash of its text)."""
    return hashlib.sha256(f"split|{text}".encode()).digest()[0] % 2 == 0
