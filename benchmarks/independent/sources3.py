"""Read round 3's technical text, none of it read by rounds 1 and 2.

- PyPI summaries of the projects *outside* the 15,000 most downloaded (round 1 read only
  those inside), from the workplace's PyPI listing TSV;
- npm package summaries from the workplace's npm listing TSV (a note this machine's tests
  put in ``[tested here: …]`` at a summary's start is not the authors' and is dropped);
- Debian package descriptions of the sections round 1 left out (graphics, sound, x11,
  games, fonts, tex, …), from the same apt lists;
- docstrings of installed libraries round 1 did not read (``DISTRIBUTIONS3``).

Each sentence keeps where it came from. Only ``build_round3`` reads these.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

from benchmarks.independent.sources import APT_LISTS, Candidate, debian_packages

__all__ = ["DISTRIBUTIONS3", "debian_other_sections", "npm_summaries", "pypi_unranked"]

#: Installed libraries whose docstrings round 1 did not read. Libraries that hold personal
#: data or secrets on purpose (Faker, Presidio, detect-secrets, phonenumbers) and this
#: project are left out, as in round 1.
DISTRIBUTIONS3: tuple[str, ...] = (
    "Jinja2", "Pygments", "PyYAML", "typer", "thinc", "tldextract", "croniter",
    "intervaltree", "sortedcontainers", "fastavro", "seaborn", "joblib", "dill",
    "markdown-it-py", "smart_open", "python-dateutil", "tomlkit", "srsly", "confection",
    "weasel", "cloudpathlib", "mode-streaming", "wrapt", "narwhals", "hatchling", "pathspec",
    "packaging", "pyparsing", "pluggy", "multidict", "yarl", "referencing", "fonttools",
    "pillow", "tqdm", "cloudpickle", "execnet", "wasabi", "catalogue", "charset-normalizer",
    "idna", "h11", "httpcore", "prometheus_client", "pydantic-settings", "pytest-asyncio",
    "pytest-xdist", "pytest-timeout", "iniconfig", "shellingham", "colorlog", "ddsketch",
    "mabwiser", "venusian", "terminaltables", "contourpy", "multiprocess", "xxhash",
)  # fmt: skip
_TESTED_HERE = re.compile(r"^\[tested here:[^\]]*\]\s*")


def pypi_unranked(listing: Path) -> Iterator[Candidate]:
    """Yield the summaries of the projects with no download rank in a PyPI listing TSV."""
    with listing.open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter="\t", quoting=csv.QUOTE_NONE):
            summary = " ".join((row.get("summary") or "").split())
            if summary and not row.get("rank_among_15000_most_downloaded"):
                yield Candidate("pypi-unranked", row["name"], summary)


def npm_summaries(listing: Path) -> Iterator[Candidate]:
    """Yield the summaries in an npm listing TSV (name, version, downloads, summary)."""
    with listing.open(encoding="utf-8", newline="") as stream:
        reader = csv.reader(stream, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(reader, None)
        for row in reader:
            if len(row) < 4:
                continue
            summary = " ".join(_TESTED_HERE.sub("", row[3]).split())
            if summary:
                yield Candidate("npm-summaries", row[0], summary)


def debian_other_sections(lists: Path = APT_LISTS) -> Iterator[Candidate]:
    """Yield the descriptions of the packages in the sections round 1 did not read."""
    for candidate in debian_packages(lists, other_sections=True):
        yield Candidate("debian-other-sections", candidate.ref, candidate.text)
