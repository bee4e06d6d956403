"""The official MPLP v1.0 schemas ship with the project, unchanged, so a clone tests alone.

``schemas/json/mplp/official/`` holds copies of the official files (Apache-2.0; NOTICE and
LICENSE beside them) and ``SHA256SUMS``, their digests as released. CI points
``LEARNSTREAM_MPLP_SCHEMAS`` at the official directory, and then every copy must equal its
original byte for byte; elsewhere the digests stand in for the originals.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from learnstream.streams.encoding.schemas import OFFICIAL_MPLP_DIR
from tests.conftest import SHIPPED_MPLP, official_mplp_override

#: Files of ours in the copy's folder: not MPLP's, so not in the digests.
OURS = frozenset({"SHA256SUMS", "LICENSE"})


def digests() -> dict[str, str]:
    """Return ``SHA256SUMS`` as relative path -> hex digest."""
    lines = (SHIPPED_MPLP / "SHA256SUMS").read_text("utf-8").splitlines()
    return {path.removeprefix("./"): digest for digest, path in (ln.split("  ", 1) for ln in lines)}


def shipped_files() -> set[str]:
    """Return the shipped MPLP files, relative to their folder, ours left out."""
    return {
        p.relative_to(SHIPPED_MPLP).as_posix()
        for p in SHIPPED_MPLP.rglob("*")
        if p.is_file() and p.name not in OURS
    }


def test_the_conftest_and_the_code_name_the_same_folder() -> None:
    assert SHIPPED_MPLP.resolve() == OFFICIAL_MPLP_DIR.resolve()


def test_every_shipped_file_has_its_released_digest() -> None:
    expected = digests()
    assert shipped_files() == set(expected)
    for name, digest in expected.items():
        assert hashlib.sha256((SHIPPED_MPLP / name).read_bytes()).hexdigest() == digest, name


def test_what_the_tests_read_is_shipped() -> None:
    names = shipped_files()
    assert {"NOTICE", "taxonomy/learning-taxonomy.yaml", "common/identifiers.schema.json"} <= names
    learning = {
        f"learning/mplp-learning-sample-{f}.schema.json" for f in ("core", "intent", "delta")
    }
    assert learning <= names
    assert {n for n in names if n.startswith("events/")} >= {
        "events/mplp-pipeline-stage-event.schema.json",
        "events/mplp-graph-update-event.schema.json",
        "events/mplp-sa-event.schema.json",
        "events/mplp-map-event.schema.json",
    }
    assert "Apache License" in (SHIPPED_MPLP / "LICENSE").read_text("utf-8")
    assert "Apache-2.0" in (SHIPPED_MPLP / "NOTICE").read_text("utf-8")


def test_shipped_copies_are_the_official_files() -> None:
    """Byte for byte against ``LEARNSTREAM_MPLP_SCHEMAS`` (CI sets it); else the digests."""
    official = official_mplp_override()
    if official is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI: set LEARNSTREAM_MPLP_SCHEMAS to the official MPLP v1.0 schemas")
        expected = digests()
        for name in shipped_files():
            assert hashlib.sha256((SHIPPED_MPLP / name).read_bytes()).hexdigest() == expected[name]
        return
    if official.resolve() == SHIPPED_MPLP.resolve():
        pytest.fail("LEARNSTREAM_MPLP_SCHEMAS names the shipped copies: nothing to compare")
    for name in shipped_files():
        assert (SHIPPED_MPLP / name).read_bytes() == (official / name).read_bytes(), name
    released = {
        p.relative_to(official).as_posix()
        for p in official.rglob("*")
        if p.is_file() and p.suffix in (".json", ".yaml") and not _is_doc(p, official)
    }
    assert released <= shipped_files(), sorted(released - shipped_files())


def _is_doc(path: Path, root: Path) -> bool:
    """Tell a page of the protocol's docs (not shipped: prose, not schemas)."""
    return path.relative_to(root).parts[0] == "docs"
