"""The shipped independent precision corpora: frozen, large enough, traced, split cleanly.

Round 1 (Debian, PyPI, Python docstrings), round 2 (toolchains' API docs) and round 3
(less downloaded PyPI and npm packages' summaries, Debian's other sections, other libraries'
docstrings) are checked alike; each round's test split is refused unless it is the one its
manifest froze. A test split not scored yet is checked by its hashes alone: no test here
reads its sentences, so none can show them.
"""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import pytest

import benchmarks.independent.__main__ as runner
from benchmarks.independent.__main__ import main
from benchmarks.independent.corpus import (
    ROUNDS,
    SPLITS,
    FrozenSplitError,
    Row,
    load,
    marks_digest,
    read_manifest,
    read_rows,
    sha256_file,
)
from benchmarks.independent.select import (
    QUOTAS,
    ROUND2_QUOTAS,
    ROUND3_QUOTAS,
    is_dev,
    normal,
    row_id,
)
from benchmarks.independent.sources import Candidate

#: Round -> the sources its rows may come from.
SOURCES = {1: QUOTAS, 2: ROUND2_QUOTAS, 3: ROUND3_QUOTAS}
rounds = pytest.mark.parametrize("round_", sorted(ROUNDS))


@cache
def _manifest(round_: int) -> dict[str, Any]:
    return read_manifest(ROUNDS[round_])


@cache
def _rows(round_: int, split: str) -> tuple[Row, ...]:
    return read_rows(ROUNDS[round_] / _manifest(round_)["splits"][split]["file"])


def _readable(round_: int) -> tuple[str, ...]:
    """Return the splits whose sentences a test may read: the test split once it is scored."""
    return SPLITS if _manifest(round_)["splits"]["test"].get("scored") else ("dev",)


@cache
def _personal(round_: int) -> dict[str, Any]:
    return json.loads((ROUNDS[round_] / "personal.json").read_text(encoding="utf-8"))


@rounds
def test_the_test_split_is_the_one_the_manifest_froze(round_: int) -> None:
    data, splits = ROUNDS[round_], _manifest(round_)["splits"]
    assert splits["test"]["frozen"] is True
    assert sha256_file(data / splits["test"]["file"]) == splits["test"]["sha256"]
    assert marks_digest(_personal(round_)["test"]) == splits["test"]["personal_sha256"]
    if "sha256" in splits["dev"]:  # round 2 records dev's rows too (its marks may change)
        assert sha256_file(data / splits["dev"]["file"]) == splits["dev"]["sha256"]


@rounds
def test_the_corpus_holds_at_least_3000_sentences_as_the_manifest_counts(round_: int) -> None:
    assert sum(_manifest(round_)["splits"][split]["rows"] for split in SPLITS) >= 3000
    assert all(_manifest(round_)["splits"][split]["rows"] >= 1000 for split in SPLITS)
    for split in _readable(round_):
        rows = _rows(round_, split)
        assert len(rows) == _manifest(round_)["splits"][split]["rows"]
        assert len(rows) >= 1000  # each split alone is large enough to read a rate from
        assert len({row.source for row in rows}) >= 2


@rounds
def test_every_row_says_where_it_was_written(round_: int) -> None:
    for split in _readable(round_):
        for row in _rows(round_, split):
            assert row.source in SOURCES[round_], row.id
            assert row.ref.strip(), row.id
            assert row.text.strip() == row.text, row.id
            assert len(row.text.split()) >= 4, row.id
            assert row.id == row_id(Candidate(row.source, row.ref, row.text)), row.id


@rounds
def test_dev_and_test_are_disjoint_and_split_by_the_hash_rule(round_: int) -> None:
    assert all(is_dev(r.text) for r in _rows(round_, "dev"))
    if "test" not in _readable(round_):
        return
    dev, test = _rows(round_, "dev"), _rows(round_, "test")
    assert not {r.id for r in dev} & {r.id for r in test}
    assert not {r.text.casefold() for r in dev} & {r.text.casefold() for r in test}
    assert all(is_dev(r.text) for r in dev)
    assert not any(is_dev(r.text) for r in test)
    for rows in (dev, test):
        assert len({r.id for r in rows}) == len(rows)


def test_round_2_holds_no_sentence_of_round_1() -> None:
    first = {normal(r.text) for split in SPLITS for r in _rows(1, split)}
    assert not first & {normal(r.text) for split in SPLITS for r in _rows(2, split)}


def test_round_3_dev_holds_no_sentence_of_rounds_1_and_2() -> None:
    earlier = {normal(r.text) for n in (1, 2) for split in SPLITS for r in _rows(n, split)}
    assert not earlier & {normal(r.text) for r in _rows(3, "dev")}


@rounds
def test_personal_marks_name_rows_of_their_own_split(round_: int) -> None:
    for split in _readable(round_):
        ids = {r.id for r in _rows(round_, split)}
        assert set(_personal(round_)[split]) <= ids
        assert all(reason.strip() for reason in _personal(round_)[split].values())


def _copy(tmp_path: Path, round_: int) -> Path:
    copy = tmp_path / ROUNDS[round_].name
    shutil.copytree(ROUNDS[round_], copy)
    return copy


@rounds
def test_a_changed_test_split_is_refused(tmp_path: Path, round_: int) -> None:
    copy = _copy(tmp_path, round_)
    with (copy / "test.jsonl").open("a", encoding="utf-8") as test_file:
        test_file.write("\n")  # one byte more, the split unread
    with pytest.raises(FrozenSplitError, match="SHA-256"):
        load("test", copy)
    assert len(load("dev", copy).rows) == len(_rows(round_, "dev"))  # dev is not frozen


@rounds
def test_changed_personal_marks_of_the_test_split_are_refused(tmp_path: Path, round_: int) -> None:
    copy = _copy(tmp_path, round_)
    marks = json.loads((copy / "personal.json").read_text(encoding="utf-8"))
    marks["test"]["deb-000000000000"] = "hand: a late mark"
    (copy / "personal.json").write_text(json.dumps(marks), encoding="utf-8")
    with pytest.raises(FrozenSplitError, match="personal marks"):
        load("test", copy)


def test_the_test_split_scored_once_is_not_scored_again() -> None:
    scored = _manifest(1)["splits"]["test"]["scored"]
    assert (ROUNDS[1].parents[1] / "results" / Path(scored["results"]).name).is_file()
    with pytest.raises(SystemExit) as stop:
        main(["--split", "test", "--final", "--no-recall"])
    assert f"scored once already, {scored['at']} on {scored['commit']}" in str(stop.value)


def _never_score(*_args: object) -> NoReturn:
    raise AssertionError("the runner went on to score a test split it should have refused")


def test_an_unscored_test_split_is_refused_without_final(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _copy(tmp_path, 2)
    manifest = read_manifest(copy)
    manifest["splits"]["test"].pop("scored", None)
    (copy / "MANIFEST.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setitem(ROUNDS, 2, copy)
    monkeypatch.setattr(runner, "run", _never_score)
    with pytest.raises(SystemExit, match="add --final"):
        main(["--round", "2", "--split", "test", "--no-recall"])


def test_an_unfrozen_test_split_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = _copy(tmp_path, 2)
    manifest = read_manifest(copy)
    manifest["splits"]["test"]["frozen"] = False
    manifest["splits"]["test"].pop("scored", None)
    (copy / "MANIFEST.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(FrozenSplitError, match="not frozen"):
        load("test", copy)
    monkeypatch.setitem(ROUNDS, 2, copy)
    monkeypatch.setattr(runner, "run", _never_score)
    with pytest.raises(SystemExit, match="refused: .*not frozen"):
        main(["--round", "2", "--split", "test", "--final", "--no-recall"])


@pytest.mark.parametrize(
    ("argv", "refusal"),
    [
        (["--round", "3", "--split", "test", "--no-recall"], "add --final"),
        (["--round", "3", "--split", "test", "--recall", "fresh4"], "add --final"),
        (["--round", "3", "--split", "test", "--final", "--recall", "fresh"], "fresh recall"),
    ],
)
def test_round_3s_test_split_is_scored_only_with_final_beside_an_unspent_recall_split(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], refusal: str
) -> None:
    monkeypatch.setattr(runner, "run", _never_score)
    with pytest.raises(SystemExit, match=refusal):
        main(argv)
