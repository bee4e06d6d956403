"""Score a detector's outputs: precision on the independent corpus, recall per kind.

Precision leaves out the sentences marked as holding personal data. **Sentence level**:
the share of clean sentences that come out unchanged, character for character. **Token
level**: the share of clean tokens (runs between whitespace) that do not come out as they
went in, by the longest alignment of input and output tokens; every such token holds
nothing personal, so this is the false-mask rate. Recall uses the privacy recall
benchmark's rule (``benchmarks/recall/score.py``): a planted value is found when no
fragment of it survives.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from difflib import SequenceMatcher
from typing import Any

from benchmarks.independent.corpus import Split
from benchmarks.recall.corpus import Planted
from benchmarks.recall.score import redact, survivors

__all__ = ["SENTENCES", "STRUCTURAL", "TARGETS", "TOKENS", "masked_tokens", "precision", "recall"]

#: Issue 42's targets: clean sentences unchanged, clean tokens masked.
SENTENCES, TOKENS = 0.98, 0.005
STRUCTURAL = ("CREDIT_CARD", "IBAN_CODE", "PHONE_NUMBER", "EMAIL_ADDRESS", "US_SSN",
              "IP_ADDRESS", "@handle", "username", "ES_NIF", "IT_FISCAL_CODE", "IN_AADHAAR",
              "IN_PAN", "UK_NHS", "CA_SIN", "BR_CPF", "FR_NIR", "DE_TAX_ID")  # fmt: skip
#: Kind -> recall target: names (every form) and addresses 95 %, structural kinds 100 %;
#: the kinds not listed (places, organisations, dates, titles...) are reported only.
TARGETS: dict[str, float] = {"PERSON": 0.95, "STREET_ADDRESS": 0.95} | dict.fromkeys(
    STRUCTURAL, 1.0
)
_TAG = re.compile(r"<[A-Z][A-Z_]*>")


def masked_tokens(text: str, output: str) -> list[str]:
    """Return the tokens of ``text`` that ``output`` does not keep, in order."""
    before, after = text.split(), output.split()
    kept = SequenceMatcher(None, before, after, autojunk=False).get_matching_blocks()
    keep = {i for block in kept for i in range(block.a, block.a + block.size)}
    return [token for i, token in enumerate(before) if i not in keep]


def _change(row: Any, output: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "source": row.source,
        "ref": row.ref,
        "text": row.text,
        "output": output,
        "masked": masked_tokens(row.text, output),
    }


def precision(split: Split, outputs: list[str], examples: int) -> dict[str, Any]:
    """Return sentence- and token-level precision on a split's clean sentences."""
    pairs = [(r, o) for r, o in zip(split.rows, outputs, strict=True) if r.id not in split.personal]
    changes = [_change(r, o) for r, o in pairs if o != r.text]
    tokens = sum(len(r.text.split()) for r, _ in pairs)
    masked = sum(len(c["masked"]) for c in changes)
    by_source: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row, output in pairs:
        by_source[row.source][0] += output == row.text
        by_source[row.source][1] += 1
    share, rate = 1 - len(changes) / max(len(pairs), 1), masked / max(tokens, 1)
    return {
        "clean": len(pairs),
        "personal_left_out": len(split.rows) - len(pairs),
        "unchanged": len(pairs) - len(changes),
        "sentences": share,
        "sentences_met": share >= SENTENCES,
        "tokens": tokens,
        "tokens_masked": masked,
        "token_rate": rate,
        "tokens_met": rate <= TOKENS,
        "by_source": {s: {"unchanged": u, "total": t} for s, (u, t) in sorted(by_source.items())},
        "entities": dict(Counter(t for c in changes for t in _TAG.findall(c["output"]))),
        "changed": changes[:examples],
    }


def _target(kind: str) -> float | None:
    return TARGETS.get(kind.split(",")[0])


def recall(planted: list[Planted], outputs: list[str], examples: int) -> dict[str, Any]:
    """Return, per kind, the planted values found, by variant, and a few leaks (redacted)."""
    rows: dict[str, dict[str, Any]] = {}
    for value, output in zip(planted, outputs, strict=True):
        row = rows.setdefault(value.kind, {"total": 0, "found": 0, "variants": {}, "leaked": []})
        leaked = bool(survivors(value, output))
        variant = row["variants"].setdefault(value.value.variant, [0, 0])
        row["total"], variant[1] = row["total"] + 1, variant[1] + 1
        row["found"], variant[0] = row["found"] + (not leaked), variant[0] + (not leaked)
        if leaked and len(row["leaked"]) < examples:
            row["leaked"].append(redact(value, output))
    for kind, row in rows.items():
        row["recall"], row["target"] = row["found"] / row["total"], _target(kind)
        row["met"] = None if row["target"] is None else row["recall"] >= row["target"]
    return rows
