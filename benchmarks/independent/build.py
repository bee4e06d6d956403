"""Regenerate the independent precision corpus from this machine's sources (run once).

Reads Debian's package lists and AppStream metadata (``apt-get update`` fetches them), a
PyPI project listing TSV (name, version, month, download rank, summary) and the docstrings
of libraries installed in this interpreter; keeps English technical sentences (select.py);
splits them once into dev and test by the hash of each sentence; marks the sentences the
personal-data pattern finds; and writes the split files, ``personal.json`` and a
``MANIFEST.json`` that freezes the test split by its SHA-256.

It refuses to write over a corpus that exists: the test split is frozen. Writing a fresh
one elsewhere (``--out DIR``) is how to see what today's sources give.

    python -m benchmarks.independent.build --pypi /work/.library/env/packages/pypi.tsv
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.independent import sources
from benchmarks.independent.corpus import DATA, marks_digest, read_manifest, sha256_file
from benchmarks.independent.docstrings import docstrings
from benchmarks.independent.marks import RULE, auto_mark
from benchmarks.independent.select import QUOTAS, SEED, choose, is_dev, row_id
from benchmarks.independent.sources import Candidate

__all__ = [
    "auto_marks",
    "freeze_round",
    "freeze_splits",
    "main",
    "split_rows",
    "write_json",
    "write_jsonl",
    "write_round",
]


def _rows(pypi: Path) -> dict[str, list[dict[str, str]]]:
    """Return the chosen sentences as rows, by split, each split sorted by id."""
    found = itertools.chain(
        sources.debian_packages(), sources.appstream(), sources.pypi(pypi), docstrings()
    )
    return split_rows(found, QUOTAS)


def split_rows(
    found: Iterable[Candidate], quotas: dict[str, int], taken_before: Iterable[str] = ()
) -> dict[str, list[dict[str, str]]]:
    """Return the sentences choose() keeps as rows, by split, each split sorted by id."""
    splits: dict[str, list[dict[str, str]]] = {"dev": [], "test": []}
    for candidate in choose(found, quotas, taken_before):
        row = {
            "id": row_id(candidate),
            "text": candidate.text,
            "source": candidate.source,
            "ref": candidate.ref,
        }
        splits["dev" if is_dev(candidate.text) else "test"].append(row)
    return {name: sorted(rows, key=lambda r: r["id"]) for name, rows in splits.items()}


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> None:
    lines = (json.dumps(r, ensure_ascii=False, sort_keys=True) for r in rows)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def write_json(path: Path, data: dict[str, Any], sort_keys: bool = False) -> None:
    """Write a corpus file as indented UTF-8 JSON, as the shipped ones are written."""
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=sort_keys)
    path.write_text(text + "\n", encoding="utf-8")


def freeze_splits(out: Path, test_extra: Callable[[], dict[str, Any]] = dict) -> dict[str, Any]:
    """Write into ``out``'s manifest the hash of each split and freeze its test split, with
    what ``test_extra`` returns (a built corpus is frozen once, before any tuning)."""
    manifest = read_manifest(out)
    if manifest["splits"]["test"].get("frozen"):
        raise SystemExit(f"{out}'s test split is frozen already: it is frozen once")
    extra = test_extra()
    for entry in manifest["splits"].values():
        entry["sha256"] = sha256_file(out / entry["file"])
    manifest["splits"]["test"] |= {"frozen": True, **extra}
    manifest["frozen_at"] = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    write_json(out / "MANIFEST.json", manifest)
    return manifest


def write_round(out: Path, splits: dict[str, list[dict[str, str]]], about: dict[str, Any]) -> None:
    """Write a later round's split files, the marks the pattern proposes and its unfrozen
    manifest into ``out``: ``about`` says what the corpus is and how it was built (corpus,
    generated_by, seed, quotas, selection, split, scoring, sources); the rows give the
    rest. ``freeze_round`` freezes it once its marks are read."""
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in splits.items():
        write_jsonl(out / f"{name}.jsonl", rows)
    marks = {name: auto_marks(rows) for name, rows in splits.items()}
    write_json(out / "personal.json", {"rule": RULE, **marks}, sort_keys=True)
    manifest = {
        **about,
        "rows_by_source": {n: dict(Counter(r["source"] for r in rs)) for n, rs in splits.items()},
        "personal_rule": RULE,
        "splits": {
            name: {"file": f"{name}.jsonl", "rows": len(rows), "frozen": False}
            for name, rows in splits.items()
        },
    }
    write_json(out / "MANIFEST.json", manifest)
    print(f"wrote {', '.join(f'{n} {len(r)}' for n, r in splits.items())} rows to {out}")


def freeze_round(out: Path) -> dict[str, Any]:
    """Write into the manifest of the round in ``out`` the hashes of both splits and the
    digest of the test split's marks (dev's may be refined while tuning; test's never
    change)."""

    def marks() -> dict[str, Any]:
        personal = json.loads((out / "personal.json").read_text(encoding="utf-8"))
        return {"personal_sha256": marks_digest(personal["test"])}

    return freeze_splits(out, marks)


def _releases() -> list[str]:
    """Return the suites and dates of the apt lists read (the registry's host left out)."""
    out = []
    for path in sorted(sources.APT_LISTS.glob("*_InRelease")):
        fields = dict(
            line.split(": ", 1) for line in path.read_text().splitlines()[:12] if ": " in line
        )
        out.append(f"{fields.get('Suite', '?')} ({fields.get('Date', '?')})")
    return out


def _manifest(out: Path, splits: dict[str, Any], marks: dict[str, Any], pypi: Path) -> dict:
    by_source = {n: dict(Counter(r["source"] for r in rows)) for n, rows in splits.items()}
    return {
        "corpus": "independent technical text: precision of PII masking (issue 42)",
        "generated_by": "python -m benchmarks.independent.build",
        "seed": SEED,
        "quotas": QUOTAS,
        "selection": "benchmarks/independent/select.py: English prose of 4-50 words, no "
        "links or host names, capped per item and per opening; order by SHA-256 of seed and "
        "sentence",
        "split": "dev if the first byte of SHA-256('split|' + text) is even, else test",
        "scoring": "tune on dev (python -m benchmarks.independent); the test split is scored "
        "once, after tuning (--split test --final), and refused if its hashes differ",
        "sources": {
            "debian-packages": "Description fields of *_Packages.lz4 in /var/lib/apt/lists "
            f"(technical sections): {'; '.join(_releases())}",
            "debian-appstream": "English Description of *_dep11_Components-amd64.yml.gz "
            "(technical categories), one sentence per row",
            "pypi-summaries": f"summary of ranked projects in {pypi.name} "
            f"(SHA-256 {sha256_file(pypi)})",
            "python-docstrings": "first sentence of docstrings, libraries as in each row's ref",
        },
        "rows_by_source": by_source,
        "personal_rule": RULE,
        "splits": {
            name: _split_entry(out, name, len(rows), marks[name]) for name, rows in splits.items()
        },
    }


def _split_entry(out: Path, name: str, rows: int, marks: dict[str, str]) -> dict[str, Any]:
    """Return a split's manifest entry; the test split's carries the hashes that freeze it."""
    entry = {"file": f"{name}.jsonl", "rows": rows, "frozen": name == "test"}
    if name == "test":  # dev's hand marks are refined while tuning; test's never change
        entry |= {
            "sha256": sha256_file(out / entry["file"]),
            "personal_sha256": marks_digest(marks),
        }
    return entry


def auto_marks(rows: list[dict[str, str]]) -> dict[str, str]:
    """Return, by id, why the personal-data pattern marks a row (dev is then read by hand)."""
    return {row["id"]: reason for row in rows if (reason := auto_mark(row["text"]))}


def main(argv: list[str] | None = None) -> None:
    """Build the corpus into ``--out`` (refusing to replace a frozen one)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.independent.build",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--pypi", type=Path, required=True, help="the PyPI listing TSV")
    parser.add_argument("--out", type=Path, default=DATA, help=f"output folder (default {DATA})")
    args = parser.parse_args(argv)
    if (args.out / "MANIFEST.json").exists():
        sys.exit(f"{args.out} holds a frozen corpus; pass --out NEW_DIR for a fresh one")
    splits = _rows(args.pypi)
    args.out.mkdir(parents=True, exist_ok=True)
    marks = {name: auto_marks(rows) for name, rows in splits.items()}
    for name, rows in splits.items():
        write_jsonl(args.out / f"{name}.jsonl", rows)
    write_json(args.out / "personal.json", {"rule": RULE, **marks}, sort_keys=True)
    write_json(args.out / "MANIFEST.json", _manifest(args.out, splits, marks, args.pypi))
    print(f"wrote {', '.join(f'{n} {len(r)}' for n, r in splits.items())} rows to {args.out}")


if __name__ == "__main__":
    main()
