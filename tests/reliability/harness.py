"""Publish a known workload, inject faults, read everything back, verify."""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.io.publisher import RuntimePublisher
from learnstream.streams.io.reader import read_topic
from learnstream.streams.io.topics import MAX_MESSAGE_BYTES
from learnstream.streams.samples import ids
from learnstream.streams.samples.sample import FAMILIES
from learnstream.streams.sim.simulate import Simulator
from learnstream.streams.sim.workload import Record, Verdict, Workload, verify

__all__ = [
    "Collected",
    "add_corrected_runs",
    "assert_delivered",
    "collect",
    "identical_but_created_at",
    "log_digest",
    "publish_paced",
    "where_missing_came_from",
    "wait_delivered",
    "where_samples_sit",
]

#: Worker log lines that tell where transactions and offsets went (for a failed run's report).
_TELLING = re.compile(
    r"=== start|transactional producers|Commit invoked|Exception in|[Ff]enced|Discarded commit"
    r"|Revoking previously|Executing _on_partitions_assigned|Ignoring missing|WARNING|ERROR"
    # what Progress and the stall watch read again (streams/offsets/progress.py,
    # streams/observe/stall.py)
    r"|came before|not in the log|re-read started|not handed over|hold no records"
)


def add_corrected_runs(workload: Workload, every: int, seed: int = 3) -> list[int]:
    """Put a corrected, executed plan after every ``every`` records; return where each
    correction sits in ``workload.records`` (publish it with ``flushed_after``).

    Each: plan, approval at t, correction at t+1ms, execute at t+2ms and t+3ms. Under kills,
    a correction lands between a decision and the kill, and the worker reads a correction and
    an execute of one plan from two topics in whatever order; by event time the approval
    counts 0 corrections and the execute is "completed after a delta" (acceptable).

    The correction must be on the broker before its execute is published: the worker counts
    the corrections the broker held when it read the execute (streams/join/watermark.py), and
    Kafka orders records within a partition only. Sent back to back, up to 286 of 2,000
    such pairs reached Apache Kafka execute first (``benchmarks/ordering.py``); one of them
    failed a CI run.
    """
    sim, records = Simulator(seed, pii_ratio=0.3), list(workload.records)
    workload.records.clear()
    start, corrections = datetime.now(UTC), []
    for i, record in enumerate(records):
        workload.records.append(record)
        if i % every == every - 1:
            corrections.append(_corrected_run(workload, sim, start + timedelta(milliseconds=4 * i)))
    return corrections


def _corrected_run(w: Workload, sim: Simulator, when: datetime) -> int:
    """Add one corrected, executed plan; return where its correction sits."""
    snap = sim.plan(when)
    pid = snap["plan"]["plan_id"]
    decision = sim.decision(snap, True, when)
    delta = sim.delta(snap, when + timedelta(milliseconds=1))
    done = sim.stage(snap, "completed", when + timedelta(milliseconds=3))
    w.expect("confirm_decision", "good", decision)
    w.expect("intent_resolution", "good", decision)
    w.expect("error_correction", "acceptable", delta)
    w.expect("pipeline_outcome", "acceptable", done)
    w.add("plans", snap, pid)
    w.add("plan_approved", decision, pid)
    w.add("delta_intents", delta, pid)
    correction = len(w.records) - 1
    w.add("pipeline_stage", sim.stage(snap, "started", when + timedelta(milliseconds=2)), pid)
    w.add("pipeline_stage", done, pid)
    return correction


async def publish_paced(
    bootstrap: str,
    topics: TopicSettings,
    records: list[Record],
    rate: float,
    embedded: bool,
    flushed_after: Collection[int] = (),
) -> float:
    """Publish ``records`` at about ``rate`` per second; return the seconds it took.

    After each record whose index is in ``flushed_after``, wait until it is on the broker
    before publishing the next (``RuntimePublisher.flush``).
    """
    started, flushed = time.monotonic(), set(flushed_after)
    async with RuntimePublisher(
        bootstrap,
        topics,
        buffer_size=len(records) + 1,
        one_record_per_batch=embedded,
        request_timeout_ms=120_000,
        max_request_size=MAX_MESSAGE_BYTES,
    ) as pub:
        for i, record in enumerate(records):
            assert pub.publish_raw(record.topic, record.key, record.value)
            if i in flushed:
                await pub.flush()
            if i % 100 == 99:
                await asyncio.sleep(max(0.0, started + (i + 1) / rate - time.monotonic()))
    assert pub.stats.sent == len(records), pub.stats
    return time.monotonic() - started


@dataclass(frozen=True)
class Collected:
    """Samples (decoded) and dead-letter reasons read back from the broker."""

    samples: list[dict]
    raw: dict[str, list[bytes]]
    dlq_reasons: list[str]
    #: sample id -> (partition, offset, broker timestamp in ms) of each copy read
    places: dict[str, list[tuple[int, int, int]]]


async def collect(
    bootstrap: str, topics: TopicSettings, isolation_level: str = "read_uncommitted"
) -> Collected:
    """Read the samples and DLQ topics from the beginning."""
    records = await read_topic(
        bootstrap, topics.name("samples"), isolation_level=isolation_level, max_wait=120
    )
    raw: dict[str, list[bytes]] = {}
    places: dict[str, list[tuple[int, int, int]]] = {}
    samples = []
    for record in records:
        sample = decode_any(record.value)
        samples.append(sample)
        raw.setdefault(sample["sample_id"], []).append(record.value)
        places.setdefault(sample["sample_id"], []).append(
            (record.partition, record.offset, record.timestamp)
        )
    dead = await read_topic(bootstrap, topics.name("dlq"), isolation_level=isolation_level)
    return Collected(samples, raw, [dict(r.headers)["reason"].decode() for r in dead], places)


async def wait_delivered(
    bootstrap: str,
    topics: TopicSettings,
    expected: dict,
    max_wait: float,
    isolation_level: str = "read_uncommitted",
) -> tuple[Verdict, Collected, float]:
    """Poll until every expected sample is out (or ``max_wait``); return verdict and time.

    Only missing samples are waited for: a sample out with a wrong label, or one not
    expected, stays so however long the worker runs.
    """
    started = time.monotonic()
    while True:
        got = await collect(bootstrap, topics, isolation_level)
        verdict = verify(expected, got.samples)
        if not verdict.missing or time.monotonic() - started > max_wait:
            return verdict, got, time.monotonic() - started
        await asyncio.sleep(3.0)


def identical_but_created_at(raw: dict[str, list[bytes]]) -> list[str]:
    """Return the ids whose duplicates differ in anything but ``created_at``."""
    differing = []
    for sample_id, copies in raw.items():
        bodies = [{**decode_any(c), "created_at": None} for c in copies]
        if any(b != bodies[0] for b in bodies[1:]):
            differing.append(sample_id)
    return differing


def log_digest(log: str, limit: int = 200) -> str:
    """Return the telling lines of a worker log, the last ``limit`` of them."""
    lines = [line[:240] for line in log.splitlines() if _TELLING.search(line)]
    return "\n".join(lines[-limit:])


def where_samples_sit(got: Collected, sample_ids: Collection[str], faults: list[int]) -> str:
    """Say where the copies of some samples sit (duplicated or wrong), next to the times
    the faults began (ms), with the plan each belongs to."""
    families = {s["sample_id"]: s["sample_family"] for s in got.samples}
    plans = {s["sample_id"]: s.get("meta", {}).get("plan_id") for s in got.samples}
    lines = [f"faults at (ms): {faults}"]
    for sample_id in sorted(sample_ids)[:10]:
        copies = ", ".join(f"p{p}@{o} t={t}" for p, o, t in got.places[sample_id])
        lines.append(f"  {sample_id} {families[sample_id]} plan {plans[sample_id]}: {copies}")
    return "\n".join(lines)


#: The worker's gauges and counters a report of missing samples shows (name prefixes).
_TOLD_METRICS = (
    "learnstream_pending_joins",
    "learnstream_redelivered",
    "learnstream_join_waiting_corrections",
    "learnstream_consent_lag_records",
    "learnstream_consent_fence",
    "learnstream_join_misses",
    "learnstream_rebalances",
)


async def where_missing_came_from(
    bootstrap: str,
    topics: TopicSettings,
    group: str,
    missing: Collection[str],
    inputs: Collection[str],
    metrics_url: str | None = None,
) -> str:
    """Say, per input partition, where the records of the ``missing`` sample ids sit, next
    to the worker group's committed offset and the partition's end: a record below its
    committed offset was passed over (lost); one at or above it was never committed (the
    worker is stuck on it, or still working). ``inputs`` are TopicSettings fields. Then the
    worker's join and wait gauges, if ``metrics_url`` answers."""
    missing = set(missing)
    found: dict[tuple[str, int], list[int]] = {}
    for field_name in sorted(set(inputs)):
        name = topics.name(field_name)
        for record in await read_topic(bootstrap, name, max_wait=30):
            try:
                event_id = orjson.loads(record.value).get("event_id")
            except (orjson.JSONDecodeError, AttributeError, TypeError):
                continue
            if event_id and any(ids.sample_id(f, event_id) in missing for f in FAMILIES):
                found.setdefault((name, record.partition), []).append(record.offset)
    tps = [TopicPartition(name, p) for name, p in found]
    # the group's offsets, asked as a consumer that never joins it (no rebalance)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        committed = {tp: await consumer.committed(tp) for tp in tps}
        ends = await consumer.end_offsets(tps) if tps else {}
    finally:
        await consumer.stop()
    lines = [f"missing samples' input records ({sum(map(len, found.values()))} found):"]
    for (name, p), offsets in sorted(found.items()):
        tp = TopicPartition(name, p)
        mark = committed.get(tp)
        passed = sum(1 for o in offsets if mark is not None and o < mark)
        lines.append(
            f"  {name}[{p}] offsets {min(offsets)}..{max(offsets)} ({len(offsets)}): "
            f"committed {mark}, end {ends.get(tp)}, {passed} below the commit"
        )
    if metrics_url is not None:
        try:
            text = await asyncio.to_thread(_read_url, metrics_url)
            lines += [
                f"  {line}"
                for line in text.splitlines()
                if line.startswith(_TOLD_METRICS)
                and "_bucket" not in line
                and "_created" not in line
            ]
        except OSError as exc:
            lines.append(f"  (no metrics: {exc!r})")
    return "\n".join(lines)


def _read_url(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our worker
        return response.read().decode()


async def assert_delivered(
    bootstrap: str,
    topics: TopicSettings,
    expected: dict,
    guarantee: str,
    *,
    max_wait: float,
    headline: Callable[[float], str],
    faults: list[int],
    logs: Callable[[], list[str]],
    explain: Callable[[Collected, Verdict], str] | None = None,
    group: str | None = None,
    inputs: Collection[str] = (),
    metrics_url: str | None = None,
) -> Collected:
    """Wait for every expected sample and check what a fault run must give; return it.

    Prints ``headline(seconds drained after the last record)`` with the verdict; when
    something is missing, wrong or duplicated, also where the copies sit, the workers' logs'
    telling lines (``logs()``) and ``explain``'s report; when something is missing and
    ``group`` is given, where the missing samples' ``inputs`` records sit against the group's
    commits (:func:`where_missing_came_from`), in the assertion's first line too.
    Asserts: every expected sample out with its label, every copy of a sample identical (a
    replay makes the same sample), nothing dead-lettered, and under exactly_once a
    read_committed reader sees each sample once.
    """
    isolation = "read_committed" if guarantee == "exactly_once" else "read_uncommitted"
    verdict, got, waited = await wait_delivered(
        bootstrap, topics, expected, max_wait=max_wait, isolation_level=isolation
    )
    print(f"\n{headline(waited)}: {verdict.report()}")
    if verdict.duplicated or verdict.wrong or verdict.missing:
        print(where_samples_sit(got, {*verdict.duplicated, *verdict.wrong}, faults))
        for log in logs():
            print(log_digest(log))
        if explain is not None and (verdict.duplicated or verdict.wrong):
            try:  # a report only: it must never turn a verdict into another failure
                print(explain(got, verdict))
            except Exception as exc:
                print(f"(no further report: {exc!r})")
    told = ""
    if verdict.missing and group is not None:
        try:  # a report only, as above
            told = await where_missing_came_from(
                bootstrap, topics, group, verdict.missing, inputs, metrics_url
            )
            print(told)
        except Exception as exc:
            told = f"(no report of where the missing came from: {exc!r})"
    assert verdict.delivered, " | ".join([verdict.report(), *told.splitlines()])
    assert identical_but_created_at(got.raw) == []
    assert got.dlq_reasons == []
    if guarantee == "exactly_once":
        assert verdict.duplicated == {}, verdict.report()
    return got
