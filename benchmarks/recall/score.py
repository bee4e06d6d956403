"""Score an anonymizer's outputs: recall per kind, precision on the clean sentences.

A planted value **survives** when the output holds, more often than the sentence's own
words around the value do, any of:

- one of its secrets whole (the name, the number, the token, the password);
- a token of a secret (a run of letters and digits) of at least 4 characters holding a
  digit or a capital letter, except street-type words ("Street", "Rue", "Straße"): the
  last four digits of a card, a surname, a postcode, the random half of a token;
- an extra identifying part the generator names: an email's local part.

A value that does not survive is **found**; recall = found / planted. A clean sentence
counts for precision only if it comes out unchanged, character for character.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from difflib import SequenceMatcher
from typing import Any

from benchmarks.recall.corpus import Corpus, Planted
from benchmarks.recall.kinds import KINDS
from benchmarks.recall.source import Value

__all__ = ["PRECISION", "fragments", "redact", "score", "survivors"]

PRECISION = 0.98
_TOKEN = re.compile(r"[^\W_]+")
#: Words of an address that name no place: alone they say nothing about where anyone lives.
_GENERIC = frozenset(
    ("street", "road", "avenue", "lane", "drive", "court", "place", "suite", "apt", "flat",
     "studio", "rue", "allee", "allée", "strasse", "straße", "str", "platz", "weg", "gasse",
     "ring", "chemin", "boulevard", "impasse", "nagar", "marg", "cedex")
)  # fmt: skip


def _identifying(token: str) -> bool:
    return (
        len(token) >= 4
        and (any(c.isdigit() for c in token) or any(c.isupper() for c in token))
        and token.casefold() not in _GENERIC
    )


def fragments(value: Value) -> tuple[str, ...]:
    """Return what of ``value`` must not be in the output: secrets, their tokens, its parts."""
    tokens = [t for s in value.secrets for t in _TOKEN.findall(s) if _identifying(t)]
    return tuple(dict.fromkeys((*value.secrets, *value.parts, *tokens)))


def survivors(planted: Planted, output: str) -> list[str]:
    """Return the fragments of the planted value that survive in ``output``."""
    context = planted.text
    for secret in planted.value.secrets:
        context = context.replace(secret, " ")
    return [f for f in fragments(planted.value) if output.count(f) > context.count(f)]


def redact(planted: Planted, output: str) -> str:
    """Return ``output`` with every fragment of the planted value replaced by ``{kind}``."""
    for fragment in sorted(fragments(planted.value), key=len, reverse=True):
        output = output.replace(fragment, "{" + planted.kind + "}")
    return output


def _examples(leaked: list[tuple[Planted, str]], count: int) -> list[dict[str, str]]:
    """Return up to ``count`` leaks, one per template first, the values redacted."""
    by_template = {p.template: (p, o) for p, o in reversed(leaked)}
    chosen = list(by_template.values())[:count]
    chosen += [pair for pair in leaked if pair not in chosen][: count - len(chosen)]
    return [
        {"field": p.field, "variant": p.value.variant, "template": p.template,
         "output": redact(p, o)}
        for p, o in chosen
    ]  # fmt: skip


def _kind_row(kind: str, pairs: list[tuple[Planted, str]], examples: int) -> dict[str, Any]:
    """Return one kind's counts, by variant too, and a few of its leaks."""
    leaked, variants = [], defaultdict(lambda: [0, 0])
    for planted, output in pairs:
        survived = bool(survivors(planted, output))
        counts = variants[planted.value.variant]
        counts[0], counts[1] = counts[0] + (not survived), counts[1] + 1
        if survived:
            leaked.append((planted, output))
    found, target = len(pairs) - len(leaked), KINDS[kind].target
    return {
        "label": KINDS[kind].label,
        "total": len(pairs),
        "found": found,
        "recall": found / len(pairs),
        "target": target,
        "met": None if target is None else found / len(pairs) >= target,
        "variants": dict(sorted(variants.items())),
        "leaked": _examples(leaked, examples),
    }


def _kind_rows(corpus: Corpus, outputs: list[str], examples: int) -> dict[str, Any]:
    by_kind: dict[str, list[tuple[Planted, str]]] = defaultdict(list)
    for planted, output in zip(corpus.planted, outputs, strict=True):
        by_kind[planted.kind].append((planted, output))
    return {kind: _kind_row(kind, pairs, examples) for kind, pairs in by_kind.items()}


def _changed_chars(text: str, output: str) -> int:
    """Return how many characters of ``text`` are not kept in ``output``."""
    kept = sum(
        b.size for b in SequenceMatcher(None, text, output, autojunk=False).get_matching_blocks()
    )
    return len(text) - kept


def _precision(corpus: Corpus, outputs: list[str], examples: int) -> dict[str, Any]:
    changed = [(c, o) for c, o in zip(corpus.clean, outputs, strict=True) if o != c.text]
    total = len(corpus.clean)
    share = (total - len(changed)) / total if total else 1.0
    return {
        "total": total,
        "unchanged": total - len(changed),
        "precision": share,
        "target": PRECISION,
        "met": share >= PRECISION,
        "chars": sum(len(c.text) for c in corpus.clean),
        "chars_masked": sum(_changed_chars(c.text, o) for c, o in changed),
        "changed_shapes": dict(Counter(c.shape for c, _ in changed).most_common()),
        "changed": [{"shape": c.shape, "text": c.text, "output": o} for c, o in changed[:examples]],
    }


def score(
    corpus: Corpus, planted_out: list[str], clean_out: list[str], examples: int = 3
) -> dict[str, Any]:
    """Return recall per kind (with leaked examples, values redacted) and precision."""
    return {
        "kinds": _kind_rows(corpus, planted_out, examples),
        "precision": _precision(corpus, clean_out, examples),
    }
