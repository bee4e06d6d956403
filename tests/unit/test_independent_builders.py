"""The builders of later precision rounds (build2, build_round3): what they write, and
their freeze, which hashes the test split once and refuses a second time. The sources are
replaced by rows made up here: the files and the manifest are what is under test."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks.independent import build2, build_round3
from benchmarks.independent.corpus import marks_digest, sha256_file

SPLITS = {
    "dev": [{"id": "d1", "text": "Parse TOML files fast.", "source": "made-up", "ref": "a"}],
    "test": [
        {"id": "t1", "text": "Written by dana@example.org.", "source": "made-up", "ref": "b"},
        {"id": "t2", "text": "Render charts in a terminal.", "source": "other", "ref": "c"},
    ],
}


def _built(module: ModuleType, out: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run the module's build over made-up rows into ``out``; return its manifest."""
    monkeypatch.setattr(module, "split_rows", lambda *_: SPLITS)
    for name in ("javadoc", "go_doc", "rust_doc", "npm_docs", "maven_poms"):
        monkeypatch.setattr(build2.toolchains, name, lambda *_: iter(()))
    for name in ("pypi_unranked", "npm_summaries", "debian_other_sections"):
        monkeypatch.setattr(build_round3.sources3, name, lambda *_: iter(()))
    monkeypatch.setattr(build_round3, "docstrings", lambda *_: iter(()))
    monkeypatch.setattr(module, "_versions" if module is build2 else "_sources", lambda _: {})
    monkeypatch.setattr(module, "_round1_sentences" if module is build2 else "_earlier_sentences",
                        set)  # fmt: skip
    args = argparse.Namespace(out=out, jdk=None, goroot=None, rust_docs=None, npm=None,
                              maven=None, pypi=None)  # fmt: skip
    module._build(args)
    return json.loads((out / "MANIFEST.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("module", [build2, build_round3])
def test_a_round_is_written_unfrozen_with_its_rows_and_proposed_marks(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _built(module, tmp_path, monkeypatch)
    rows = [json.loads(line) for line in (tmp_path / "test.jsonl").read_text().splitlines()]
    assert rows == SPLITS["test"]
    personal = json.loads((tmp_path / "personal.json").read_text())
    assert set(personal["test"]) == {"t1"}  # the e-mail address
    assert personal["dev"] == {}
    assert list(manifest)[:2] == ["corpus", "generated_by"]
    assert list(manifest)[-3:] == ["rows_by_source", "personal_rule", "splits"]
    assert manifest["rows_by_source"]["test"] == {"made-up": 1, "other": 1}
    assert manifest["splits"]["test"] == {"file": "test.jsonl", "rows": 2, "frozen": False}


@pytest.mark.parametrize("module", [build2, build_round3])
def test_a_round_is_frozen_once_by_its_hashes(
    module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _built(module, tmp_path, monkeypatch)
    test = module.freeze(tmp_path)["splits"]["test"]
    personal = json.loads((tmp_path / "personal.json").read_text())
    assert test["frozen"] is True
    assert test["sha256"] == sha256_file(tmp_path / "test.jsonl")
    assert test["personal_sha256"] == marks_digest(personal["test"])
    with pytest.raises(SystemExit, match="frozen already"):
        module.freeze(tmp_path)
