"""Load the shipped precision corpus, refusing a test split that is not the frozen one.

``benchmarks/data/independent/`` holds ``dev.jsonl`` and ``test.jsonl`` (one sentence a
line, with its source and the item it came from), ``personal.json`` (the ids of the
sentences that do hold personal data: hand-marked on dev, pattern-marked on test) and
``MANIFEST.json`` (sources, how they were generated, and the SHA-256 of the test split
and of its personal marks). The test split is scored once, after tuning: a test file or
marks whose hash is not the manifest's are refused, so tuning cannot creep into it.
Nothing here loads a model.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DATA",
    "ROUNDS",
    "SPLITS",
    "FrozenSplitError",
    "Row",
    "Split",
    "load",
    "marks_digest",
    "read_manifest",
    "read_rows",
    "sha256_file",
    "verify",
]

DATA = Path(__file__).resolve().parents[1] / "data" / "independent"
#: Round -> its corpus folder. Round 2 holds other sources (toolchains' API docs), built
#: after round 1's test split was spent, and round 3 others again (summaries of less
#: downloaded PyPI and npm packages, Debian's other sections, other libraries' docstrings),
#: built after round 2's; each round's test split is scored once.
ROUNDS: dict[int, Path] = {
    1: DATA,
    2: DATA.parent / "independent2",
    3: DATA.parent / "independent3",
}
SPLITS: tuple[str, ...] = ("dev", "test")


class FrozenSplitError(RuntimeError):
    """The test split (or its personal marks) differs from what the manifest froze."""


@dataclass(frozen=True)
class Row:
    """One sentence of the corpus and where it was written."""

    id: str
    text: str
    source: str
    ref: str


@dataclass(frozen=True)
class Split:
    """The rows of one split and, by id, why those that hold personal data were marked."""

    name: str
    rows: tuple[Row, ...]
    personal: dict[str, str]


def sha256_file(path: Path) -> str:
    """Return the hex SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def marks_digest(marks: dict[str, str]) -> str:
    """Return the hex SHA-256 of personal marks in a canonical JSON form."""
    text = json.dumps(marks, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def read_rows(path: Path) -> tuple[Row, ...]:
    """Return the rows of a JSON-lines split file."""
    with path.open(encoding="utf-8") as stream:
        return tuple(Row(**json.loads(line)) for line in stream if line.strip())


def read_manifest(data: Path = DATA) -> dict[str, Any]:
    """Return the corpus manifest."""
    return json.loads((data / "MANIFEST.json").read_text(encoding="utf-8"))


def _personal(data: Path, split: str) -> dict[str, str]:
    marks = json.loads((data / "personal.json").read_text(encoding="utf-8"))
    return dict(marks[split])


def verify(split: str, data: Path = DATA) -> None:
    """Raise FrozenSplitError unless ``split`` matches its manifest hashes (dev: unless frozen).

    A test split the manifest does not freeze yet is refused too: it is scored only as frozen.
    """
    frozen = read_manifest(data)["splits"][split]
    if not frozen.get("frozen"):
        if split == "test":
            raise FrozenSplitError(
                f"{frozen['file']} is not frozen yet: its hashes go in the manifest before any "
                "tuning, and only then may it be scored"
            )
        return
    actual = sha256_file(data / frozen["file"])
    if actual != frozen["sha256"]:
        raise FrozenSplitError(
            f"{frozen['file']} has SHA-256 {actual}, the manifest froze {frozen['sha256']}: "
            "the test split is scored only as it was frozen"
        )
    if marks_digest(_personal(data, split)) != frozen["personal_sha256"]:
        raise FrozenSplitError(f"the {split} split's personal marks differ from the frozen ones")


def load(split: str, data: Path = DATA) -> Split:
    """Return a split's rows and personal marks, verified first if it is frozen."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {SPLITS}")
    verify(split, data)
    file = read_manifest(data)["splits"][split]["file"]
    return Split(split, read_rows(data / file), _personal(data, split))
