"""Run each detector over the precision split and the recall corpus, with progress on stderr."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track

from benchmarks.independent import detectors
from benchmarks.independent.corpus import DATA, ROUNDS, Split, read_manifest
from benchmarks.independent.recall import FIELD as RECALL_FIELD
from benchmarks.independent.score import precision, recall
from benchmarks.machine import commit
from benchmarks.recall.corpus import Planted

__all__ = ["PRECISION_FIELD", "run"]

#: Where the corpus sentences go in a sample: a plan step, as an agent writes one.
PRECISION_FIELD = "step"
_ERRORS = (ImportError, OSError, RuntimeError, ValueError)


def _apply(anonymize: detectors.Anonymize, field: str, texts: Sequence[str], what: str) -> tuple:
    """Return the outputs of distinct texts and the CPU microseconds per text."""
    console = Console(stderr=True)
    distinct = list(dict.fromkeys(texts))
    start = time.process_time()
    done = {t: anonymize(field, t) for t in track(distinct, what, console=console)}
    cpu_us = 1e6 * (time.process_time() - start) / max(len(distinct), 1)
    return [done[t] for t in texts], cpu_us


def _measure(name: str, split: Split, planted: list[Planted], examples: int) -> dict[str, Any]:
    """Return one detector's precision and recall (or why it could not be built)."""
    try:
        anonymize, settings = detectors.build(name)
    except _ERRORS as exc:
        return {"name": name, "error": f"{type(exc).__name__}: {exc}"}
    texts = [row.text for row in split.rows]
    outputs, cpu_clean = _apply(anonymize, PRECISION_FIELD, texts, f"{name}: {split.name}")
    result = {
        "name": name,
        "settings": settings,
        "cpu_us": {"precision": cpu_clean},
        "precision": precision(split, outputs, examples),
    }
    if planted:
        texts = [p.text for p in planted]
        outputs, cpu_recall = _apply(anonymize, RECALL_FIELD, texts, f"{name}: recall")
        result["cpu_us"]["recall"] = cpu_recall
        result["recall"] = recall(planted, outputs, min(examples, 5))
    return result


def run(
    split: Split,
    names: Sequence[str],
    planted: list[Planted],
    meta: dict[str, Any],
    examples: int = 20,
    data: Path = DATA,
) -> dict[str, Any]:
    """Measure every named detector on a split of the corpus in ``data`` and on recall."""
    manifest = read_manifest(data)
    return {
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "commit": commit(),
        "round": next((n for n, path in ROUNDS.items() if path == data), str(data)),
        "split": split.name,
        "rows": len(split.rows),
        "frozen_sha256": manifest["splits"][split.name].get("sha256"),
        "recall_corpus": {
            **meta,
            "values": len(planted),
            "sentences": len({p.text for p in planted}),
        },
        "detectors": [_measure(name, split, planted, examples) for name in names],
    }
