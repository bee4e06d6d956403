"""Countries, continents, languages and writing systems: places and tongues that name no one.

NER reads "Khmer fonts for Cambodia", "a university in Spain" and "Cyrillic characters" as
places (spaCy's GPE and LOC, our LOCATION), and masking them takes from a sample what it is
about while protecting nobody. A country is the coarsest place there is: the de-identification
rule that lists what identifies a person by place (HIPAA's Safe Harbor, 45 CFR
164.514(b)(2)(i)(B)) removes every geographic subdivision smaller than a state (a street, a
city, a county, a postcode) and keeps the state and the country. So a NER LOCATION span that is
exactly the name of a country, a continent, a language or a writing system is kept
(``names.py``); a city, a street or a region inside a country is still masked, and a span NER
reads as a PERSON ("Jordan", "Georgia") is masked whatever it also names.

``data/regions.txt.gz`` holds those names, lower-cased, one a line: the ISO 3166-1 countries
(their names, common names and official names), the ISO 15924 scripts and the ISO 639-1
languages as the ``pycountry`` package (26.2.16) ships them, and the seven continents. A name
written with a gloss ("Bengali (Bangla)", "Ahom, Tai Ahom") gives each of its parts; a part
holding a digit ("Modern Greek (1453-)") is left out. ``data/REGIONS-SOURCE`` gives the
provenance. Rebuild it (``pycountry`` importable; it is not a dependency of the worker)::

    python -m learnstream.streams.privacy.regions
"""

from __future__ import annotations

import functools
import gzip
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from learnstream.streams.privacy.dictionary import write_word_list

__all__ = ["REGIONS_FILE", "build", "is_region"]

REGIONS_FILE = Path(__file__).parent / "data" / "regions.txt.gz"
CONTINENTS = ("Africa", "Antarctica", "Asia", "Australia", "Europe", "North America",
              "South America", "Oceania")  # fmt: skip
_PARTS = re.compile(r"[,()]")
_SPACES = re.compile(r"\s+")


@functools.cache
def _regions() -> frozenset[str]:
    with gzip.open(REGIONS_FILE, "rt", encoding="utf-8") as f:
        return frozenset(line for line in f.read().splitlines() if line)


def is_region(text: str) -> bool:
    """Tell whether ``text`` (a span, its spacing and case as written) is exactly the name of
    a country, a continent, a language or a writing system."""
    return _SPACES.sub(" ", text.strip(" .,;:()[]\"'")).lower() in _regions()


def names(written: Iterable[str]) -> Iterator[str]:
    """Yield each name and the parts of a glossed one, lower-cased, without digits."""
    for name in written:
        for part in (name, *_PARTS.split(name)):
            part = _SPACES.sub(" ", part.strip()).lower()
            if len(part) >= 3 and not any(c.isdigit() for c in part):
                yield part


def build(out: Path = REGIONS_FILE) -> int:
    """Write the names of the countries, scripts and languages pycountry knows, and the
    continents, to ``out``; return how many."""
    import pycountry  # only to build the list

    written: list[str] = list(CONTINENTS)
    for country in pycountry.countries:
        written += [getattr(country, key, "") for key in ("name", "common_name", "official_name")]
    written += [script.name for script in pycountry.scripts]
    written += [lang.name for lang in pycountry.languages if hasattr(lang, "alpha_2")]
    return write_word_list(sorted(set(names(w for w in written if w))), out)


if __name__ == "__main__":
    if len(sys.argv) != 1:
        sys.exit("usage: python -m learnstream.streams.privacy.regions")
    print(f"{build()} names written to {REGIONS_FILE}")
