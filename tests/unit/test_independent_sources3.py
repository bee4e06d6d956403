"""Round 3's readers: only text rounds 1 and 2 did not read, the workplace's notes dropped."""

from __future__ import annotations

from pathlib import Path

from benchmarks.independent.docstrings import DISTRIBUTIONS
from benchmarks.independent.sources3 import DISTRIBUTIONS3, npm_summaries, pypi_unranked


def test_pypi_summaries_are_read_only_outside_the_ranked_projects(tmp_path: Path) -> None:
    listing = tmp_path / "pypi.tsv"
    listing.write_text(
        "name\tversion\tmonth\trank_among_15000_most_downloaded\tsummary\n"
        "ranked\t1.0\t2026-01\t12\tA ranked summary round 1 read.\n"
        "quiet\t0.1\t2025-03\t\tA  tool for\tparsing logs.\n"
        "empty\t0.1\t2025-03\t\t\n",
        encoding="utf-8",
    )
    found = list(pypi_unranked(listing))
    assert [(c.source, c.ref) for c in found] == [("pypi-unranked", "quiet")]
    assert found[0].text == "A tool for"  # a tab ends the summary column


def test_npm_summaries_lose_the_workplaces_tested_here_note(tmp_path: Path) -> None:
    listing = tmp_path / "npm.tsv"
    listing.write_text(
        "name\tversion\tdownloads_a_month\tsummary\n"
        "@scope/wizer\t1.0.0\t99\t[tested here: pin 10.0.0] The WebAssembly Pre-Initializer\n"
        "left-pad\t1.3.0\t5\tString left pad\n"
        "bare\t0.0.1\t1\t\n",
        encoding="utf-8",
    )
    found = [(c.ref, c.text) for c in npm_summaries(listing)]
    assert found == [
        ("@scope/wizer", "The WebAssembly Pre-Initializer"),
        ("left-pad", "String left pad"),
    ]


def test_round_3_reads_docstrings_of_libraries_round_1_did_not() -> None:
    assert not {d.casefold() for d in DISTRIBUTIONS} & {d.casefold() for d in DISTRIBUTIONS3}
    left_out = {"faker", "presidio_analyzer", "detect-secrets", "phonenumbers", "learnstream"}
    assert not left_out & {d.casefold() for d in DISTRIBUTIONS3}
