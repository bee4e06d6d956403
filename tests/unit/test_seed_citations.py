"""Every seed document the repository cites is digested in it: docs/seeds.md.

Code, tests and docs cite the seeds as "seed 002 §4.3", "seeds 000/001 §4.1" or "Seed 002
§2, §4.2, §4.3". A user's clone has only the repository, so each cited section needs an entry
in docs/seeds.md (a bare "seed 003" needs its row in the table there), each entry a
citation, and no file may point at the documents' place beside CI's clone.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.tracked import tracked_texts

ROOT = Path(__file__).resolve().parents[2]
DIGEST = "docs/seeds.md"
#: Not scanned for citations: benchmark output, the official MPLP schemas, and the digest.
NOT_SCANNED = re.compile(
    r"benchmarks/results/[^/]*\.json|schemas/json/mplp/official/|docs/seeds\.md"
)
#: Only these describe CI's layout, where the originals sit beside the clone.
MAY_NAME_CI_LAYOUT = {".ci/run", "tests/integration/test_fresh_clone.py"}
CI_LAYOUT = re.compile(r"\.\./shared|shared[/]seeds")

SECTION = r"§\d+(?:\.\d+)*"
#: Between the words of a citation: spaces, or a line break and the next comment line's "#:".
GAP = r"\s*(?:\n\s*#:?)?\s*"
CITATION = re.compile(
    rf"\bseeds?{GAP}(?P<seeds>00[0-4](?:/00[0-4])*)"
    rf"(?P<sections>(?:{GAP}(?:,|and)?{GAP}{SECTION})*)",
    re.IGNORECASE,
)
HEADING = re.compile(r"^#{2,6}\s+(.*?)\s*$", re.MULTILINE)
TABLE_ROW = re.compile(r"^\|\s*seed\s+(00[0-4])\s*\|", re.MULTILINE | re.IGNORECASE)

Key = tuple[str, str | None]  # (seed, section): section None for the whole document


def keys(text: str) -> set[Key]:
    """Every (seed, section) a text cites; a citation without a section cites the document."""
    found: set[Key] = set()
    for match in CITATION.finditer(text):
        sections = re.findall(SECTION, match["sections"]) or [None]
        found |= {(seed, s) for seed in match["seeds"].split("/") for s in sections}
    return found


def digest() -> str:
    return (ROOT / DIGEST).read_text(encoding="utf-8")


def citations(files: dict[str, str]) -> dict[Key, list[str]]:
    """Each cited (seed, section) with the files citing it."""
    cited: dict[Key, list[str]] = {}
    for name, text in files.items():
        if NOT_SCANNED.match(name):
            continue
        for key in keys(text):
            cited.setdefault(key, []).append(name)
    return cited


def entries(digest: str) -> dict[Key, str]:
    """Each (seed, section) docs/seeds.md has an entry for, with the entry's heading or row."""
    found: dict[Key, str] = {}
    for heading in HEADING.findall(digest):
        for key in keys(heading):
            found[key] = heading
    for seed in TABLE_ROW.findall(digest):
        found.setdefault((seed, None), f"table row seed {seed}")
    return found


def test_the_citation_forms_are_parsed() -> None:
    assert keys("seed 002 §4.3's processDecision") == {("002", "§4.3")}
    assert keys("(Seed 002 §2, §4.2, §4.3; seeds 000/001 §4)") == {
        ("002", "§2"),
        ("002", "§4.2"),
        ("002", "§4.3"),
        ("000", "§4"),
        ("001", "§4"),
    }
    assert keys("seed 000/001 §4.1.") == {("000", "§4.1"), ("001", "§4.1")}
    assert keys("stored (seed\n#: 000 §6 and\n §7)") == {("000", "§6"), ("000", "§7")}
    assert keys("seed 003's plugin base") == {("003", None)}
    assert keys("seed 41, seed 29, seeds 0-39") == set()


def test_every_citation_has_an_entry() -> None:
    files = tracked_texts()
    have = entries(digest())
    missing = {
        f"seed {seed} {section or '(whole document)'}": where
        for (seed, section), where in citations(files).items()
        if (seed, section) not in have
    }
    assert not missing, f"cited, but no entry in {DIGEST}: {missing}"


def test_every_entry_is_cited() -> None:
    files = tracked_texts()
    cited = citations(files)
    seeds_cited = {seed for seed, _ in cited}
    uncited = [
        entry
        for (seed, section), entry in entries(digest()).items()
        if (seed, section) not in cited and not (section is None and seed in seeds_cited)
    ]
    assert not uncited, f"{DIGEST} has entries nothing cites: {uncited}"


def test_every_citing_file_points_at_the_digest() -> None:
    files = tracked_texts()
    citing = {name for names in citations(files).values() for name in names}
    silent = sorted(name for name in citing if "seeds.md" not in files[name])
    assert not silent, f"these cite a seed but never name {DIGEST}: {silent}"


def test_no_file_points_at_the_seeds_beside_the_clone() -> None:
    files = tracked_texts()
    outside = sorted(
        name
        for name, text in files.items()
        if name not in MAY_NAME_CI_LAYOUT and CI_LAYOUT.search(text)
    )
    assert not outside, f"a user's clone has no documents beside it: {outside}"
