"""A second worker joins mid-stream and later leaves: nothing is lost, no partition has two owners.

Two ``learnstream worker`` processes share one consumer group (same ``LEARNSTREAM_APP_ID``,
the ``start_worker`` fixture gives every worker the test's ``worker_env``). While a paced
workload streams in, worker 1 joins, takes its share, and leaves again (SIGTERM). At the end
every expected sample is there; duplicates are allowed only as identical ids.

"One owner per partition" is read from the workers' logs: aiokafka logs "Setting newly
assigned partitions" and "Revoking previously assigned partitions" (Faust renders the set as a
``| topic | {0-3} |`` table) with a timestamp, and "LeaveGroup request succeeded" on a clean
stop. A worker owns a partition from its assignment line to its next revocation (or leave)
line. For every input topic, the two workers' sets must be disjoint whenever both own
something, up to ``LEARNSTREAM_REBALANCE_OVERLAP_S`` (default 1 s: one heartbeat interval,
the time an evicted owner takes to notice; with the eager protocol aiokafka uses the measured
handovers do not overlap at all). Also: while both were up, each owned a non-empty share and
together they covered every partition, with the same partitions of every co-partitioned input
topic (the join depends on it); after the leave, worker 0 owns everything again.

Sizes: ``LEARNSTREAM_REBALANCE_EVENTS`` (default 9,000) at ``LEARNSTREAM_REBALANCE_RATE``
(default 300/s), so a worker start (~10 s on a busy 2-core box) and the leave both fall inside
the ~30 s stream.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import aiohttp
import orjson
import pytest

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.reader import read_topic
from learnstream.streams.io.topics import INPUTS
from learnstream.streams.io.worker_process import WorkerProcess
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.sim.workload import Workload, build_workload
from tests.reliability.harness import (
    identical_but_created_at,
    log_digest,
    publish_paced,
    wait_delivered,
)

# On both brokers. The embedded broker once lost samples that need plan state after a
# handover: Faust dropped the plan snapshot right after the committed offset (RELIABILITY.md,
# "Faust's offsets are its acks"); streams/offsets/progress.py re-reads such holes now.
pytestmark = [pytest.mark.reliability, pytest.mark.timeout(900)]
EVENTS = int(os.environ.get("LEARNSTREAM_REBALANCE_EVENTS", "9000"))
RATE = float(os.environ.get("LEARNSTREAM_REBALANCE_RATE", "300"))
OVERLAP = timedelta(seconds=float(os.environ.get("LEARNSTREAM_REBALANCE_OVERLAP_S", "1.0")))
DRAIN = float(os.environ.get("LEARNSTREAM_REBALANCE_DRAIN_S", "300"))
PARTITIONS = 4

_STAMPED = re.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \[\d+\] \[\w+\] (?P<msg>.*)$"
)
_ROW = re.compile(r"^\|\s*(?P<topic>\S+)\s*\|\s*\{(?P<parts>[^}]*)\}\s*\|")
_END = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Held:
    """What one worker owned, from an assignment to the next revocation, leave or restart."""

    worker: str
    start: datetime
    end: datetime  # _END: still owned when the log ends
    partitions: dict[str, frozenset[int]]  # topic -> partitions

    def on(self, topic: str) -> frozenset[int]:
        """Return the partitions of ``topic`` owned in this interval."""
        return self.partitions.get(topic, frozenset())

    def __str__(self) -> str:
        end = "…" if self.end == _END else f"{self.end:%H:%M:%S.%f}"[:-3]
        shares = {t.rsplit(".", 1)[-1]: sorted(p) for t, p in self.partitions.items()}
        return f"{self.worker} {self.start:%H:%M:%S.%f}"[:-3] + f"–{end} {shares}"


def _partition_set(text: str) -> frozenset[int]:
    """Parse Faust's ``0-1, 3`` partition ranges."""
    parts: set[int] = set()
    for item in filter(None, (s.strip() for s in text.split(","))):
        low, _, high = item.partition("-")
        parts.update(range(int(low), int(high or low) + 1))
    return frozenset(parts)


def _table(lines: list[str], start: int) -> dict[str, frozenset[int]]:
    """Read the ``| topic | {…} |`` rows of the table that starts at ``lines[start]``."""
    rows: dict[str, frozenset[int]] = {}
    for line in lines[start:]:
        if match := _ROW.match(line):
            rows[match["topic"]] = _partition_set(match["parts"])
        elif line.startswith("+") and "for group" in line:
            break
    return rows


def _stamp(text: str) -> datetime:
    # Local time of this machine, only ever compared with other worker logs written here:
    # tagged UTC only to compare with _END.
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)


def ownership(worker: str, log: str, topics: set[str]) -> list[Held]:
    """Return the intervals in which ``worker`` owned partitions of ``topics``, from its log."""
    lines, held = log.splitlines(), []
    current: tuple[datetime, dict[str, frozenset[int]]] | None = None
    last: datetime | None = None

    def release(at: datetime | None) -> None:
        nonlocal current
        if current is not None and at is not None and any(current[1].values()):
            held.append(Held(worker, current[0], at, current[1]))
        current = None

    for i, line in enumerate(lines):
        if line.startswith("=== start "):  # WorkerProcess restarted it: the old one is gone
            release(last)
            continue
        match = _STAMPED.match(line)
        if not match:
            continue
        last, msg = _stamp(match["ts"]), match["msg"]
        if msg.startswith("Setting newly assigned partitions"):
            release(last)
            table = {} if "set()" in msg else _table(lines, i + 1)
            current = (last, {t: p for t, p in table.items() if t in topics})
        elif msg.startswith(("Revoking previously assigned partitions", "LeaveGroup request")):
            release(last)
    release(_END)
    return held


def double_owners(a: list[Held], b: list[Held], topics: set[str]) -> list[str]:
    """Return every overlap (longer than OVERLAP) in which two workers own one partition."""
    problems = []
    for x in a:
        for y in b:
            if min(x.end, y.end) - max(x.start, y.start) <= OVERLAP:
                continue
            for topic in sorted(topics):
                if common := x.on(topic) & y.on(topic):
                    problems.append(f"{topic} {sorted(common)}: [{x}] and [{y}]")
    return problems


def closest_handover(a: list[Held], b: list[Held], topics: set[str]) -> float | None:
    """Return the shortest gap (s) between one worker releasing a partition and the other
    taking it (negative = overlap), or None if no partition changed hands."""
    gaps = [
        (max(x.start, y.start) - min(x.end, y.end)).total_seconds()
        for x in a
        for y in b
        if any(x.on(t) & y.on(t) for t in topics)
    ]
    return min(gaps, default=None)


async def events_consumed(worker: WorkerProcess) -> float:
    """Return ``learnstream_events_total`` (all sources) from the worker's /metrics."""
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{worker.web_port}/metrics"
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=10)) as response:
            text = await response.text()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("learnstream_events_total{")
    )


def _owner(held: list[Held], topic: str, partition: int, at: datetime) -> str:
    owners = [h.worker for h in held if h.start <= at < h.end and partition in h.on(topic)]
    return "+".join(owners) or "nobody"


async def whereabouts(
    bootstrap: str,
    workload: Workload,
    missing: dict[str, tuple[str, str]],
    held: list[Held],
    topics: TopicSettings,
    limit: int = 10,
) -> list[str]:
    """Say, for the first missing samples, where their event and its plan were and who owned
    that partition when they were published (a failure report, not a check)."""
    families = {family for family, _ in missing.values()}
    wanted: dict[str, tuple[str, str]] = {}  # event id -> (sample id, plan id)
    for record in workload.records:
        event_id = orjson.loads(record.value).get("event_id")
        for family in families if event_id else ():
            if (sid := sample_id(family, event_id)) in missing:
                wanted[event_id] = (sid, record.key.decode())
    plans = {plan_id for _, plan_id in wanted.values()}
    seen: dict[str, list[str]] = {}
    for field in INPUTS:
        name = topics.name(field)
        for r in await read_topic(bootstrap, name):
            key = r.key.decode() if r.key else ""
            value = orjson.loads(r.value) if r.value else {}
            ident = value.get("event_id") if field != "plans" else key
            if ident in wanted or (field == "plans" and key in plans):
                at = datetime.fromtimestamp(r.timestamp / 1000, UTC)
                at = at.astimezone().replace(tzinfo=UTC)  # logs are local time tagged UTC
                seen.setdefault(ident, []).append(
                    f"{field}[{r.partition}]@{r.offset} {at:%H:%M:%S.%f}"[:-3]
                    + f" owner={_owner(held, name, r.partition, at)}"
                )
    lines = []
    for event_id, (sid, plan_id) in list(wanted.items())[:limit]:
        lines.append(
            f"{missing[sid]} event {seen.get(event_id)} plan {plan_id[:8]} {seen.get(plan_id)}"
        )
    return lines


async def test_worker_joins_and_leaves_mid_stream(broker, start_worker, namespace, tmp_path):
    topics = TopicSettings(prefix=namespace)
    inputs = {topics.name(field) for field in INPUTS}
    workload = build_workload(EVENTS, seed=29)
    options = {"LEARNSTREAM_JOIN__GRACE": "1h", "LEARNSTREAM_SAMPLE_FORMAT": "avro"}
    first = start_worker(**options)
    duration = EVENTS / RATE
    t0 = time.monotonic()
    publishing = asyncio.create_task(
        publish_paced(broker.bootstrap, topics, workload.records, RATE, broker.embedded)
    )
    await asyncio.sleep(max(2.0, 0.15 * duration))
    # Same app id (consumer group) as the first worker; its own data dir, like another host.
    second = await asyncio.to_thread(
        start_worker, LEARNSTREAM_DATA_DIR=str(tmp_path / "data-second"), **options
    )
    joined = time.monotonic() - t0
    await asyncio.sleep(max(5.0, 0.6 * duration - (time.monotonic() - t0)))
    consumed_by_second = await events_consumed(second)
    await asyncio.to_thread(second.stop)
    left = time.monotonic() - t0
    await publishing
    published = time.monotonic() - t0
    verdict, got, waited = await wait_delivered(
        broker.bootstrap, topics, workload.expected, max_wait=DRAIN
    )
    held = {
        name: ownership(name, proc.log(), inputs)
        for name, proc in (("worker0", first), ("worker1", second))
    }
    overlap = closest_handover(held["worker0"], held["worker1"], inputs)
    print(
        f"\nrebalance on {broker.kind}: {len(workload.records)} events, 1 join + 1 leave "
        f"(worker 1 ready at {joined:.1f}s, left at {left:.1f}s, stream ended at "
        f"{published:.1f}s; it consumed {consumed_by_second:.0f} events), "
        f"{len(held['worker0'])}+{len(held['worker1'])} assignments, closest handover "
        f"{'n/a' if overlap is None else f'{overlap:+.2f}s'}, drained {waited:.1f}s after the "
        f"last record: {verdict.report()}"
    )
    for interval in sorted(held["worker0"] + held["worker1"], key=lambda h: h.start):
        print(f"  {interval}")
    if verdict.missing:
        every = held["worker0"] + held["worker1"]
        for line in await whereabouts(broker.bootstrap, workload, verdict.missing, every, topics):
            print(f"  missing: {line}")
    digests = (
        f"{name}:\n{log_digest(proc.log())}"
        for name, proc in (("worker0", first), ("worker1", second))
    )
    assert verdict.delivered, "\n".join((verdict.report(), *digests))
    assert identical_but_created_at(got.raw) == []
    assert got.dlq_reasons == []
    assert consumed_by_second > 0, "the second worker never processed anything"

    problems = double_owners(held["worker0"], held["worker1"], inputs)
    assert problems == [], "partitions with two owners at once:\n" + "\n".join(problems)
    everything = frozenset(range(PARTITIONS))
    shared = [
        (x, y)
        for x in held["worker0"]
        for y in held["worker1"]
        if min(x.end, y.end) > max(x.start, y.start)
    ]
    assert shared, f"the workers never owned partitions at the same time: {held}"
    for x, y in shared:
        for topic in inputs:
            assert x.on(topic), f"{topic}: worker 0 had no share while both were up: {x}"
            assert y.on(topic), f"{topic}: worker 1 had no share while both were up: {y}"
            assert x.on(topic) | y.on(topic) == everything, f"{topic} not covered: {x} / {y}"
        for h in (x, y):  # co-partitioned inputs: the same partitions of every input topic
            assert len({h.on(topic) for topic in inputs}) == 1, f"not co-partitioned: {h}"
    last = max(held["worker0"], key=lambda h: h.start)
    assert last.end == _END, f"worker 0 lost its partitions at the end: {last}"
    assert all(last.on(topic) == everything for topic in inputs), f"after the leave: {last}"
