"""Read technical text other people wrote from this machine: Debian's lists and PyPI's names.

Only ``build`` reads these (the benchmark reads the shipped data files): the apt lists an
``apt-get update`` leaves, Debian's AppStream metadata beside them, and the PyPI project
list of the workplace's package index. Each sentence keeps where it came from.
"""

from __future__ import annotations

import csv
import gzip
import html
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["APT_LISTS", "Candidate", "appstream", "debian_packages", "pypi", "sentences"]

APT_LISTS = Path("/var/lib/apt/lists")
#: Debian sections whose packages a coding, ops or data agent works with.
_SECTIONS = frozenset(
    ("admin", "database", "debug", "devel", "doc", "editors", "embedded", "gnu-r", "golang",
     "haskell", "httpd", "interpreters", "java", "javascript", "kernel", "libdevel", "libs",
     "lisp", "mail", "math", "misc", "net", "ocaml", "otherosfs", "perl", "php", "python",
     "ruby", "rust", "science", "shells", "text", "utils", "vcs", "web")
)  # fmt: skip
#: AppStream categories of the same kind of software; games and media are left out.
_CATEGORIES = frozenset(
    ("Development", "System", "Network", "Utility", "Science", "Office", "Database",
     "Monitor", "Security", "TerminalEmulator", "TextEditor", "IDE", "Math", "Engineering",
     "DataVisualization", "Archiving", "FileTools", "Documentation", "RemoteAccess")
)  # fmt: skip
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_TAG = re.compile(r"<[^>]+>")
_BLOCK_END = re.compile(r"</(?:p|li)>")


@dataclass(frozen=True)
class Candidate:
    """A sentence from a source, before filtering: the source's name, the item it came from."""

    source: str
    ref: str
    text: str


def sentences(text: str) -> list[str]:
    """Split prose into sentences, its whitespace collapsed."""
    flat = " ".join(text.split())
    return [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()]


def _decompress(path: Path) -> str:
    """Return an apt list's text, read by apt's own helper (any compression apt uses) or lz4."""
    for command in (["/usr/lib/apt/apt-helper", "cat-file"], ["lz4", "-dc"]):
        if shutil.which(command[0]):
            done = subprocess.run([*command, str(path)], capture_output=True, check=False)
            if done.returncode == 0:
                return done.stdout.decode("utf-8", "replace")
    raise RuntimeError(f"cannot decompress {path.name}: install lz4 (apt-get install -y lz4)")


def _stanzas(text: str) -> Iterator[dict[str, str]]:
    """Yield the fields of each Debian control stanza, continuation lines kept."""
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields:
            yield fields


def _description(field: str) -> list[str]:
    """Return a Description's synopsis and the sentences of its long text, if the list has it."""
    synopsis, *body = field.split("\n")
    long_text = " ".join(line.strip() for line in body if line.strip() != ".")
    return [synopsis.strip(), *sentences(long_text)]


def debian_packages(lists: Path = APT_LISTS, other_sections: bool = False) -> Iterator[Candidate]:
    """Yield the descriptions of the packages in technical sections (or, with
    ``other_sections``, in every other section), one package once."""
    seen: set[str] = set()
    for path in sorted(lists.glob("*_Packages.lz4")):
        for fields in _stanzas(_decompress(path)):
            name = fields.get("Package", "")
            technical = fields.get("Section", "").split("/")[-1] in _SECTIONS
            if name in seen or technical == other_sections:
                continue
            seen.add(name)
            for text in _description(fields.get("Description", "")):
                yield Candidate("debian-packages", name, text)


def appstream(lists: Path = APT_LISTS) -> Iterator[Candidate]:
    """Yield the sentences of the English AppStream descriptions of technical software."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(lists.glob("*_dep11_Components-amd64.yml.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as stream:
            for doc in yaml.load_all(stream, Loader=loader):
                text = ((doc or {}).get("Description") or {}).get("C")
                if not text or not _CATEGORIES.intersection(doc.get("Categories") or ()):
                    continue
                # a list item is a sentence of its own even without a full stop
                for block in _BLOCK_END.split(text):
                    for sentence in sentences(html.unescape(_TAG.sub(" ", block))):
                        yield Candidate("debian-appstream", doc["Package"], sentence)


def pypi(listing: Path) -> Iterator[Candidate]:
    """Yield the summaries of the 15,000 most downloaded projects in a PyPI listing TSV."""
    with listing.open(encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter="\t", quoting=csv.QUOTE_NONE):
            rank, summary = row.get("rank_among_15000_most_downloaded"), row.get("summary")
            if rank and summary:
                yield Candidate("pypi-summaries", row["name"], " ".join(summary.split()))
