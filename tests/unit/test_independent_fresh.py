"""The shipped fresh recall corpora: frozen, split by their hash rule, values where they say.

Built once each by ``python -m benchmarks.independent.build3 [--round 4]`` from scrubadub's
documents and values of scrubadub, mimesis and python-stdnum (none of which this suite
imports). Of recall4 only the dev split is read here: its test split is held out, checked
by its hash alone.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import pytest

import benchmarks.independent.__main__ as runner
from benchmarks.independent.__main__ import main
from benchmarks.independent.corpus import FrozenSplitError, read_manifest, sha256_file
from benchmarks.independent.fresh_corpus import (
    FRESH,
    FRESH4,
    RECALLS,
    load_planted,
    read_documents,
)
from benchmarks.independent.score import TARGETS

FAMILIES = {
    "scrubadub en_US", "scrubadub en_GB", "mimesis Latin", "mimesis lower-case",
    "mimesis ALL-CAPS", "mimesis Cyrillic", "mimesis CJK", "mimesis Arabic", "mimesis Greek",
    "mimesis addresses", "python-stdnum",
}  # fmt: skip


@cache
def _documents(split: str) -> list[dict[str, Any]]:
    return read_documents(FRESH / f"{split}.jsonl")


@pytest.mark.parametrize("name", sorted(RECALLS))
def test_the_test_split_is_frozen_by_its_hash(name: str) -> None:
    entry = read_manifest(RECALLS[name])["splits"]["test"]
    assert entry["frozen"] is True
    assert sha256_file(RECALLS[name] / entry["file"]) == entry["sha256"]
    assert f"--recall {name})" in read_manifest(RECALLS[name])["scoring"]


def test_the_second_draw_has_its_own_seed_and_no_document_of_the_first() -> None:
    assert read_manifest(FRESH4)["seed"] != read_manifest(FRESH)["seed"]
    first = {d["text"] for split in ("dev", "test") for d in _documents(split)}
    fourth_dev = read_documents(FRESH4 / "dev.jsonl")
    assert len(fourth_dev) > 400
    assert not first & {d["text"] for d in fourth_dev}
    for doc in fourth_dev:
        assert hashlib.sha256(f"split|{doc['text']}".encode()).digest()[0] % 2 == 0
        assert all(v["value"] in doc["text"] for v in doc["values"])


def test_dev_and_test_are_disjoint_and_split_by_the_hash_rule() -> None:
    for split in ("dev", "test"):
        for doc in _documents(split):
            first = hashlib.sha256(f"split|{doc['text']}".encode()).digest()[0]
            assert ("dev" if first % 2 == 0 else "test") == split
    assert not {d["text"] for d in _documents("dev")} & {d["text"] for d in _documents("test")}


def test_every_value_stands_in_its_document_and_every_kind_has_a_target_or_is_a_name() -> None:
    for split in ("dev", "test"):
        for doc in _documents(split):
            assert doc["family"] in FAMILIES
            assert doc["values"]
            for value in doc["values"]:
                assert value["value"] in doc["text"], doc["id"]
                assert value["kind"].split(",")[0] in TARGETS, value["kind"]


@pytest.mark.parametrize("name", sorted(RECALLS))
def test_the_dev_split_loads_as_planted_values_per_kind(name: str) -> None:
    planted, meta = load_planted("dev", RECALLS[name])
    assert meta["source"] == read_manifest(RECALLS[name])["corpus"]
    assert meta["documents"] == len(read_documents(RECALLS[name] / "dev.jsonl"))
    kinds = {p.kind for p in planted}
    assert {"PERSON", "PERSON, CJK", "STREET_ADDRESS", "IBAN_CODE", "IT_FISCAL_CODE"} <= kinds
    assert all(p.value.secrets[0] in p.text for p in planted)


def test_a_changed_test_split_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "recall3"
    shutil.copytree(FRESH, copy)
    test_file = copy / "test.jsonl"
    test_file.write_text(test_file.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    with pytest.raises(FrozenSplitError, match="SHA-256"):
        load_planted("test", copy)
    manifest = read_manifest(copy)
    manifest["splits"]["test"]["frozen"] = False
    (copy / "MANIFEST.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(FrozenSplitError, match="not frozen"):
        load_planted("test", copy)


def _never_score(*_args: object) -> NoReturn:
    raise AssertionError("the runner went on to score a test split it should have refused")


@pytest.mark.parametrize(
    "argv",
    [
        ["--round", "2", "--split", "test", "--recall", "fresh"],
        ["--round", "1", "--split", "test", "--spent", "--recall", "fresh"],
        ["--round", "2", "--split", "test", "--final", "--recall", "fresh4"],
        ["--round", "1", "--split", "test", "--spent", "--final", "--recall", "fresh4"],
    ],
)
def test_the_fresh_test_split_is_scored_only_with_final_beside_an_unspent_split(
    monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    monkeypatch.setattr(runner, "run", _never_score)
    with pytest.raises(SystemExit, match="add --final|fresh recall test split|scored once"):
        main(argv)
