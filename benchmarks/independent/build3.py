"""Build the fresh recall corpus from packages no tuning read (run once), then freeze it.

Round 1's recall corpus filled presidio-evaluator's templates, every one of which tuning
read, so a new seed alone brings no held-out text. This corpus takes its sentences and
their placement from scrubadub's document generator and its values from scrubadub,
mimesis and python-stdnum (``fresh.py``). Install them beside the project, without their
dependencies (DIR on ``PYTHONPATH``)::

    pip install --no-deps --target DIR scrubadub==2.0.1 mimesis==22.2.0 python-stdnum==2.2 \\
        dateparser==1.5.0 tzlocal textblob nltk

    python -m benchmarks.independent.build3           # dev.jsonl, test.jsonl, unfrozen manifest
    python -m benchmarks.independent.build3 --freeze  # the hashes that freeze the test split
    python -m benchmarks.independent.build3 --round 4 [--freeze]  # recall4: another seed

Each round is a draw of its own seed, fixed in ``ROUNDS`` before its build: round 3 is
``recall3/``, round 4 (``recall4/``) a second draw made once round 3's test split was spent,
so that the rules tuned on round 3's dev split meet values and text they were not fitted to.

Documents are split once into dev and test by the first byte of SHA-256 of their text.
The first step refuses a folder that holds a manifest; ``--freeze`` refuses a frozen one.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from importlib.metadata import version
from pathlib import Path
from typing import Any

from benchmarks.independent.build import freeze_splits, write_json, write_jsonl
from benchmarks.independent.fresh import FAMILIES, documents
from benchmarks.independent.fresh_corpus import FRESH, FRESH4

__all__ = ["freeze", "main"]

#: Documents per family, and the seed they are drawn from (fixed before the build).
COUNTS = {"scrubadub en_US": 160, "scrubadub en_GB": 160, "python-stdnum": 140}
PER_FAMILY, SEED = 60, 20261201
#: Round -> its folder and seed, fixed before its build. A document's generator is seeded
#: with seed + 100,000 x family + n, so two rounds' seeds lie further apart than a round's
#: seeds reach (100,000 x the families): seeds one apart give the same documents.
ROUNDS: dict[int, tuple[Path, int]] = {3: (FRESH, SEED), 4: (FRESH4, 202612020000)}
_PACKAGES = ("scrubadub", "mimesis", "python-stdnum", "Faker")


def _documents(seed: int) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for n, family in enumerate(FAMILIES):
        for row in documents(family, COUNTS.get(family, PER_FAMILY), seed + 100_000 * n):
            doc = out.setdefault(row["text"], {"family": family, "text": row["text"], "values": []})
            doc["values"].append({"kind": row["kind"], "value": row["value"]})
    return list(out.values())


def _split(text: str) -> str:
    return "dev" if hashlib.sha256(f"split|{text}".encode()).digest()[0] % 2 == 0 else "test"


def _build(out: Path, round_: int) -> None:
    seed = ROUNDS[round_][1]
    recall = "fresh" if round_ == 3 else f"fresh{round_}"
    splits: dict[str, list[dict[str, Any]]] = {"dev": [], "test": []}
    for doc in _documents(seed):
        doc["id"] = hashlib.sha256(doc["text"].encode()).hexdigest()[:16]
        splits[_split(doc["text"])].append(doc)
    out.mkdir(parents=True, exist_ok=True)
    for name, docs in splits.items():
        write_jsonl(out / f"{name}.jsonl", docs)
    write_json(out / "MANIFEST.json", {
        "corpus": f"fresh recall corpus (round {round_}): scrubadub documents, values from "
        "scrubadub, mimesis and python-stdnum (issue 42)",
        "generated_by": f"python -m benchmarks.independent.build3 --round {round_}, then --freeze",
        "seed": seed,
        "documents_per_family": {f: COUNTS.get(f, PER_FAMILY) for f in FAMILIES},
        "packages": {p: version(p) for p in _PACKAGES},
        "split": "dev if the first byte of SHA-256('split|' + text) is even, else test",
        "scoring": f"tune on dev (--recall {recall}); the test split is scored once, after tuning "
        f"(--split test --final --recall {recall}), refused before it is frozen or if its hash "
        "differs",
        "values_by_kind": {n: dict(Counter(v["kind"] for d in ds for v in d["values"]))
                           for n, ds in splits.items()},
        "splits": {n: {"file": f"{n}.jsonl", "documents": len(ds), "frozen": False}
                   for n, ds in splits.items()},
    })  # fmt: skip
    print(f"wrote {', '.join(f'{n} {len(d)}' for n, d in splits.items())} documents to {out}")


def freeze(out: Path = FRESH) -> dict[str, Any]:
    """Write into the manifest the hashes of both splits, freezing the test split."""
    return freeze_splits(out)


def main(argv: list[str] | None = None) -> None:
    """Build the corpus into ``--out`` or, with ``--freeze``, freeze what was built there."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.independent.build3",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--freeze", action="store_true", help="freeze the built corpus by its hashes"
    )
    parser.add_argument(
        "--round", type=int, choices=tuple(ROUNDS), default=3, help="the draw (default 3)"
    )
    parser.add_argument("--out", type=Path, help="corpus folder (default the round's own)")
    args = parser.parse_args(argv)
    args.out = args.out or ROUNDS[args.round][0]
    if args.freeze:
        test = freeze(args.out)["splits"]["test"]
        print(f"froze {args.out / test['file']}: SHA-256 {test['sha256']}")
    elif (args.out / "MANIFEST.json").exists():
        sys.exit(f"{args.out} holds a corpus already; pass --out NEW_DIR for a fresh one")
    else:
        _build(args.out, args.round)


if __name__ == "__main__":
    main()
