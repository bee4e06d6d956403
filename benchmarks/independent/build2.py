"""Build round 2 of the independent precision corpus from toolchains' API docs (run once).

Round 1's test split is spent (scored once, 30 Nov), so a second held-out corpus comes
from sources round 1 never read (toolchains.py): the JDK's javadoc, Go's and Rust's
standard library docs, npm's manual and Maven POM descriptions. Sentences are kept by
round 1's rules (select.py), none that round 1 holds; split once into dev and test by
the same hash rule. Two steps, each run once:

    python -m benchmarks.independent.build2           # rows, proposed marks, unfrozen manifest
    # read both splits; mark in personal.json the sentences holding personal data
    python -m benchmarks.independent.build2 --freeze  # the hashes that freeze the test split

The first step refuses a folder that holds a manifest; ``--freeze`` refuses one whose test
split is frozen already. The runner refuses the test split until it is frozen.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.independent import toolchains
from benchmarks.independent.build import freeze_round, split_rows, write_round
from benchmarks.independent.corpus import (
    ROUNDS,
    SPLITS,
    read_manifest,
    read_rows,
    sha256_file,
)
from benchmarks.independent.select import ROUND2_QUOTAS, SEED, normal

__all__ = ["freeze", "main"]

OUT = ROUNDS[2]
#: Where this machine keeps each source (override on the command line).
JDK_SRC = Path("/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip")
GOROOT = Path("/usr/local/go")
RUST_DOCS = Path.home() / ".rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html"
NPM = Path("/usr/lib/node_modules/npm")
MAVEN = Path.home() / ".m2/repository"


def _round1_sentences() -> set[str]:
    """Return round 1's sentences, both splits, as choose() compares them."""
    manifest = read_manifest(ROUNDS[1])
    files = (ROUNDS[1] / manifest["splits"][split]["file"] for split in SPLITS)
    return {normal(row.text) for file in files for row in read_rows(file)}


def _first_line(command: list[str]) -> str:
    """Return the first line a version command prints ('?' if it cannot run)."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return done.stdout.strip().splitlines()[0]


def _versions(args: argparse.Namespace) -> dict[str, str]:
    """Return, per source, what was read: the release, version or count of each."""
    release = dict(
        line.split("=", 1)
        for line in (args.jdk.resolve().parents[1] / "release").read_text().splitlines()
        if "=" in line
    )
    jdk = " ".join(release.get(k, "?").strip('"') for k in ("IMPLEMENTOR_VERSION", "JAVA_VERSION"))
    rustc = args.rust_docs.resolve().parents[3] / "bin" / "rustc"
    npm = json.loads((args.npm / "package.json").read_text())["version"]
    poms = sum(1 for _ in args.maven.rglob("*.pom"))
    go = (args.goroot / "VERSION").read_text().splitlines()[0]
    return {
        "jdk-javadoc": f"first sentence of each /** */ comment in the public java.* and javax.* "
        f"packages of the java.* modules, lib/src.zip of {jdk} (SHA-256 "
        f"{sha256_file(args.jdk)})",
        "go-doc": f"first sentence of each doc comment on an exported declaration of the {go} "
        "standard library (cmd, internal, vendor, testdata and generated files left out)",
        "rust-doc": "first sentence of each docblock and module summary of std in the "
        f"rust-docs component of {_first_line([str(rustc), '--version'])}",
        "npm-docs": f"sentences of the prose of npm {npm}'s docs/content/**/*.md",
        "maven-poms": f"sentences of the <description> of {poms} POMs in a local Maven "
        "repository (ref: group/artifact version)",
    }


def _build(args: argparse.Namespace) -> None:
    """Write the rows of both splits, the proposed marks and the unfrozen manifest."""
    found = itertools.chain(
        toolchains.javadoc(args.jdk),
        toolchains.go_doc(args.goroot),
        toolchains.rust_doc(args.rust_docs),
        toolchains.npm_docs(args.npm),
        toolchains.maven_poms(args.maven),
    )
    splits = split_rows(found, ROUND2_QUOTAS, _round1_sentences())
    write_round(
        args.out,
        splits,
        {
            "corpus": "independent technical text, round 2: precision of PII masking (issue 42)",
            "generated_by": "python -m benchmarks.independent.build2, then --freeze",
            "seed": SEED,
            "quotas": ROUND2_QUOTAS,
            "selection": "benchmarks/independent/select.py, as round 1: English prose of 4-50 "
            "words, no links or host names, capped per item and per opening; order by SHA-256 of "
            "seed and sentence; no sentence round 1 holds (case and spacing aside)",
            "split": "dev if the first byte of SHA-256('split|' + text) is even, else test",
            "scoring": "tune on dev (python -m benchmarks.independent --round 2); the test split "
            "is scored once, after tuning (--round 2 --split test --final), refused before it is "
            "frozen and if its hashes differ",
            "sources": _versions(args),
        },
    )


def freeze(out: Path = OUT) -> dict[str, Any]:
    """Write into the manifest the hashes of both splits and the test split's marks."""
    return freeze_round(out)


def main(argv: list[str] | None = None) -> None:
    """Build round 2 into ``--out`` or, with ``--freeze``, freeze what was built there."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.independent.build2",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--freeze", action="store_true", help="freeze the built corpus by its hashes")
    add("--out", type=Path, default=OUT, help=f"corpus folder (default {OUT})")
    add("--jdk", type=Path, default=JDK_SRC, help=f"the JDK's src.zip (default {JDK_SRC})")
    add("--goroot", type=Path, default=GOROOT, help=f"Go's root (default {GOROOT})")
    add("--rust-docs", type=Path, default=RUST_DOCS, help="rust-docs' html folder")
    add("--npm", type=Path, default=NPM, help=f"npm's package folder (default {NPM})")
    add("--maven", type=Path, default=MAVEN, help=f"a Maven repository (default {MAVEN})")
    args = parser.parse_args(argv)
    if args.freeze:
        test = freeze(args.out)["splits"]["test"]
        print(f"froze {args.out / test['file']}: SHA-256 {test['sha256']}")
    elif (args.out / "MANIFEST.json").exists():
        sys.exit(f"{args.out} holds a corpus already; pass --out NEW_DIR for a fresh one")
    else:
        _build(args)


if __name__ == "__main__":
    main()
