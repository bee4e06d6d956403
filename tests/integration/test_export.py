"""`learnstream export` and `quality --since --until` end to end: runtime events -> worker ->
samples and pairs topics -> the CLI's files, exact rows per format; batch quality = live."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from datasets import load_dataset

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import codec_for, decode_any
from learnstream.streams.export.rows import RowMaker
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic, read_until
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.pairs import PreferencePair
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.sim.simulate import Simulator
from tests.integration.test_reader import create

# 8 minutes, not the 4 of other integration tests: a test here may wait 61 s for a window
# boundary before its scenario starts.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(480)]

#: (family, quality) of the nine samples the worker makes of the scenario.
WORKER_SAMPLES = 9


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "learnstream", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


async def _inside_one_window() -> None:
    """Wait for the next 5-minute window when this one ends within a minute (live /quality)."""
    left = 300 - time.time() % 300
    if left < 60:
        await asyncio.sleep(left + 1)


async def _publish(bootstrap: str, topics: TopicSettings, embedded: bool) -> dict[str, Any]:
    """A replan (rejected, then approved), a correction that applies, two executions."""
    sim, t0 = Simulator(seed=23, pii_ratio=1.0), datetime.now(UTC)
    project, other = sim.uuid(), sim.uuid()
    rejected = sim.plan(t0, project)
    snaps = {
        "rejected": rejected,
        "replan": sim.plan(t0, project, intent=rejected["intent"]),
        "corrected": sim.plan(t0, project),
        "clean": sim.plan(t0, other),
        "failed": sim.plan(t0, other),
    }
    async with RuntimePublisher(bootstrap, topics, one_record_per_batch=embedded) as pub:
        for snap in snaps.values():
            pub.publish_plan(snap)
        await asyncio.sleep(1.0)
        pub.publish_decision(sim.decision(snaps["rejected"], False, t0))
        pub.publish_decision(sim.decision(snaps["replan"], True, t0 + timedelta(seconds=10)))
        fix = {"title": "Roll back first"}
        pub.publish_delta(sim.delta(snaps["corrected"], t0, impact=True, changes=fix))
        pub.publish_stage(sim.stage(snaps["clean"], "started", t0))
        pub.publish_stage(sim.stage(snaps["clean"], "completed", t0))
        pub.publish_stage(sim.stage(snaps["failed"], "failed", t0))
        await asyncio.sleep(2.0)
        pub.publish_stage(sim.stage(snaps["corrected"], "completed", t0 + timedelta(seconds=2)))
    assert pub.stats.dropped == pub.stats.failed == 0
    return {"snaps": snaps, "project": project, "other": other}


async def _send(bootstrap: str, topic: str, key: bytes, value: bytes, ts: int | None) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, value, key=key, timestamp_ms=ts)
    finally:
        await producer.stop()


def _moved(sample: dict[str, Any], name: str) -> dict[str, Any]:
    """Return a copy of a delta_impact sample with its own id and an event time in 2020."""
    meta = {**sample["meta"], "event_time": "2020-01-01T00:00:00Z"}
    return {**sample, "sample_id": sample_id("test-export", name), "meta": meta}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _live_quality(port: int, total: int) -> dict[str, Any]:
    """Return the worker's /quality once its 5m window counts ``total`` samples."""
    deadline = time.monotonic() + 30
    while True:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/quality", timeout=5) as answer:
            report = json.load(answer)
        window = report["windows"]["5m"]
        counted = sum(f["total_samples"] for f in window["families"].values())
        if counted == total or time.monotonic() > deadline:
            return report
        time.sleep(0.5)


async def test_export_every_format_from_a_worker_scenario(
    broker, start_worker, worker_env, namespace, tmp_path
):
    topics = TopicSettings(prefix=namespace)
    worker = start_worker(LEARNSTREAM_SAMPLE_FORMAT="avro")
    await _inside_one_window()  # after the start: a wait for the boundary includes it
    since = datetime.fromtimestamp(int(time.time() * 1000) / 1000, UTC)
    scenario = await _publish(broker.bootstrap, topics, broker.embedded)
    samples_topic, pairs_topic = topics.name("samples"), topics.name("preference_pairs")
    records = await read_until(broker.bootstrap, samples_topic, WORKER_SAMPLES)
    pair_records = await read_until(broker.bootstrap, pairs_topic, 2)
    await asyncio.sleep(3.0)  # anything extra shows up now
    records = await read_topic(broker.bootstrap, samples_topic)
    pair_records = await read_topic(broker.bootstrap, pairs_topic)
    assert len(records) == WORKER_SAMPLES
    assert sorted(json.loads(r.value)["kind"] for r in pair_records) == ["correction", "replan"]
    samples = [decode_any(r.value) for r in records]

    # Batch quality over the live window's bounds counts what the live window counts.
    live = _live_quality(worker.web_port, WORKER_SAMPLES)["windows"]["5m"]
    done = _cli(worker_env, "quality", "--since", live["start"], "--until", live["end"], "--json")
    assert done.returncode == 0, done.stderr
    batch = json.loads(done.stdout)["windows"]["5m"]
    assert batch == live
    assert sum(f["total_samples"] for f in batch["families"].values()) == WORKER_SAMPLES

    # Straight onto the topics: a copy of a sample (exported once), a copy of a pair, and
    # three samples of their own at since - 1 ms (out), since (in) and until (out).
    until = datetime.now(UTC) + timedelta(seconds=1)
    first = int(since.timestamp() * 1000)
    duplicate = next(  # the clean run's: good, so sft keeps it (and meets its copy)
        r
        for r, s in zip(records, samples, strict=True)
        if (s["sample_family"], s["feedback"]["quality_label"]) == ("pipeline_outcome", "good")
    )
    await _send(broker.bootstrap, samples_topic, duplicate.key, duplicate.value, None)
    await _send(broker.bootstrap, pairs_topic, pair_records[0].key, pair_records[0].value, None)
    impact = next(s for s in samples if s["sample_family"] == "delta_impact")
    avro = codec_for("avro")
    for name, ts in (("before", first - 1), ("at_since", first), ("at_until", None)):
        moved = _moved(impact, name)
        stamp = int(until.timestamp() * 1000) if ts is None else ts
        await _send(
            broker.bootstrap, samples_topic, moved["sample_id"].encode(), avro.encode(moved), stamp
        )
    at_since = LearningSample.model_validate(_moved(impact, "at_since"))
    in_range = [LearningSample.model_validate(s) for s in samples] + [at_since]

    summaries: dict[str, str] = {}

    def export(
        fmt: str, out: str, *extra: str, start: datetime = since, end: datetime = until
    ) -> Path:
        path = tmp_path / out
        args = ("export", "--format", fmt, "--since", _iso(start), "--until", _iso(end))
        done = _cli(worker_env, *args, *extra, "--out", str(path))
        assert done.returncode == 0, done.stderr
        assert done.stderr.startswith("exported "), done.stderr
        summaries[out] = done.stderr.strip()
        return path

    def expected(fmt: str, keep: Any, chat: bool = False) -> list[dict[str, Any]]:
        if isinstance(keep, set):
            keep = [s for s in in_range if s.feedback.quality_label in keep]
        return list(RowMaker(fmt, chat=chat).rows(keep))

    def key(row: dict[str, Any]) -> str:
        return json.dumps(row, sort_keys=True)

    rows = {
        "sft": _lines(export("sft", "sft.jsonl")),
        "kto": _lines(export("kto", "kto.jsonl")),
        "mplp": _lines(export("mplp", "mplp.jsonl")),
        "dpo": _lines(export("dpo", "dpo.jsonl")),
        "reward": _lines(export("reward", "reward.jsonl")),
    }
    dataset = json.loads(export("training-dataset", "dataset.json").read_text())
    counts = {fmt: len(got) for fmt, got in rows.items()} | {
        "training-dataset": dataset["sample_count"]
    }
    assert counts == {"sft": 5, "kto": 8, "mplp": 10, "dpo": 2, "reward": 2, "training-dataset": 5}

    assert sorted(map(key, rows["sft"])) == sorted(map(key, expected("sft", {"good"})))
    assert summaries["sft.jsonl"] == (
        f"exported 5 sft rows to {tmp_path / 'sft.jsonl'}: read 11 records, skipped 6 "
        "(bad 0, duplicates 1, filtered out 5)"
    )
    assert sorted(map(key, rows["kto"])) == sorted(map(key, expected("kto", {"good", "poor"})))
    assert sorted(r["label"] for r in rows["kto"]) == [False] * 3 + [True] * 5
    assert sorted(map(key, rows["mplp"])) == sorted(key(s.to_dict()) for s in in_range)
    assert len(dataset["samples"]) == 5
    assert {s["metadata"]["quality"] for s in dataset["samples"]} == {"good"}
    assert sorted(map(key, dataset["samples"])) == sorted(
        map(key, expected("training-dataset", {"good"}))
    )
    pairs = [PreferencePair.model_validate_json(r.value) for r in pair_records]
    for fmt in ("dpo", "reward"):  # every sample has a score: every pair has a margin
        assert sorted(map(key, rows[fmt])) == sorted(map(key, expected(fmt, pairs)))
        assert all(isinstance(row["margin"], float) and row["margin"] > 0 for row in rows[fmt])
    # The replan's row: the rejected plan's intent, the approved plan over the rejected one.
    plans = {
        s.feedback.quality_label: s for s in in_range if s.sample_family == "intent_resolution"
    }
    good, poor = plans["good"].output, plans["poor"].output
    assert {
        "prompt": plans["poor"].input["intent_text"],
        "chosen": f"{good['plan_title']}\n{json.dumps(good['plan_structure'])}",
        "rejected": f"{poor['plan_title']}\n{json.dumps(poor['plan_structure'])}",
        "margin": plans["good"].meta.quality_score - plans["poor"].meta.quality_score,
    } in rows["dpo"]

    loaded = load_dataset("json", data_files=str(tmp_path / "dpo.jsonl"), split="train")
    assert loaded.column_names == ["prompt", "chosen", "rejected", "margin"]

    # Filters, Parquet and chat through the CLI.
    pipeline = _lines(
        export("mplp", "pipeline.jsonl", "--family", "pipeline_outcome", "--quality", "good,poor")
    )
    assert sorted(r["feedback"]["quality_label"] for r in pipeline) == ["good", "poor"]
    other = _lines(export("mplp", "other.jsonl", "--project", scenario["other"]))
    assert len(other) == 2
    parquet = load_dataset("parquet", data_files=str(export("sft", "sft.parquet")), split="train")
    assert sorted(map(key, parquet.to_list())) == sorted(map(key, rows["sft"]))
    chat = _lines(export("sft", "chat.jsonl", "--chat"))
    assert sorted(map(key, chat)) == sorted(map(key, expected("sft", {"good"}, chat=True)))
    everything = _lines(
        export("mplp", "all.jsonl", start=since - timedelta(days=1), end=until + timedelta(days=1))
    )
    assert len(everything) == 12  # the two samples just outside the range come back


async def test_the_consumer_api_reads_a_range_and_tails_live(broker, namespace):
    from learnstream.streams.io.consumer import ReadStats, aiter_samples, iter_samples

    topic = f"{namespace}samples"
    await create(broker.bootstrap, topic, 2)
    template = {
        "sample_family": "pipeline_outcome",
        "created_at": "2026-11-24T07:00:00Z",
        "input": {"objective": "ship"},
        "output": {"result": {"status": "completed"}},
        "feedback": {"source": "system", "type": "score", "quality_label": "good"},
        "meta": {
            "source_event_ids": [sample_id("event", "e")],
            "human_feedback_label": "not_reviewed",
            "producer": "test",
        },
    }

    def make(name: str) -> dict[str, Any]:
        return {**template, "sample_id": sample_id("pipeline_outcome", name)}

    json_codec = codec_for("json")
    await _send(broker.bootstrap, topic, b"k", json_codec.encode(make("old")), None)
    await _send(broker.bootstrap, topic, b"k", b"garbage", None)
    stats = ReadStats()
    ranged = await asyncio.to_thread(
        lambda: list(iter_samples(bootstrap=broker.bootstrap, topic=topic, stats=stats))
    )
    assert [s.sample_id for s in ranged] == [make("old")["sample_id"]]
    assert (stats.read, stats.bad, stats.progress.left) == (2, 1, 0)

    live = aiter_samples(follow=True, bootstrap=broker.bootstrap, topic=topic)
    first = asyncio.ensure_future(anext(live))
    await asyncio.sleep(2.0)  # the tail starts at the end: "old" is not read again
    await _send(broker.bootstrap, topic, b"k", json_codec.encode(make("new")), None)
    got = await asyncio.wait_for(first, 30)
    assert got.sample_id == make("new")["sample_id"]
    await live.aclose()


async def test_export_mplp_common_writes_valid_records_and_counts_those_left_out(
    broker, worker_env, namespace, tmp_path
):
    """`--format mplp-common` through the CLI: one record per sample of every family, each
    valid against the official common schema; a sample without a project is counted, not
    written."""
    from tests.unit.test_export_common import CASES, common_validator, run_end

    topic = TopicSettings(prefix=namespace).name("samples")
    await create(broker.bootstrap, topic, 1)
    # The cancelled Confirm shares its event, so its sample id, with the approval: left out.
    cases = [case for name, case in CASES.items() if name != "confirm_decision_cancelled"]
    unowned = run_end(project=None, event_id="exec-2-end")
    json_codec = codec_for("json")
    for sample in [unowned, *(sample for sample, _ in cases)]:
        value = json_codec.encode(sample.to_dict())
        await _send(broker.bootstrap, topic, sample.sample_id.encode(), value, None)
    out = tmp_path / "common.jsonl"
    done = _cli(worker_env, "export", "--format", "mplp-common", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == (
        f"exported {len(cases)} mplp-common rows to {out}: read {len(cases) + 1} records, "
        "skipped 0 (bad 0, duplicates 0, filtered out 0); left out 1 samples with no "
        "project_id or success rule"
    )
    rows = _lines(out)
    assert [e.message for row in rows for e in common_validator().iter_errors(row)] == []
    expected = [{"sample_id": sample.sample_id} | record for sample, record in cases]
    assert sorted(rows, key=lambda r: r["sample_id"]) == sorted(
        expected, key=lambda r: r["sample_id"]
    )
