"""A user's allow and deny lists: words or patterns never, or always, masked.

An item is a word (matched whole and in any case: ``Kafka``, ``C++``) or, written
``re:PATTERN``, a regular expression matched as given. A PII span that lies inside an allowed
match is left; a secret is never left, since an allow item written for a host or a commit
hash must not release the password or token beside it. Every denied match is masked as
``DENY_LIST``, even where an allow item matches too, since a denial is the safer of two
opposite wishes. A denied match inside a wider span found otherwise is masked with that
span, under its entity.
"""

from __future__ import annotations

import re

from presidio_anonymizer import RecognizerResult

from learnstream.streams.privacy.config import DENY_ENTITY
from learnstream.streams.privacy.results import tagged

__all__ = ["DENY_ENTITY", "REGEX_PREFIX", "UserLists", "compile_items"]

REGEX_PREFIX = "re:"


def compile_items(items: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Return one pattern for the words of items and one per ``re:`` item."""
    words = [re.escape(i) for i in items if not i.startswith(REGEX_PREFIX)]
    patterns = [re.compile(i[len(REGEX_PREFIX) :]) for i in items if i.startswith(REGEX_PREFIX)]
    if words:
        longest_first = sorted(words, key=len, reverse=True)
        patterns.append(re.compile(rf"(?i)(?<!\w)(?:{'|'.join(longest_first)})(?!\w)"))
    return tuple(patterns)


def _spans(patterns: tuple[re.Pattern[str], ...], text: str) -> list[tuple[int, int]]:
    """Return the non-empty spans every pattern matches in text."""
    return [m.span() for p in patterns for m in p.finditer(text) if m.end() > m.start()]


class UserLists:
    """Apply the allow and deny lists to the results found in one text."""

    def __init__(self, allow: tuple[str, ...], deny: tuple[str, ...]) -> None:
        self._allow = compile_items(allow)
        self._deny = compile_items(deny)

    def denies(self, text: str) -> bool:
        """Tell whether a denied word or pattern occurs in text."""
        return any(p.search(text) for p in self._deny)

    def allows_all(self, text: str) -> bool:
        """Tell whether an allowed match covers the whole text."""
        return any(s == 0 and e == len(text) for s, e in _spans(self._allow, text))

    def allowed(self, text: str, pii: list[RecognizerResult]) -> list[RecognizerResult]:
        """Return the PII results that no allowed match covers (secrets never come here)."""
        if not self._allow:
            return pii
        spans = _spans(self._allow, text)
        return [r for r in pii if not _inside(r, spans)]

    def apply(self, text: str, results: list[RecognizerResult]) -> list[RecognizerResult]:
        """Return results with every denied match added."""
        denied = [_denied(s, e) for s, e in _spans(self._deny, text)]
        for deny in _merged(denied):
            results = _with_denied(results, deny)
        return results


def _with_denied(results: list[RecognizerResult], deny: RecognizerResult) -> list[RecognizerResult]:
    """Add one denied match; a found span it overlaps joins it, so none is left half masked."""
    if any(_covers(r, deny) and (r.start, r.end) != (deny.start, deny.end) for r in results):
        return results  # masked whole inside a wider span
    touching = [r for r in results if _overlap(r, deny)]
    start = min([deny.start, *(r.start for r in touching)])
    end = max([deny.end, *(r.end for r in touching)])
    rest = [r for r in results if not _overlap(r, deny)]
    return [*rest, _denied(start, end)]


def _denied(start: int, end: int) -> RecognizerResult:
    """Return the result that masks [start, end) as a denied match."""
    return tagged(DENY_ENTITY, start, end, 1.0, "deny list")


def _inside(result: RecognizerResult, spans: list[tuple[int, int]]) -> bool:
    """Tell whether result lies within one of spans."""
    return any(s <= result.start and result.end <= e for s, e in spans)


def _covers(a: RecognizerResult, b: RecognizerResult) -> bool:
    """Tell whether a holds all of b."""
    return a.start <= b.start and b.end <= a.end


def _overlap(a: RecognizerResult, b: RecognizerResult) -> bool:
    """Tell whether two results share a character."""
    return a.start < b.end and b.start < a.end


def _merged(results: list[RecognizerResult]) -> list[RecognizerResult]:
    """Merge overlapping results into one each; the first of a run names it."""
    out: list[RecognizerResult] = []
    for r in sorted(results, key=lambda r: (r.start, -r.end)):
        if out and r.start < out[-1].end:
            out[-1].end = max(out[-1].end, r.end)
        else:
            out.append(r)
    return out
