"""Load a fresh recall corpus (benchmarks/data/recall*/), refusing a test split not frozen.

Each line of ``dev.jsonl`` / ``test.jsonl`` is one document scrubadub's generator wrote,
the family its values came from, and the values planted in it (``fresh.py``). The test
split is scored once, after tuning, as the precision rounds' test splits are: it is
refused unless the manifest freezes it and its SHA-256 is the frozen one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.independent.corpus import FrozenSplitError, read_manifest, sha256_file
from benchmarks.independent.recall import FIELD, planted_value
from benchmarks.recall.corpus import Planted

__all__ = ["FRESH", "FRESH4", "RECALLS", "load_planted", "read_documents"]

FRESH = Path(__file__).resolve().parents[1] / "data" / "recall3"
#: A second draw from the same generators with another seed, frozen before the rules tuned
#: on recall3's dev split were changed again: its dev split is new material, its test split
#: held out.
FRESH4 = FRESH.parent / "recall4"
#: The runner's --recall name -> the corpus folder it reads.
RECALLS: dict[str, Path] = {"fresh": FRESH, "fresh4": FRESH4}


def read_documents(path: Path) -> list[dict[str, Any]]:
    """Return the documents of a JSON-lines split file."""
    with path.open(encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def _verify(split: str, data: Path) -> Path:
    entry = read_manifest(data)["splits"][split]
    path = data / entry["file"]
    if split != "test":
        return path
    if not entry.get("frozen"):
        raise FrozenSplitError(f"{path} is not frozen yet: it is scored only as frozen")
    if (actual := sha256_file(path)) != entry["sha256"]:
        raise FrozenSplitError(f"{path} has SHA-256 {actual}, the manifest froze {entry['sha256']}")
    return path


def load_planted(split: str, data: Path = FRESH) -> tuple[list[Planted], dict[str, Any]]:
    """Return a split's planted values, each in its document, and what the report says of it."""
    documents = read_documents(_verify(split, data))
    planted = [
        Planted(v["kind"], FIELD, doc["family"], doc["text"],
                planted_value(v["kind"], v["value"], doc["family"]))
        for doc in documents
        for v in doc["values"]
    ]  # fmt: skip
    manifest = read_manifest(data)
    meta = {
        "source": manifest["corpus"],
        "split": split,
        "documents": len(documents),
        "sha256": manifest["splits"][split].get("sha256"),
    }
    return planted, meta
