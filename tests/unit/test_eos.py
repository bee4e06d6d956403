"""Offsets commit what was processed, between records, after the send buffer drained: the
patches of agents/seams/faust_compat.py, exercised on Faust's own App, Consumer, ProducerBuffer
and TransactionManager. Only the network is replaced: the driver's offset commit, the
producer's flush and transaction commit, and the broker's assignment."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import faust
import mode
import pytest
from faust.types import TP

from learnstream.agents.seams.faust_compat import (
    DeliverAll,
    buffer_idle,
    deliver_every_record,
    guard_commits,
    seek_on_consumer_thread,
    transactional_id,
    wait_until_idle,
)
from learnstream.streams.offsets.progress import Progress
from tests.support.apps import close_consumer_loop
from tests.support.offsets import FakeEnds

TP0 = TP("plans", 0)


def new_app(guarantee: str = "at_least_once") -> faust.App:
    """Return a real Faust app that never connects: a port nobody listens on."""
    return faust.App(
        "eos-test", broker="kafka://127.0.0.1:9", store="memory://", processing_guarantee=guarantee
    )


@pytest.fixture
def apps() -> Iterator[list[faust.App]]:
    """Collect the apps a test makes; close the thread loops their consumers made."""
    made: list[faust.App] = []
    yield made
    for app in made:
        close_consumer_loop(app)


class Network:
    """What leaves the process, in the order it happens; stands in for the broker."""

    def __init__(self, app: faust.App, assigned: set[TP]) -> None:
        self.log: list[Any] = []
        consumer: Any = app.consumer
        consumer._commit = self.commit_offsets  # the driver's call into aiokafka
        consumer.assignment = lambda: set(assigned)
        producer: Any = app.producer
        producer.flush = self.flush
        producer.commit_transactions = self.commit_transactions
        app.assignor._topic_groups = {tp.topic: 2 for tp in assigned}  # set by a rebalance

    async def commit_offsets(self, offsets: Mapping[TP, int]) -> bool:
        self.log.append(("commit", dict(offsets)))
        return True

    async def flush(self) -> None:
        self.log.append("flush")

    async def commit_transactions(
        self, by_id: Mapping[str, Mapping[TP, int]], group_id: str, start_new_transaction: bool
    ) -> None:
        self.log.append(("transaction", {k: dict(v) for k, v in by_id.items()}, group_id))


async def slow_publisher(app: faust.App, log: list[Any], delay: float) -> Any:
    """Start the app's real ProducerBuffer with a publish step that takes ``delay``."""
    buffer: Any = app.producer.buffer

    async def send_pending(fut: Any) -> None:
        await asyncio.sleep(delay)  # popped from the queue, not yet handed to the producer
        log.append(f"sent {fut}")

    buffer._send_pending = send_pending  # bound by _handle_pending when it starts
    await buffer.start()
    return buffer


async def processed(progress: Progress, tp: TP, offsets: range) -> None:
    for offset in offsets:
        async with progress.record(tp, offset) as fresh:
            assert fresh


async def test_a_commit_waits_until_every_buffered_record_is_sent(apps: list[faust.App]) -> None:
    """at_least_once: Faust's own flush comes before the buffer drained; ours after."""
    app = new_app()
    apps.append(app)
    network, progress = Network(app, {TP0}), Progress(gated=False)
    guard_commits(app, progress)
    await processed(progress, TP0, range(3))
    buffer = await slow_publisher(app, network.log, delay=0.01)
    for record in ("a", "b", "c"):
        buffer.put(record)
    await asyncio.sleep(0)  # the task pops "a": the queue alone would look almost drained
    assert await app.consumer.force_commit()
    assert network.log[-5:] == ["sent a", "sent b", "sent c", "flush", ("commit", {TP0: 3})]
    await buffer.stop()


async def test_a_transaction_commits_after_the_buffer_under_the_id_samples_use(
    apps: list[faust.App],
) -> None:
    app = new_app("exactly_once")
    apps.append(app)
    app.in_worker = True  # what faust.Worker does: transactions on
    network, progress = Network(app, {TP("plans", 3)}), Progress(gated=True)
    guard_commits(app, progress)
    await processed(progress, TP("plans", 3), range(10, 12))
    buffer = await slow_publisher(app, network.log, delay=0.01)
    buffer.put("changelog")
    await asyncio.sleep(0)
    assert await app.consumer.force_commit()
    txn = transactional_id(app, "plans", 3)
    assert txn == "eos-test-2-3"  # app id, the topic's assignor group, the partition
    assert network.log == [
        "sent changelog",
        ("transaction", {txn: {TP("plans", 3): 12}}, "eos-test"),
    ]
    await buffer.stop()


async def test_a_transaction_that_leaves_processed_records_behind_is_reported(
    apps: list[faust.App], caplog: pytest.LogCaptureFixture
) -> None:
    """Faust drops a partition it does not see assigned from a commit, but commits the
    transaction that partition's outputs share: those outputs would come out twice."""
    app = new_app("exactly_once")
    apps.append(app)
    app.in_worker = True
    plans, decisions = TP("plans", 3), TP("decisions", 3)
    network, progress = Network(app, {plans, decisions}), Progress(gated=True)
    guard_commits(app, progress)
    buffer = await slow_publisher(app, network.log, delay=0)  # idle: the commit need not wait
    await processed(progress, plans, range(5))
    await processed(progress, decisions, range(7))
    consumer: Any = app.consumer
    consumer.assignment = lambda: {plans}  # decisions[3] looks revoked to Faust
    with caplog.at_level("WARNING", logger="learnstream"):
        assert await consumer.force_commit()
    await buffer.stop()
    assert "send buffer busy" not in caplog.text
    (txn,) = network.log[-1][1]
    assert network.log[-1][1][txn] == {plans: 5}
    assert "a commit leaves processed records behind: decisions[3] at None of 7" in caplog.text
    assert "plans[3] at" not in caplog.text


async def test_a_processed_topic_no_assignor_group_knows_does_not_break_the_commit(
    apps: list[faust.App], caplog: pytest.LogCaptureFixture
) -> None:
    """The commit-time check looks up every processed partition's transaction: one whose
    topic the assignor has no group for is left out of the check, and the commit goes on."""
    app = new_app("exactly_once")
    apps.append(app)
    app.in_worker = True
    plans, stray = TP("plans", 3), TP("not-a-subscribed-topic", 0)
    network, progress = Network(app, {plans}), Progress(gated=True)
    guard_commits(app, progress)
    buffer = await slow_publisher(app, network.log, delay=0)  # idle: the commit need not wait
    await processed(progress, plans, range(5))
    await processed(progress, stray, range(3))
    with caplog.at_level("WARNING", logger="learnstream"):
        assert await app.consumer.force_commit()
    await buffer.stop()
    assert "send buffer busy" not in caplog.text
    (txn,) = network.log[-1][1]
    assert network.log[-1][1][txn] == {plans: 5}
    assert "leaves processed records behind" not in caplog.text


class Fetching:
    """Stands in for the aiokafka consumer a worker's consumer thread owns."""

    def __init__(self, committed: dict[TP, int]) -> None:
        self.committed_offsets, self.seeks = committed, []

    async def committed(self, tp: Any) -> int | None:
        return self.committed_offsets.get(TP(tp.topic, tp.partition))

    async def beginning_offsets(self, tps: list[Any]) -> dict[Any, int]:
        return {tp: 3 for tp in tps}

    def seek(self, tp: Any, offset: int) -> None:
        self.seeks.append((tp, offset))


def on_fake_thread(app: faust.App, committed: dict[TP, int]) -> tuple[Fetching, list[Any]]:
    """Give ``app``'s consumer thread a ``Fetching``; return it and the calls queued there."""
    thread, calls, fetching = app.consumer._thread, [], Fetching(committed)  # type: ignore[attr-defined]

    async def call_thread(fun: Any, *args: Any) -> Any:
        calls.append(fun)
        return await fun(*args)

    thread._consumer, thread.call_thread = fetching, call_thread
    return fetching, calls


async def test_progress_seeks_on_the_consumer_thread(apps: list[faust.App]) -> None:
    """Faust's seek touches aiokafka's fetcher from the agents' thread: ours is queued to
    the consumer's own thread, where it cannot race a drain of fetched records."""
    app = new_app()
    apps.append(app)
    fetching, calls = on_fake_thread(app, {})
    progress = Progress(gated=False)
    guard_commits(app, progress)
    assert progress.seek is not None
    await progress.seek(TP0, 41)
    assert len(calls) == 1  # queued to the consumer's thread...
    assert fetching.seeks == [(TP0, 41)]  # ...and run there
    await seek_on_consumer_thread(app.consumer)(TP0, 7)
    assert fetching.seeks[-1] == (TP0, 7)
    assert len(calls) == 2


async def test_where_records_start_is_asked_on_the_consumer_thread(apps: list[faust.App]) -> None:
    """Progress asks the broker where a partition starts (Faust's own committed offsets
    come too late for a new worker): the group's committed offset, else the log start."""
    app = new_app()
    apps.append(app)
    fetching, calls = on_fake_thread(app, {TP0: 41})
    progress = Progress(gated=False)
    guard_commits(app, progress)
    assert progress.starts_of is not None
    assert await progress.starts_of([TP0, TP("plans", 1)]) == {TP0: 41, TP("plans", 1): 3}
    assert len(calls) == 1  # both asked at once, on the consumer's thread (1: nothing committed)
    assert not await progress.admit(TP0, 43)  # 41 and 42 never came: read from 41 again
    assert fetching.seeks == [(TP0, 41)]


async def test_a_gated_commit_runs_between_records(apps: list[faust.App]) -> None:
    """exactly_once: the commit waits for the record in progress and holds the next one."""
    app = new_app("exactly_once")
    apps.append(app)
    app.in_worker = True
    network, progress = Network(app, {TP0}), Progress(gated=True)
    guard_commits(app, progress)
    buffer = await slow_publisher(app, network.log, delay=0)
    release = asyncio.Event()

    async def agent(offset: int, wait: asyncio.Event | None) -> None:
        async with progress.record(TP0, offset):
            network.log.append(f"start {offset}")
            if wait is not None:
                await wait.wait()
            network.log.append(f"done {offset}")

    first = asyncio.create_task(agent(0, release))
    await asyncio.sleep(0)
    committing = asyncio.create_task(app.consumer.force_commit())
    await asyncio.sleep(0)
    second = asyncio.create_task(agent(1, None))
    await asyncio.sleep(0.02)
    assert network.log == ["start 0"]
    release.set()
    await asyncio.gather(first, committing, second)
    txn = transactional_id(app, "plans", 0)
    assert network.log == ["start 0", "done 0", ("transaction", {txn: {TP0: 1}}, "eos-test"),
                           "start 1", "done 1"]  # fmt: skip
    await buffer.stop()


def test_guarding_twice_wraps_once(apps: list[faust.App]) -> None:
    app = new_app()
    apps.append(app)
    guard_commits(app, Progress(gated=False))
    consumer: Any = app.consumer
    installed = (consumer._commit, consumer.force_commit, consumer._new_offset)
    guard_commits(app, Progress(gated=False))
    assert (consumer._commit, consumer.force_commit, consumer._new_offset) == installed


def test_faust_commits_what_was_processed_not_its_acks(apps: list[faust.App]) -> None:
    """Faust's own offset choice, without and with the patch, over the acks a restarted
    worker leaves: a partition with a repeated offset and one with a hole."""
    repeated, holed = TP("plan_approved", 1), TP("plans", 1)
    acks = {repeated: [124, 125, 125, 126, 126, 127], holed: [188, 190, 191, 192]}
    committed = {repeated: 125, holed: 188}

    def consumer() -> Any:
        app = new_app()
        apps.append(app)
        made: Any = app.consumer
        for tp, offsets in acks.items():
            made._acked[tp] = list(offsets)
            made._acked_index[tp] = set(offsets)
        made._committed_offset.update(committed)
        return app, made

    _, plain = consumer()
    tps = list(plain._filter_tps_with_pending_acks())
    # Faust alone: one past the repeat; past 188 only, while 189..192 were processed
    assert plain._filter_committable_offsets(tps) == {repeated: 126, holed: 189}

    app, fixed = consumer()
    progress = Progress(gated=False)
    guard_commits(app, progress)

    async def process() -> None:
        for tp, last in ((repeated, 127), (holed, 192)):
            await processed(progress, tp, range(committed[tp], last + 1))

    asyncio.run(process())
    tps = list(fixed._filter_tps_with_pending_acks())
    assert fixed._filter_committable_offsets(tps) == {repeated: 128, holed: 193}
    assert fixed._acked == {repeated: [], holed: []}  # Faust's lists do not grow
    assert fixed._acked_index == {repeated: set(), holed: set()}


async def handed_over(app: faust.App, offsets: list[int]) -> list[int]:
    """Run Faust's real fetch loop over ``offsets``; return those it gave the agents."""
    consumer: Any = app.consumer
    fetcher, got = mode.Service(), []

    async def callback(message: Any) -> None:
        got.append(message.offset)

    async def getmany(**_kwargs: Any) -> AsyncIterator[tuple[TP, Any]]:
        for offset in offsets:
            yield TP0, SimpleNamespace(offset=offset, topic=TP0.topic, key=None, value=None)
        fetcher._stopped.set()

    consumer.callback, consumer.getmany = callback, getmany
    await consumer._drain_messages(fetcher)
    return got


async def test_every_fetched_record_reaches_the_agents(apps: list[faust.App]) -> None:
    """A re-read after a seek comes below the last offset handed over: Faust drops it."""
    plain, fixed = new_app(), new_app()
    apps += [plain, fixed]
    deliver_every_record(fixed, Progress(gated=False))
    fetched = [500, 501, 189, 190]  # 500, 501 fetched before the seek back to 189
    assert await handed_over(plain, fetched) == [500, 501]
    assert await handed_over(fixed, fetched) == fetched


def test_workers_let_faust_hand_over_every_fetched_record(tmp_path: Path) -> None:
    from learnstream.agents.worker import build_app
    from learnstream.streams.config.settings import Settings

    app = build_app(Settings(data_dir=str(tmp_path)), "kafka://127.0.0.1:9", embedded=False)
    read_offset = app.consumer._read_offset  # created as the worker would
    assert isinstance(read_offset, DeliverAll)
    read_offset[TP0] = 500  # what the loop records after handing over offset 500
    assert read_offset[TP0] is None  # so offset 189, fetched again after a seek, goes through
    assert read_offset.get(TP0) is None
    close_consumer_loop(app)


async def test_records_are_stamped_when_faust_hands_them_over(apps: list[faust.App]) -> None:
    """Seam 11: ``getmany``'s messages carry the monotonic time they were handed over, so
    one end-offset round serves every record fetched before it."""
    plain, fixed = new_app(), new_app()
    apps += [plain, fixed]
    progress = Progress(gated=False)
    deliver_every_record(fixed, progress)
    record = SimpleNamespace(
        topic=TP0.topic, partition=TP0.partition, offset=7, timestamp=1_700_000_000_000,
        timestamp_type=0, headers=[], key=b"k", value=b"v", checksum=None,
        serialized_key_size=1, serialized_value_size=1,
    )  # fmt: skip
    before = time.monotonic()
    stamped = fixed.consumer._to_message(TP0, record)
    assert plain.consumer._to_message(TP0, record).time_in is None  # Faust's lean path
    assert before <= stamped.time_in <= time.monotonic()
    assert (stamped.offset, stamped.key, stamped.value) == (7, b"k", b"v")
    assert progress.handed == {TP0: 8}  # the stall watch compares it with the fetch position


async def test_idle_means_empty_and_the_publisher_waiting(apps: list[faust.App]) -> None:
    app = new_app()
    apps.append(app)
    buffer: Any = app.producer.buffer
    assert not buffer_idle(buffer.pending)  # empty, but nobody is publishing: not idle
    assert not await wait_until_idle(buffer, limit_s=0.02)
    log: list[Any] = []
    await slow_publisher(app, log, delay=0.05)
    await asyncio.sleep(0)
    assert buffer_idle(buffer.pending)
    buffer.put("x")
    await asyncio.sleep(0)
    assert buffer.pending.empty()
    assert not buffer_idle(buffer.pending)  # popped and being published
    assert await wait_until_idle(buffer, limit_s=1)
    assert log == ["sent x"]
    await buffer.stop()


async def test_a_stopping_buffer_is_not_waited_for(apps: list[faust.App]) -> None:
    app = new_app()
    apps.append(app)
    buffer = await slow_publisher(app, [], delay=0)
    await buffer.stop()
    buffer.pending.put_nowait("left over")  # nobody will publish it: the worker stops
    started = asyncio.get_running_loop().time()
    assert not await wait_until_idle(buffer, limit_s=5)
    assert asyncio.get_running_loop().time() - started < 1


async def test_workers_install_it_on_assignment_and_forget_revoked_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from learnstream.agents.wiring import wire
    from learnstream.streams.config.settings import Settings
    from learnstream.streams.io.app import create_app

    installed: list[tuple[object, Progress]] = []
    monkeypatch.setattr(
        "learnstream.agents.wiring.guard_commits", lambda *args: installed.append(args)
    )
    settings = Settings(data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    runtime = wire(app, settings)
    assert installed == []
    await app.on_partitions_assigned.send(set())
    assert installed == [(app, runtime.progress)]
    assert not runtime.progress.gated  # at_least_once by default
    kept, revoked = TP("plans", 0), TP("plans", 1)
    for tp in (kept, revoked):
        async with runtime.progress.record(tp, 5):
            pass
    await app.on_partitions_revoked.send({revoked})
    assert runtime.progress.next_offset(kept) == 6
    assert runtime.progress.next_offset(revoked) is None


def test_building_leaves_fausts_transaction_switch_alone(tmp_path: Path) -> None:
    """``app.in_transaction`` is a cached property, False until the worker runs: reading it
    while building the app (directly, or by creating the consumer) would switch exactly_once
    off for good, and the worker would run without any transaction."""
    from learnstream.agents.wiring import wire
    from learnstream.agents.worker import build_app
    from learnstream.streams.config.settings import Settings
    from learnstream.streams.io.app import create_app

    settings = Settings(data_dir=str(tmp_path), processing_guarantee="exactly_once")
    assert wire(
        create_app(settings, "kafka://127.0.0.1:9", embedded=False), settings
    ).progress.gated
    app = build_app(settings, "kafka://127.0.0.1:9", embedded=False)
    assert app._consumer is None
    app.in_worker = True  # what faust.Worker does when it starts the app
    assert app.in_transaction
    assert app.consumer.in_transaction
    close_consumer_loop(app)


async def test_commits_never_pass_a_record_whose_window_counts_are_unwritten(
    apps: list[faust.App], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's own commit path (wired runtime, Faust's consumer and producer buffer):
    a commit flushes the quality windows that are due first and commits after their
    changelog records went out; when it cannot flush (the producer is stopping) or the
    partition is not due, it commits nothing the windows have not written."""
    from learnstream.agents.quality_tables import QualityWindows
    from learnstream.agents.wiring import wire
    from learnstream.streams.config.settings import Settings
    from learnstream.streams.io.app import create_app
    from tests.support.outputs import Feed, mock_outputs
    from tests.unit.test_quality import _decide

    # the plan's state written at once, not held in memory (agents/joins/planstore.py)
    settings = Settings(
        store="memory://", sample_format="json", data_dir=str(tmp_path),
        join={"hold_in_memory": "0s"},
    )  # fmt: skip
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    apps.append(app)
    runtime = wire(app, settings, ends=FakeEnds())
    mock_outputs(app, runtime)
    quality = next(f.__self__ for f in runtime.on_sample if hasattr(f, "__self__"))
    assert isinstance(quality, QualityWindows)
    now = [0.0]
    quality.clock = lambda: now[0]  # the flush interval passes only when the test says
    feed = Feed(app)
    fresh = datetime.now(UTC) - timedelta(seconds=1)
    await _decide(runtime, feed, True, fresh, partition=2)
    processed = {tp: runtime.progress.next_offset(tp) for tp in runtime.progress.partitions()}
    assert len(processed) == 2  # the plan snapshot and the decision
    network = Network(app, set(processed))
    guard_commits(app, runtime.progress)

    with monkeypatch.context() as stopping:
        stopping.setattr(type(app.producer.buffer), "should_stop", property(lambda _: True))
        assert not await app.consumer.force_commit()
    commits = [entry for entry in network.log if isinstance(entry, tuple)]
    assert commits == []  # the counts are only in memory: nothing may be committed
    network.log.clear()
    assert quality.pending.partitions() == [2]

    await slow_publisher(app, network.log, delay=0)
    assert not await app.consumer.force_commit()  # at_least_once: the partition is not due
    assert [entry for entry in network.log if isinstance(entry, tuple)] == []
    assert quality.pending.partitions() == [2]
    network.log.clear()

    now[0] += quality.flush_interval
    assert await app.consumer.force_commit()
    sent = [entry for entry in network.log if str(entry).startswith("sent")]
    # the plan's plan_state, then intent_resolution and confirm_decision in the 5m and 1h windows
    assert len(sent) == 5
    # Faust's own flush comes before the buffer drained; ours after (as above)
    assert network.log == ["flush", *sent, "flush", ("commit", processed)]
    assert quality.pending.partitions() == []
    totals = quality.counts({2}, fresh.timestamp())["1h"]
    assert totals["intent_resolution"]["good"] == totals["confirm_decision"]["good"] == 1
    await app.producer.buffer.stop()
