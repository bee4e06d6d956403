"""streams/export/rows.py + export_files.py + formatters.py: exact rows per format, on hand-built
samples and pairs, and files that `datasets` loads with exactly TRL's columns."""

from __future__ import annotations

import json
import sys
import textwrap
from datetime import UTC, datetime
from typing import Any

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from learnstream.streams.export.files import ROW_GROUP, write_export
from learnstream.streams.export.formatters import FormatterError, load_formatter
from learnstream.streams.export.rows import (
    Dedup,
    ExportError,
    RowMaker,
    SampleFilter,
    export_filter,
)
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.pairs import PreferencePair, pair_id
from learnstream.streams.samples.sample import LearningSample

PROJECT = "2b1f8a1e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
OTHER = "3c2f8a1e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"


def sample(family: str, quality: str, n: int = 0, project: str = PROJECT) -> LearningSample:
    inp, out = {
        "intent_resolution": (
            {"intent_id": "i1", "raw_request_summary": "r", "intent_text": f"book a room {n}"},
            {"final_intent_summary": "s", "plan_title": "Book", "plan_structure": [{"d": 1}]},
        ),
        "error_correction": (
            {"plan_state": {"title": "T"}, "change_summary": "add a step"},
            {"result": {"steps_added": 1}},
        ),
        "confirm_decision": ({"plan_id": "p"}, {"decision": "rejected", "reason": "too long"}),
        "pipeline_outcome": ({"objective": "ship it"}, {"result": {"status": "failed"}}),
        "delta_impact": ({"change_summary": "c"}, {"actual_impact_summary": "small"}),
    }[family]
    source = sample_id("event", f"{family}{quality}{n}")
    return LearningSample.model_validate(
        {
            "sample_id": sample_id(family, f"{quality}{n}"),
            "sample_family": family,
            "created_at": "2026-11-24T07:00:00Z",
            "input": inp,
            "output": out,
            "feedback": {"source": "user", "type": "score", "quality_label": quality},
            "meta": {
                "source_event_ids": [source],
                "project_id": project,
                "human_feedback_label": "not_reviewed",
                "producer": "test",
            },
        }
    )


def pair(margin: float | None = None, family: str = "intent_resolution") -> PreferencePair:
    return PreferencePair(
        pair_id=pair_id("replan", "a", str(margin)),
        kind="replan",
        intent_id="i1",
        project_id=PROJECT,
        family=family,
        prompt={"intent_text": "book a room"},
        chosen={"plan_title": "Good", "plan_structure": []},
        rejected={"plan_title": "Bad", "plan_structure": []},
        chosen_sample_id="c",
        rejected_sample_id="r",
        event_time="2026-11-24T07:00:00Z",
        created_at="2026-11-24T07:00:01Z",
        margin=margin,
    )


def rows(fmt: str, items: list[Any], chat: bool = False) -> list[dict[str, Any]]:
    return list(RowMaker(fmt, chat=chat).rows(items))


def test_sft_plain_and_chat_rows() -> None:
    good = sample("intent_resolution", "good")
    assert rows("sft", [good]) == [{"prompt": "book a room 0", "completion": 'Book\n[{"d": 1}]'}]
    assert rows("sft", [good], chat=True) == [
        {
            "messages": [
                {"role": "user", "content": "book a room 0"},
                {"role": "assistant", "content": 'Book\n[{"d": 1}]'},
            ]
        }
    ]


@pytest.mark.parametrize(
    ("family", "prompt", "completion"),
    [
        (
            "error_correction",
            'Plan:\n{"title": "T"}\nCorrection requested: add a step',
            '{"steps_added": 1}',
        ),
        (
            "confirm_decision",
            'Approve or reject this plan confirmation request:\n{"plan_id": "p"}',
            "rejected: too long",
        ),
        ("pipeline_outcome", "ship it", '{"status": "failed"}'),
        ("delta_impact", "c", "small"),
    ],
)
def test_kto_rows_per_family(family: str, prompt: str, completion: str) -> None:
    got = rows("kto", [sample(family, "poor"), sample(family, "good")])
    assert got == [
        {"prompt": prompt, "completion": completion, "label": False},
        {"prompt": prompt, "completion": completion, "label": True},
    ]


def test_mplp_and_training_dataset_rows() -> None:
    good = sample("delta_impact", "good")
    assert rows("mplp", [good]) == [good.to_dict()]
    assert rows("training-dataset", [good]) == [
        {
            "prompt": "c",
            "completion": "small",
            "metadata": {"sample_id": good.sample_id, "quality": "good"},
        }
    ]


def test_dpo_and_reward_rows_from_a_pair() -> None:
    assert rows("dpo", [pair(0.5)]) == [
        {"prompt": "book a room", "chosen": "Good\n[]", "rejected": "Bad\n[]", "margin": 0.5}
    ]
    assert rows("reward", [pair()]) == [
        {"chosen": "book a room\nGood\n[]", "rejected": "book a room\nBad\n[]", "margin": None}
    ]
    correction = pair(family="error_correction").model_copy(
        update={"prompt": {"change_summary": "roll back first"}}
    )
    assert rows("dpo", [correction]) == [
        {
            "prompt": "Correction requested: roll back first",
            "chosen": '{"plan_title": "Good", "plan_structure": []}',
            "rejected": '{"plan_title": "Bad", "plan_structure": []}',
            "margin": None,
        }
    ]
    feedback = pair(0.75, family="dialog_response").model_copy(
        update={
            "prompt": {"correlation_id": "c1", "prompt": "Hi?"},
            "chosen": {"response": "Hello."},
            "rejected": {"response": "Go away."},
        }
    )
    assert rows("dpo", [feedback]) == [
        {"prompt": "Hi?", "chosen": "Hello.", "rejected": "Go away.", "margin": 0.75}
    ]
    user = {"role": "user", "content": "book a room"}
    assert rows("reward", [pair()], chat=True)[0]["chosen"] == [
        user,
        {"role": "assistant", "content": "Good\n[]"},
    ]
    assert rows("dpo", [pair()], chat=True)[0]["prompt"] == [user]


def test_margin_is_on_every_row_or_none(tmp_path) -> None:
    out = tmp_path / "dpo.jsonl"
    maker = RowMaker("dpo")
    assert write_export(maker.rows([pair(0.5), pair(0.25)]), out, "dpo") == 2
    assert [json.loads(line)["margin"] for line in out.read_text().splitlines()] == [0.5, 0.25]
    write_export(maker.rows([pair(0.5), pair(None)]), out, "dpo")
    assert [set(json.loads(line)) for line in out.read_text().splitlines()] == [
        {"prompt", "chosen", "rejected"}
    ] * 2


def test_dedup_keeps_the_first_copy() -> None:
    dedup, s = Dedup(), sample("intent_resolution", "good")
    assert [dedup.first(x.sample_id) for x in (s, s, sample("intent_resolution", "poor"))] == [
        True,
        False,
        True,
    ]


def test_filters_and_format_defaults() -> None:
    samples = [
        sample("intent_resolution", "good"),
        sample("intent_resolution", "acceptable"),
        sample("intent_resolution", "poor"),
        sample("delta_impact", "good"),
        sample("delta_impact", "good", project=OTHER),
    ]

    def kept(f: SampleFilter) -> list[tuple[str, str]]:
        return [(s.sample_family, s.feedback.quality_label) for s in samples if f.accepts(s)]

    assert kept(export_filter("sft", [], [], None)) == [
        ("intent_resolution", "good"),
        ("delta_impact", "good"),
        ("delta_impact", "good"),
    ]
    assert kept(export_filter("kto", ["intent_resolution"], [], PROJECT)) == [
        ("intent_resolution", "good"),
        ("intent_resolution", "poor"),
    ]
    assert len(kept(export_filter("mplp", [], [], OTHER))) == 1
    assert kept(export_filter("sft", [], ["acceptable"], None)) == [
        ("intent_resolution", "acceptable")
    ]
    assert export_filter("dpo", ["error_correction"], [], None).accepts_pair(pair()) is False
    with pytest.raises(ExportError, match="sft trains on good"):
        export_filter("sft", [], ["poor"], None)
    with pytest.raises(ExportError, match="--quality does not apply to dpo"):
        export_filter("dpo", [], ["good"], None)
    with pytest.raises(ExportError, match="--chat does not apply to mplp"):
        RowMaker("mplp", chat=True)


def test_a_user_formatter_is_loaded_and_checked(tmp_path, monkeypatch) -> None:
    (tmp_path / "myfmt.py").write_text(
        textwrap.dedent(
            """
            def render(family, inp, out):
                return f"{family}?", "ok"

            def broken(family, inp, out):
                return ["not", "a tuple"]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    maker = RowMaker("sft", formatter=load_formatter("myfmt:render"))
    assert list(maker.rows([sample("delta_impact", "good")])) == [
        {"prompt": "delta_impact?", "completion": "ok"}
    ]
    with pytest.raises(FormatterError, match="must return"):
        list(
            RowMaker("sft", formatter=load_formatter("myfmt:broken")).rows(
                [sample("delta_impact", "good")]
            )
        )
    for spec, message in [
        ("myfmt", "module:function"),
        ("nowhere_xyz:f", "cannot import module nowhere_xyz"),
        ("myfmt:absent", "has no function absent"),
    ]:
        with pytest.raises(FormatterError, match=message):
            load_formatter(spec)
    sys.modules.pop("myfmt", None)


def test_parquet_round_trip_in_row_groups(tmp_path) -> None:
    out = tmp_path / "kto.parquet"
    samples = [sample("delta_impact", "good" if n % 3 else "poor", n) for n in range(ROW_GROUP + 5)]
    assert write_export(RowMaker("kto").rows(samples), out, "kto") == ROW_GROUP + 5
    file = pq.ParquetFile(out)
    assert file.metadata.num_row_groups == 2
    table = file.read()
    assert table.column_names == ["prompt", "completion", "label"]
    assert table.slice(0, 2).to_pylist() == [
        {"prompt": "c", "completion": "small", "label": False},
        {"prompt": "c", "completion": "small", "label": True},
    ]
    assert not list(tmp_path.glob("*.partial"))


def test_training_dataset_is_one_object_streamed(tmp_path) -> None:
    out = tmp_path / "dataset.json"
    good = [sample("intent_resolution", "good", n) for n in range(3)]
    assert write_export(RowMaker("training-dataset").rows(good), out, "training-dataset") == 3
    data = json.loads(out.read_text())
    assert list(data) == ["version", "sample_count", "samples"]
    assert (data["version"], data["sample_count"]) == ("1.0.0", 3)
    assert data["samples"][2] == {
        "prompt": "book a room 2",
        "completion": 'Book\n[{"d": 1}]',
        "metadata": {"sample_id": good[2].sample_id, "quality": "good"},
    }
    write_export(iter(()), out, "training-dataset")
    assert json.loads(out.read_text()) == {"version": "1.0.0", "sample_count": 0, "samples": []}


def test_parquet_refused_for_free_form_formats(tmp_path) -> None:
    with pytest.raises(ExportError, match="mplp is written as JSON only"):
        write_export(iter(()), tmp_path / "x.parquet", "mplp")


TRL_COLUMNS = {
    ("sft", False): ["prompt", "completion"],
    ("sft", True): ["messages"],
    ("kto", False): ["prompt", "completion", "label"],
    ("kto", True): ["prompt", "completion", "label"],
    ("dpo", False): ["prompt", "chosen", "rejected"],
    ("dpo", True): ["prompt", "chosen", "rejected"],
    ("reward", False): ["chosen", "rejected"],
    ("reward", True): ["chosen", "rejected"],
}


@pytest.mark.parametrize(("fmt", "chat"), list(TRL_COLUMNS))
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_datasets_loads_exactly_trl_columns(tmp_path, fmt: str, chat: bool, suffix: str) -> None:
    items: list[Any] = (
        [pair(), pair(0.1)]
        if fmt in ("dpo", "reward")
        else [sample("intent_resolution", "good"), sample("pipeline_outcome", "poor")]
    )
    out = tmp_path / f"{fmt}{suffix}"
    expected = rows(fmt, items, chat)
    count = write_export(RowMaker(fmt, chat=chat).rows(items), out, fmt)
    loader = "parquet" if suffix == ".parquet" else "json"
    loaded = load_dataset(loader, data_files=str(out), split="train")
    assert loaded.column_names == TRL_COLUMNS[(fmt, chat)]
    want = [{k: v for k, v in row.items() if k != "margin"} for row in expected]
    assert count == len(want)
    assert loaded.to_list() == want


def test_datasets_loads_the_training_dataset_samples(tmp_path) -> None:
    out = tmp_path / "dataset.json"
    good = [sample("intent_resolution", "good", n) for n in range(2)]
    write_export(RowMaker("training-dataset").rows(good), out, "training-dataset")
    loaded = load_dataset("json", data_files=str(out), field="samples", split="train")
    assert loaded.column_names == ["prompt", "completion", "metadata"]
    assert loaded[1]["metadata"] == {"sample_id": good[1].sample_id, "quality": "good"}


def test_the_export_core_imports_no_kafka_client() -> None:
    from tests.unit.test_layers import KAFKA_CLIENTS, closure, imports

    for name in (
        "learnstream.streams.export.rows",
        "learnstream.streams.export.files",
        "learnstream.streams.export.formatters",
    ):
        reached = {m for module in closure(name) for m in imports(module)}
        assert not [m for m in reached if m.split(".")[0] in KAFKA_CLIENTS], name


async def test_decoded_skips_and_counts_bad_duplicate_and_filtered_records() -> None:
    from dataclasses import dataclass

    from learnstream.streams.encoding.codecs import codec_for
    from learnstream.streams.io.consumer import ReadStats, decode_sample, decoded, sample_key

    @dataclass
    class Rec:
        value: bytes

    good, poor = sample("intent_resolution", "good"), sample("intent_resolution", "poor")
    values = [
        codec_for("avro").encode(good.to_dict()),
        b"not json",
        b'{"sample_id": "x"}',
        codec_for("json").encode(good.to_dict()),  # a replayed copy, other encoding
        codec_for("json").encode(poor.to_dict()),
    ]

    async def source():
        for value in values:
            yield Rec(value)

    stats, seen = ReadStats(), []
    stats.listener = lambda s: seen.append(s.read)
    keep = export_filter("sft", [], [], None).accepts
    got = [s async for _, s in decoded(source(), decode_sample, sample_key, keep, stats)]
    assert got == [good]
    assert (stats.read, stats.bad, stats.duplicates, stats.filtered, stats.kept) == (5, 2, 1, 1, 1)
    assert stats.skipped == 4
    assert seen == [1, 2, 3, 4, 5]


def test_batch_quality_counts_by_event_time_and_leaves_late_samples_out() -> None:
    from learnstream.streams.io.quality_batch import WindowCount

    def at(event_time: str, family: str = "delta_impact", quality: str = "good"):
        s = sample(family, quality)
        return s.model_copy(update={"meta": s.meta.model_copy(update={"event_time": event_time})})

    since = datetime(2026, 11, 24, 8, 0, tzinfo=UTC).timestamp()
    window = WindowCount(since, since + 300, expires=3600)
    window.add(since + 10, at("2026-11-24T08:00:00Z"))  # counted
    window.add(since + 10, at("2026-11-24T08:04:59.9Z", quality="poor"))  # counted
    window.add(since + 10, at("2026-11-24T08:05:00Z"))  # next window
    window.add(since + 10, at("2026-11-24T07:59:59Z"))  # previous window
    window.add(since + 300 + 3600, at("2026-11-24T08:01:00Z"))  # written once expired: late
    window.add(since + 299, at(""))  # no event time: the write time, in the window
    assert window.counts["delta_impact"] == {"good": 2, "acceptable": 0, "poor": 1}
    assert sum(sum(c.values()) for c in window.counts.values()) == 3


def test_export_help_says_the_range_is_on_the_record_timestamp() -> None:
    from click.testing import CliRunner

    from learnstream.agents.cli.main import main

    result = CliRunner().invoke(main, ["export", "--help"])
    assert result.exit_code == 0
    assert "--since / --until select by the record timestamp" in " ".join(result.output.split())
    bad = CliRunner().invoke(main, ["export", "--format", "dpo", "--quality", "good", "--out", "x"])
    assert bad.exit_code == 1
    assert (
        bad.output == "Error: --quality does not apply to dpo: pairs hold a chosen and a rejected\n"
    )


def test_the_progress_bar_shows_read_written_skipped_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from learnstream.agents.cli.export_view import export_progress, summary
    from learnstream.streams.io.consumer import ReadStats

    stats, screen = ReadStats(), io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    with export_progress(stats, console):
        assert stats.listener is not None
        stats.read, stats.kept, stats.filtered = 30, 20, 10
        stats.progress.total, stats.progress.left = 100, 70
        stats.listener(stats)
    assert stats.listener is None
    assert "read 30  written 20" in screen.getvalue()
    assert "skipped 10" in screen.getvalue()
    stats.progress.idle = True
    assert summary(20, "sft", "out.jsonl", stats) == (
        "exported 20 sft rows to out.jsonl: read 30 records, skipped 10 (bad 0, duplicates 0, "
        "filtered out 10); stopped after no record came for a while, 70 offsets left unread "
        "(transactions still open?)"
    )
    quiet = io.StringIO()
    with export_progress(ReadStats(), Console(file=quiet, force_terminal=False)):
        pass
    assert quiet.getvalue() == ""


def test_the_project_filter_takes_the_runtime_id_or_the_uuid_in_any_case() -> None:
    from learnstream.streams.samples.ids import canonical_id

    mine = sample("intent_resolution", "good", project=canonical_id("proj-acme"))
    theirs = sample("intent_resolution", "good", project=OTHER)
    for given in ("proj-acme", canonical_id("proj-acme"), canonical_id("proj-acme").upper()):
        where = export_filter("mplp", [], [], given)
        assert [where.accepts(s) for s in (mine, theirs)] == [True, False], given
