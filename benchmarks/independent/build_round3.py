"""Build round 3 of the independent precision corpus from text rounds 1 and 2 never read.

Round 2's test split is spent (scored once), so a third held-out corpus comes from
sources3.py: PyPI summaries of the projects outside the 15,000 most downloaded, npm
package summaries, Debian descriptions of the sections round 1 left out, and docstrings of
installed libraries round 1 did not read. Sentences are kept by round 1's rules
(select.py), none that round 1 or 2 holds; split once into dev and test by the same hash
rule. Three steps, each run once, before any rule is tuned on it:

    python -m benchmarks.independent.build_round3 --pypi PYPI_TSV --npm NPM_TSV
    # read both splits; mark in personal.json the sentences holding personal data
    python -m benchmarks.independent.build_round3 --freeze

The first step refuses a folder that holds a manifest; ``--freeze`` refuses one whose test
split is frozen already. The runner refuses the test split until it is frozen.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

from benchmarks.independent import sources3
from benchmarks.independent.build import freeze_round, split_rows, write_round
from benchmarks.independent.corpus import (
    ROUNDS,
    SPLITS,
    read_manifest,
    read_rows,
    sha256_file,
)
from benchmarks.independent.docstrings import docstrings
from benchmarks.independent.select import ROUND3_QUOTAS, SEED, normal
from benchmarks.independent.sources import APT_LISTS

__all__ = ["freeze", "main"]

OUT = ROUNDS[3]


def _earlier_sentences() -> set[str]:
    """Return rounds 1 and 2's sentences, both splits, as choose() compares them."""
    out = set()
    for round_ in (1, 2):
        manifest = read_manifest(ROUNDS[round_])
        for split in SPLITS:
            file = ROUNDS[round_] / manifest["splits"][split]["file"]
            out |= {normal(row.text) for row in read_rows(file)}
    return out


def _releases() -> str:
    """Return the suites of the apt lists read (the registry's host left out)."""
    suites = []
    for path in sorted(APT_LISTS.glob("*_InRelease")):
        head = path.read_text().splitlines()[:12]
        suites += [line.split(": ", 1)[1] for line in head if line.startswith("Suite: ")]
    return ", ".join(suites)


def _sources(args: argparse.Namespace) -> dict[str, str]:
    return {
        "pypi-unranked": f"summary of the projects with no download rank in {args.pypi.name} "
        f"(SHA-256 {sha256_file(args.pypi)}); round 1 read only the ranked ones",
        "npm-summaries": f"summary column of {args.npm.name} (SHA-256 {sha256_file(args.npm)}), "
        "a leading '[tested here: ...]' note of this workplace dropped",
        "debian-other-sections": "Description fields of *_Packages.lz4 in /var/lib/apt/lists, "
        f"sections round 1 did not read ({_releases()})",
        "python-docstrings": "first sentence of docstrings of installed libraries round 1 did "
        f"not read ({', '.join(sources3.DISTRIBUTIONS3)}; version in each row's ref)",
    }


def _build(args: argparse.Namespace) -> None:
    """Write the rows of both splits, the proposed marks and the unfrozen manifest."""
    found = itertools.chain(
        sources3.pypi_unranked(args.pypi),
        sources3.npm_summaries(args.npm),
        sources3.debian_other_sections(),
        docstrings(sources3.DISTRIBUTIONS3),
    )
    splits = split_rows(found, ROUND3_QUOTAS, _earlier_sentences())
    write_round(
        args.out,
        splits,
        {
            "corpus": "independent technical text, round 3: precision of PII masking (issue 42)",
            "generated_by": "python -m benchmarks.independent.build_round3, then --freeze",
            "seed": SEED,
            "quotas": ROUND3_QUOTAS,
            "selection": "benchmarks/independent/select.py, as rounds 1 and 2: English prose of "
            "4-50 words, no links or host names, capped per item and per opening; order by "
            "SHA-256 of seed and sentence; no sentence round 1 or 2 holds (case and spacing aside)",
            "split": "dev if the first byte of SHA-256('split|' + text) is even, else test",
            "scoring": "tune on dev (python -m benchmarks.independent --round 3); the test split "
            "is scored once, after tuning (--round 3 --split test --final), refused before it is "
            "frozen and if its hashes differ",
            "sources": _sources(args),
        },
    )


def freeze(out: Path = OUT) -> dict[str, Any]:
    """Write into the manifest the hashes of both splits and the test split's marks."""
    return freeze_round(out)


def main(argv: list[str] | None = None) -> None:
    """Build round 3 into ``--out`` or, with ``--freeze``, freeze what was built there."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.independent.build_round3",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--freeze", action="store_true", help="freeze the built corpus by its hashes")
    add("--out", type=Path, default=OUT, help=f"corpus folder (default {OUT})")
    add("--pypi", type=Path, help="the PyPI listing TSV (name, version, month, rank, summary)")
    add("--npm", type=Path, help="the npm listing TSV (name, version, downloads, summary)")
    args = parser.parse_args(argv)
    if args.freeze:
        test = freeze(args.out)["splits"]["test"]
        print(f"froze {args.out / test['file']}: SHA-256 {test['sha256']}")
    elif (args.out / "MANIFEST.json").exists():
        sys.exit(f"{args.out} holds a corpus already; pass --out NEW_DIR for a fresh one")
    elif not (args.pypi and args.npm):
        sys.exit("the build reads --pypi and --npm")
    else:
        _build(args)


if __name__ == "__main__":
    main()
