"""docs/architecture.md is what code and documents cite, so every citation must land in it.

Three checks over the tracked text files (``git ls-files``; the benchmark result dumps and
the official MPLP schema copies are not ours to edit and are left out):

- no file cites the design brief that is not in the repository (the word DESIGN followed by
  a section sign or "section");
- every "architecture §n" (or "architecture.md §n") names a heading ``## §n`` of
  docs/architecture.md;
- every repository path docs/architecture.md names in backticks exists.

Each check is a pure function, and the tests at the bottom feed it a bad case, so a check
that could never fail would fail here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatch
from pathlib import Path

from tests.support.tracked import tracked_texts

ROOT = Path(__file__).resolve().parents[2]
DOC = Path("docs/architecture.md")

#: Built from parts so that this file does not match its own check.
_OLD = "DESIGN"
OLD_CITATION = re.compile(_OLD + r" (?:§|section )")
CITATION = re.compile(r"\barchitecture(?:\.md)? (?:§|section )(\d+)")
HEADING = re.compile(r"^## §(\d+) ", re.MULTILINE)
#: A backticked token that looks like a path in the repository: one or more directories
#: (``streams/``), then optionally a file with a suffix we keep in the tree; no spaces.
PATH = re.compile(r"`((?:[\w.\-]+/)+(?:[\w.\-]+\.(?:py|md|yml|yaml|json|avsc))?)`")


def excluded(name: str) -> bool:
    """Tell whether a tracked file is left out: raw benchmark figures, official copies."""
    return fnmatch(name, "benchmarks/results/*.json") or name.startswith(
        "schemas/json/mplp/official/"
    )


def texts_checked() -> dict[str, str]:
    """Return {path: text} of every tracked text file but the excluded ones, and
    docs/architecture.md (checked before its first commit too)."""
    texts = {name: text for name, text in tracked_texts().items() if not excluded(name)}
    texts.setdefault(DOC.as_posix(), (ROOT / DOC).read_text(encoding="utf-8"))
    return texts


def old_citations(texts: Mapping[str, str]) -> list[str]:
    """Return ``path:line`` of every citation of the old design brief."""
    return [
        f"{name}:{number}"
        for name, text in texts.items()
        for number, line in enumerate(text.splitlines(), 1)
        if OLD_CITATION.search(line)
    ]


def headings(doc: str) -> set[str]:
    """Return the section numbers docs/architecture.md has headings for."""
    return set(HEADING.findall(doc))


def dangling_citations(texts: Mapping[str, str], sections: set[str]) -> list[str]:
    """Return ``path:line: §n`` of every architecture citation naming no heading."""
    return [
        f"{name}:{number}: §{section}"
        for name, text in texts.items()
        for number, line in enumerate(text.splitlines(), 1)
        for section in CITATION.findall(line)
        if section not in sections
    ]


def named_paths(doc: str) -> set[str]:
    """Return the repository paths a document names in backticks."""
    return set(PATH.findall(doc))


def missing_paths(paths: Iterable[str], root: Path) -> list[str]:
    """Return the paths that do not exist under root."""
    return sorted(path for path in paths if not (root / path).exists())


def doc_text() -> str:
    return (ROOT / DOC).read_text(encoding="utf-8")


def test_no_citation_of_the_old_brief() -> None:
    assert old_citations(texts_checked()) == []


def test_every_section_is_there() -> None:
    assert headings(doc_text()) >= {str(n) for n in range(1, 9)}


def test_every_architecture_citation_names_a_section() -> None:
    texts = texts_checked()
    cited = [name for name, text in texts.items() if CITATION.search(text)]
    assert len(cited) > 10  # the code cites it: a regex that matches nothing would pass
    assert dangling_citations(texts, headings(doc_text())) == []


def test_the_doc_names_only_paths_that_exist() -> None:
    paths = named_paths(doc_text())
    assert {"streams/join/unit.py", "streams/"} <= paths
    assert missing_paths(paths, ROOT) == []


# The checks can fail: each is fed a case it must catch.


def test_an_old_citation_is_found() -> None:
    bad = {"a.py": "ok\n# see " + _OLD + " §5\n", "b.md": "the " + _OLD + " section 4 table"}
    assert old_citations(bad) == ["a.py:2", "b.md:1"]


def test_a_citation_of_a_missing_section_is_found() -> None:
    text = "architecture §" + "9 and docs/architecture.md §" + "3, architecture §" + "12"
    assert dangling_citations({"c.py": text}, {"3"}) == ["c.py:1: §9", "c.py:1: §12"]


def test_a_missing_path_is_found(tmp_path: Path) -> None:
    (tmp_path / "streams").mkdir()
    (tmp_path / "streams" / "there.py").write_text("")
    doc = "`streams/there.py`, `streams/gone.py`, `streams/`, `nowhere/`, `a b.py`, `x.py`"
    assert named_paths(doc) == {"streams/there.py", "streams/gone.py", "streams/", "nowhere/"}
    assert missing_paths(named_paths(doc), tmp_path) == ["nowhere/", "streams/gone.py"]
