"""The shipped independent precision corpus: frozen, large enough, traced, split cleanly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.independent.__main__ import main
from benchmarks.independent.corpus import (
    DATA,
    SPLITS,
    FrozenSplitError,
    load,
    marks_digest,
    read_manifest,
    read_rows,
    sha256_file,
)
from benchmarks.independent.select import QUOTAS, is_dev

MANIFEST = read_manifest()
ROWS = {split: read_rows(DATA / MANIFEST["splits"][split]["file"]) for split in SPLITS}
PERSONAL = json.loads((DATA / "personal.json").read_text(encoding="utf-8"))


def test_the_test_split_is_the_one_the_manifest_froze() -> None:
    frozen = MANIFEST["splits"]["test"]
    assert frozen["frozen"] is True
    assert sha256_file(DATA / frozen["file"]) == frozen["sha256"]
    assert marks_digest(PERSONAL["test"]) == frozen["personal_sha256"]


def test_the_corpus_holds_at_least_3000_sentences_as_the_manifest_counts() -> None:
    assert sum(len(rows) for rows in ROWS.values()) >= 3000
    for split, rows in ROWS.items():
        assert len(rows) == MANIFEST["splits"][split]["rows"]
        assert len(rows) >= 1000  # each split alone is large enough to read a rate from


def test_every_row_says_where_it_was_written() -> None:
    for rows in ROWS.values():
        for row in rows:
            assert row.source in QUOTAS, row.id
            assert row.ref.strip(), row.id
            assert row.text.strip() == row.text, row.id
            assert len(row.text.split()) >= 4, row.id
            assert row.id.split("-")[0] in {"deb", "app", "pypi", "doc"}, row.id


def test_dev_and_test_are_disjoint_and_split_by_the_hash_rule() -> None:
    dev, test = ROWS["dev"], ROWS["test"]
    assert not {r.id for r in dev} & {r.id for r in test}
    assert not {r.text.casefold() for r in dev} & {r.text.casefold() for r in test}
    assert all(is_dev(r.text) for r in dev)
    assert not any(is_dev(r.text) for r in test)
    for rows in ROWS.values():
        assert len({r.id for r in rows}) == len(rows)


def test_personal_marks_name_rows_of_their_own_split() -> None:
    for split in SPLITS:
        ids = {r.id for r in ROWS[split]}
        assert set(PERSONAL[split]) <= ids
        assert all(reason.strip() for reason in PERSONAL[split].values())


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "independent"
    shutil.copytree(DATA, copy)
    return copy


def test_a_changed_test_split_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    test_file = copy / "test.jsonl"
    _, rest = test_file.read_text(encoding="utf-8").split("\n", 1)
    test_file.write_text(rest, encoding="utf-8")  # one sentence fewer
    with pytest.raises(FrozenSplitError, match="SHA-256"):
        load("test", copy)
    assert len(load("dev", copy).rows) == len(ROWS["dev"])  # dev is not frozen


def test_changed_personal_marks_of_the_test_split_are_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    marks = json.loads((copy / "personal.json").read_text(encoding="utf-8"))
    marks["test"][ROWS["test"][0].id] = "hand: a late mark"
    (copy / "personal.json").write_text(json.dumps(marks), encoding="utf-8")
    with pytest.raises(FrozenSplitError, match="personal marks"):
        load("test", copy)


def test_the_test_split_scored_once_is_not_scored_again() -> None:
    scored = MANIFEST["splits"]["test"]["scored"]
    assert (DATA.parents[1] / "results" / Path(scored["results"]).name).is_file()
    with pytest.raises(SystemExit) as stop:
        main(["--split", "test", "--final", "--no-recall"])
    assert f"scored once already, {scored['at']} on {scored['commit']}" in str(stop.value)
