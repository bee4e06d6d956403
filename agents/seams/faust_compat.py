"""Use Faust's and aiokafka's private internals here, and nowhere else.

learnstream depends on parts of faust-streaming and aiokafka that are not public API. Each
seam is listed below: what we use, where it lives, why, and what breaks without it.
``check()`` (``agents/seams/faust_check.py``, run by ``learnstream.agents.wiring.wire``
before a worker starts) verifies each against the installed packages, and pyproject.toml
pins both to the versions checked.
The bookkeeping the commit seams feed is pure: ``streams/offsets/progress.py``.

faust-streaming (``faust/transport/consumer.py`` unless said otherwise):

1. ``App._new_consumer()`` (``faust/app/base.py``) is wrapped to replace each new consumer's
   ``Consumer._read_offset`` (a dict made in ``__init__``, read by ``_drain_messages``
   through its bound ``__getitem__``) with ``DeliverAll``. Faust drops a fetched record
   below the last one it handed over; records fetched before a seek and handed over after
   it raise that mark, and the re-read after the seek is dropped: records lost on restart.
2. ``Consumer._new_offset(tp)``, called by ``_filter_committable_offsets``, is replaced to
   return the offset ``Progress`` says may be committed (one past the last record processed,
   or flushed); ``Consumer._acked`` and ``_acked_index`` (made in ``__init__``) are trimmed
   below it so they do not grow. Faust
   commits the end of the first run of consecutive acks: after a seek's repeats commits
   crawl one offset at a time, and with a hole it commits past a record never processed.
3. ``Consumer._filter_tps_with_pending_acks(topics)``, called by ``force_commit``, is
   replaced to list the partitions ``Progress`` holds. Without it: nothing to commit, as
   trimmed ``_acked`` lists stay empty.
4. ``Consumer._committed_offset`` (made in ``__init__``, set by commits and by the seek to
   the committed offsets) is read: where a partition's records start (``Progress``), and
   the lag gauges (``committed_offsets``).
5. ``Consumer._commit(offsets)`` (at_least_once) and ``TransactionManager.commit(offsets,
   start_new_transaction)`` (exactly_once), both called by ``_commit_offsets``, are wrapped
   to wait until the send buffer is idle, and ``Consumer.force_commit`` to hold records back
   while a commit runs. Table writes go through Faust's producer buffer; without the wait a
   commit misses changelog records of processed events, and a transaction carries outputs
   of records whose offsets it does not commit: duplicates after a kill.
6. ``ProducerBuffer.pending`` (``faust/transport/producer.py``), an asyncio.Queue that
   ``_handle_pending`` pops *before* it publishes, and the queue's ``_getters`` (CPython):
   the buffer is idle only when the queue is empty and its task waits in ``get()``.
7. The transactional id ``f"{group_id}-{group}-{tp.partition}"`` that
   ``TransactionManager.commit`` builds: ``transactional_id`` makes the same, so a sample
   sent straight to the producer joins the transaction that commits its source offset
   (faust-streaming #177/#517: outputs sent outside it come out twice after a kill).
8. ``faust.streams._current_event``, the ContextVar (of a weakref) ``current_event()``
   reads: ``processing`` sets it so the quality windows can flush their counts when a
   commit starts, outside stream iteration. A table write needs it (the changelog partition,
   RocksDB's database); without it, exactly_once would commit samples of records whose
   counts are not written, and their replay would send them twice.

10. ``ThreadDelegateConsumer._thread`` (made in ``__init__``), its ``call_thread`` (mode's
    ``ServiceThread``) and ``AIOKafkaConsumerThread._ensure_consumer()``: a worker's aiokafka
    consumer lives on its own thread and event loop, but Faust's ``Consumer.seek`` calls its
    ``seek`` from the agents' thread. A seek there while the consumer thread drains fetched
    records crashes the worker (``KeyError`` in aiokafka's ``Fetcher.fetched_records``), and
    ``Progress`` seeks back often: after a restart, and after every gap in a partition's
    offsets, which transaction markers leave under exactly_once (RELIABILITY.md, findings
    behind the design). ``seek_on_consumer_thread`` runs the seek on the consumer's own
    loop instead; ``fetch_positions`` and ``log_starts`` read the
    consumer's fetch positions and the partitions' first offsets there too (the stall watch,
    ``agents/seams/stall_watch.py``), and ``starts_on_consumer_thread`` asks where
    partitions' records start for ``Progress`` (public aiokafka ``committed`` /
    ``beginning_offsets``).

11. ``Consumer._to_message(tp, record)`` (the aiokafka driver), which ``getmany`` reads
    (``to_message = self._to_message``) each time it hands fetched records over, is wrapped
    per consumer to stamp ``Message.time_in`` (a public slot Faust's own Monitor fills only
    when a stream takes the record; our lean sensor leaves it empty) with the monotonic time
    of the hand-over. The consent fence and the corrections watermark wait for an end offset
    asked for after that moment: one round then serves every record fetched before it,
    instead of one round per record. The wrap also notes the offset handed over last, per
    partition (``Progress.handed``): records fetched and never handed over (``getmany``
    stops a batch early) are found by comparing it with the fetch position
    (``agents/seams/stall_watch.py``).

12. The RocksDB store (``faust/stores/rocksdb.py``): ``Store._dbs`` (partition -> database,
    made in ``__init__``), ``Store._visible_items(db)`` and the base store's ``_decode_key`` /
    ``_decode_value``. ``table.items()`` hides which partition a key is stored under, yet a
    table write goes to the partition of the record being processed, and a read in a tick
    of partition p looks in p's database only. The expiry indexes must put a key under the
    partition that holds it (``partitioned_items``); guessing it from the key with Kafka's
    default partitioner is wrong for a runtime that partitions otherwise (librdkafka's
    default hashes with CRC32), and such keys would never expire.

aiokafka:

9. ``AIOKafkaConsumer._client.force_metadata_update()`` (``aiokafka/consumer/consumer.py``,
   ``aiokafka/client.py``): a consumer with assigned, not subscribed, partitions refreshes
   metadata every ``metadata_max_age_ms`` only (5 minutes), so a topic created after it
   started has no partitions until then. ``refresh_metadata`` asks now.

13. ``Sender._find_coordinator(coordinator_type, coordinator_key)``
    (``aiokafka/producer/sender.py``), which a transactional producer calls to find its
    transaction coordinator and, for each commit of offsets in a transaction, the group
    coordinator. It retries a coordinator that is not available, but a lookup whose
    connection the broker closed (the broker it asked is dying: a failover) is raised as a
    plain ``KafkaError``, which kills the producer's sender and crashes the worker.
    ``retry_lost_coordinators`` wraps it to look the coordinator up again, as aiokafka does
    for a coordinator not available (found by the cluster test that kills the transaction
    coordinator's broker under exactly_once, tests/cluster/test_faults.py).

14. ``Consumer.resume_partitions(tps)`` and ``pause_partitions(tps)`` (public), and
    ``Consumer.on_buffer_drop(tp)``, which puts a partition whose agent's buffer drained
    back among those fetched, paused or not. The join's lead order (agents/joins/lead.py)
    pauses inputs while the plans and corrections catch up on a backlog; Faust resumes the
    whole assignment once its tables are restored, so each new consumer's
    ``resume_partitions`` is wrapped (``hold_back_resumes``) to leave paused what the lead
    order holds, and the order pauses again on every tick what ``on_buffer_drop`` let go.

15. ``AIOKafkaConsumerThread._create_worker_consumer(transport)`` (the aiokafka driver), which
    builds the worker's aiokafka consumer on the consumer thread, before it starts, with
    ``fetch_max_wait_ms=1500`` written in; and aiokafka's ``AIOKafkaConsumer._fetch_max_wait_ms``
    and ``_fetch_min_bytes`` (set in ``__init__``), which ``start()`` hands to its ``Fetcher``.
    aiokafka keeps one fetch in flight per broker, and a fetch leaves out the partitions whose
    records were not handed over yet: the one sent right after a batch arrives asks mostly
    for partitions that had nothing, and the broker holds it until one of those gets a
    record or the wait runs out, while the records of the busy partitions wait behind it.
    ``bound_fetch_wait`` sets the wait and the bytes each new consumer starts with
    (``LEARNSTREAM_BROKER__FETCH_MAX_WAIT_MS``, ``__FETCH_MIN_BYTES``; benchmarks/RESULTS.md,
    findings behind the design).

16. ``Consumer._drain_messages`` hands each fetched record to its stream with
    ``await self.wait_first(callback(message), self.suspend_flow.wait())``, and mode's
    ``Service.wait_first`` makes four tasks of that (the callback, the suspend flag, the
    service's stopped and crashed flags), waits for the first and cancels the rest: about ten
    turns of the agents' event loop per record, each behind every handler step ready to run,
    while the records after it in the batch wait. ``hand_over_inline`` replaces each new
    consumer's ``wait_first`` (``Consumer.suspend_flow`` is made in ``__init__``): for that
    call, the callback runs in the fetch loop's own task and, when it finishes without
    waiting (its stream's buffer has room: the usual case), no task is made; one that waits
    goes on under mode's ``wait_first`` as before, so a suspended flow still cancels it.
    Any other call is mode's (benchmarks/RESULTS.md, 30 Nov 10:02–10:37).

17. aiokafka's ``Fetcher._proc_fetch_request(assignment, node_id, request)``
    (``aiokafka/consumer/fetcher.py``; the fetcher is made by ``AIOKafkaConsumer.start()``)
    and the partition state's ``lso`` and ``timestamp`` it sets from each response; and
    the consumer's ``_client.cluster`` (seam 9), to take ends from partition leaders only (a
    follower serving a fetch may not have heard of the newest end). Each fetch response
    carries the last stable offset of every partition it asked for, which answers the
    corrections watermark and the consent fence as a ListOffsets round does, and a quiet
    partition is in every fetch (streams/offsets/fetched.py). ``note_fetched_ends`` wraps
    it on a started consumer: it stamps the moment before the request goes out and notes
    the ``lso`` of each watched partition whose ``timestamp`` (milliseconds) the response
    changed (one within the same millisecond as the one before is not noted: that only
    costs a wait). ``note_fetches`` does so for the worker's consumer once started (through
    seam 15's ``_create_worker_consumer``); the consent reader for its own
    (benchmarks/RESULTS.md, 30 Nov 16:05).

18. aiokafka's ``Fetcher._prefetch_backoff`` (set in ``__init__``, 100 ms; there is no
    consumer argument for it), which ``_proc_fetch_request`` gives each batch it buffers:
    while a batch of a broker's partition waits to be handed over, no fetch goes to that
    broker for that long. Faust pauses a partition by leaving it out of its ``getmany``,
    not in aiokafka, so aiokafka still fetches the partitions Faust paused (a table's
    changelog once restored, an input the lead order holds), and their records are never
    handed over: each first batch of one held every fetch of its broker 100 ms, the p99 of
    event latency at 100 events/s. ``bound_fetch_wait`` sets it on each new consumer's
    fetcher once started (``LEARNSTREAM_BROKER__PREFETCH_BACKOFF_MS``; benchmarks/RESULTS.md,
    findings behind the design).

Not private but relied on: ``App.in_transaction`` is a cached property, False until the
worker runs; reading it (or creating the consumer) earlier switches exactly_once off.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import time
import types
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, Protocol

import faust
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import IllegalStateError, KafkaConnectionError, KafkaError
from aiokafka.producer.sender import Sender
from faust import streams as faust_streams
from faust.types import TP, EventT
from mode.services import WaitResults

from learnstream.streams.offsets.fetched import FetchedEnds
from learnstream.streams.offsets.progress import Progress

__all__ = [
    "DRAIN_LIMIT_S",
    "DeliverAll",
    "bound_fetch_wait",
    "buffer_idle",
    "committed_offsets",
    "deliver_every_record",
    "fetch_positions",
    "guard_commits",
    "hand_over_inline",
    "handing_over",
    "log_starts",
    "note_fetched_ends",
    "note_fetches",
    "partitioned_items",
    "processing",
    "refresh_metadata",
    "retry_lost_coordinators",
    "sends_stopped",
    "seek_on_consumer_thread",
    "starts_on_consumer_thread",
    "transactional_id",
    "wait_until_idle",
    "writing_to",
]

log = logging.getLogger("learnstream")

#: How long a commit waits for the buffer; past it, it commits anyway and says so.
DRAIN_LIMIT_S = 30.0

#: How long a coordinator whose broker closes the connection is looked up again (a failover
#: takes seconds; a connection refused for another reason, TLS or auth, must not stall for ever).
COORDINATOR_RETRY_S = 120.0

#: How long reading a fetch position may wait for a partition being reset.
POSITION_WAIT_S = 1.0

Commit = Callable[..., Awaitable[bool]]


class DeliverAll(dict):  # type: ignore[type-arg]
    """Faust's read offsets (seam 1), made to let every fetched record through.

    ``Progress`` orders and de-duplicates each partition itself, so Faust must hand over
    everything it fetched, a re-read after a seek included.
    """

    def __getitem__(self, tp: Any) -> None:
        return None

    def get(self, tp: Any, default: Any = None) -> None:
        return None


def sends_stopped(app: faust.App) -> bool:
    """Tell whether the app's producer buffer is stopping: nothing written now would be sent."""
    return bool(app.producer.buffer.should_stop)


def handing_over(app: faust.App) -> bool:
    """Tell whether a commit is the last before the partitions go (a rebalance revokes them,
    or the worker stops) while changelog records can still be sent: what is held in memory
    is written then, so the next owner does not read those records again."""
    return bool(app.rebalancing or app.should_stop) and not sends_stopped(app)


def _on_new_consumer(app: faust.App, change: Callable[[Any], None]) -> None:
    """Wrap ``App._new_consumer`` (seam 1) so each consumer it makes is handed to ``change``
    before the worker uses it. Wraps stack: each installed later runs after those before."""
    make = app._new_consumer

    def new_consumer() -> Any:
        consumer = make()
        change(consumer)
        return consumer

    app._new_consumer = new_consumer  # type: ignore[method-assign]


def hold_back_resumes(app: faust.App, held: Callable[[set[TP]], set[TP]]) -> None:
    """Make each new consumer of ``app`` leave paused, of the partitions Faust resumes, those
    ``held`` says must wait (seam 14). Installed before the worker creates its consumer."""

    def change(consumer: Any) -> None:
        resume = consumer.resume_partitions

        def resume_partitions(tps: Iterable[TP]) -> None:
            wanted = set(tps)
            resume(wanted - held(wanted))

        consumer.resume_partitions = resume_partitions

    _on_new_consumer(app, change)


def bound_fetch_wait(app: faust.App, wait_ms: int, min_bytes: int, backoff_ms: int) -> None:
    """Make each new consumer of ``app`` ask the broker to answer a fetch once it holds
    ``min_bytes`` or within ``wait_ms`` (seam 15; Faust's wait is 1500 ms, aiokafka's bytes 1),
    and keep its next fetch back at most ``backoff_ms`` for records not handed over yet
    (seam 18; aiokafka's 100 ms). Installed before the worker creates its consumer."""

    def built(consumer: AIOKafkaConsumer) -> None:
        consumer._fetch_max_wait_ms = wait_ms  # read by start(): not started yet
        consumer._fetch_min_bytes = min_bytes

    def started(consumer: AIOKafkaConsumer) -> None:
        consumer._fetcher._prefetch_backoff = backoff_ms / 1000

    _on_worker_consumer(app, started, built=built)


def note_fetches(app: faust.App, ends: FetchedEnds[Any]) -> None:
    """Make each new consumer of ``app`` note in ``ends`` the last stable offsets its fetch
    responses carry (seam 17), from its start on. Installed before the worker creates its
    consumer."""
    _on_worker_consumer(app, lambda consumer: note_fetched_ends(consumer, ends))


def _on_worker_consumer(
    app: faust.App,
    started: Callable[[AIOKafkaConsumer], None],
    built: Callable[[AIOKafkaConsumer], None] | None = None,
) -> None:
    """Call ``built`` on each new aiokafka consumer of ``app``'s worker as it is made (before
    ``start()`` reads its settings), and ``started`` once its ``start()`` returns (which makes
    the fetcher)."""

    def change(consumer: Any) -> None:
        thread = consumer._thread  # seam 10
        build = thread._create_worker_consumer

        def create_worker_consumer(transport: Any) -> AIOKafkaConsumer:
            aiokafka_consumer = build(transport)
            if built is not None:
                built(aiokafka_consumer)
            start = aiokafka_consumer.start

            async def start_then() -> None:
                await start()
                started(aiokafka_consumer)

            aiokafka_consumer.start = start_then
            return aiokafka_consumer

        thread._create_worker_consumer = create_worker_consumer

    _on_new_consumer(app, change)


def note_fetched_ends(consumer: AIOKafkaConsumer, ends: FetchedEnds[Any]) -> None:
    """Make ``consumer``'s fetches note in ``ends`` the last stable offsets of the partitions
    of ``ends.topics`` they carry (seam 17). Call on the consumer's loop, after ``start()``."""
    fetcher, cluster = consumer._fetcher, consumer._client.cluster
    fetcher._proc_fetch_request = _noting(fetcher._proc_fetch_request, cluster, ends)


def _noting(
    proc: Callable[..., Awaitable[bool]], cluster: Any, ends: FetchedEnds[Any]
) -> Callable[..., Awaitable[bool]]:
    async def proc_fetch_request(assignment: Any, node_id: int, request: Any) -> bool:
        watched = []
        for topic, partitions in request.topics:
            if topic not in ends.topics:
                continue
            for partition, *_ in partitions:
                tp = TopicPartition(topic, partition)
                # a follower serving a fetch (KIP-392) may not have heard of the newest end
                if cluster.leader_for_partition(tp) == node_id:
                    watched.append(tp)
        if not watched:
            return await proc(assignment, node_id, request)
        before = {tp: _fetched_at(assignment, tp) for tp in watched}
        sent = ends.clock()  # before the request goes out: its ends count for earlier only
        try:
            return await proc(assignment, node_id, request)
        finally:
            answered = {}
            for tp in watched:
                state = assignment.state_value(tp)
                if state is None or state.timestamp == before[tp]:
                    continue  # not answered: an error, a moved position, a new assignment
                if state.lso is not None and state.lso >= 0:  # -1: the broker gave none
                    answered[tp] = state.lso
            if answered:
                ends.note(sent, answered)

    return proc_fetch_request


def _fetched_at(assignment: Any, tp: TopicPartition) -> int | None:
    state = assignment.state_value(tp)
    return None if state is None else state.timestamp


def deliver_every_record(app: faust.App, progress: Progress) -> None:
    """Give ``app``'s consumer a ``DeliverAll`` as soon as the worker creates it, and note
    in ``progress.handed`` each record its fetch loop hands over (seam 11).

    Not by creating the consumer here: it reads ``app.in_transaction``, which would then stay
    False for good. And not on assignment: the fetch loop has bound ``__getitem__`` by then.
    """

    def change(consumer: Any) -> None:
        consumer._read_offset = DeliverAll()
        consumer._to_message = _stamped(consumer._to_message, progress.handed)

    _on_new_consumer(app, change)


def hand_over_inline(app: faust.App) -> None:
    """Make each new consumer of ``app`` hand a fetched record to its stream in the fetch
    loop's own task, making no task when the stream takes it at once (seam 16). Installed
    before the worker creates its consumer."""

    def change(consumer: Any) -> None:
        consumer.wait_first = _inline_first(consumer.suspend_flow, consumer.wait_first)

    _on_new_consumer(app, change)


def _inline_first(
    flow: asyncio.Event, wait_first: Callable[..., Awaitable[WaitResults]]
) -> Callable[..., Awaitable[WaitResults]]:
    """Wrap a consumer's ``wait_first`` (seam 16) to run the fetch loop's hand-over of one
    record, ``wait_first(callback(message), flow.wait())``, in the caller's task."""

    async def first(*coros: Any, timeout: float | None = None) -> WaitResults:  # noqa: ASYNC109 (mode's)
        if not _fetch_loops_hand_over(coros, timeout, flow):
            return await wait_first(*coros, timeout=timeout)  # mode's, as without the seam
        hand_over, suspended = coros
        try:
            blocked_on = hand_over.send(None)  # run it up to its first wait, if any
        except StopIteration as done:
            suspended.close()  # never started: nothing to cancel
            return WaitResults([hand_over], [done.value], False)
        except BaseException:
            suspended.close()
            raise
        return await wait_first(_carry_on(hand_over, blocked_on), suspended)

    return first


def _fetch_loops_hand_over(
    coros: tuple[Any, ...], timeout: float | None, flow: asyncio.Event
) -> bool:
    """Tell whether ``wait_first(*coros, timeout=timeout)`` is the fetch loop's hand-over
    of one record, ``callback(message)`` raced against ``flow.wait()``, with the flow not
    suspended: the only call seam 16 runs in the caller's task."""
    return (
        timeout is None
        and len(coros) == 2
        and not flow.is_set()
        and asyncio.iscoroutine(coros[0])
        and _waits_on(coros[1], flow)
    )


def _waits_on(coro: Any, flow: asyncio.Event) -> bool:
    """Tell whether ``coro`` is ``flow.wait()``, not started.

    Reading the frame's ``self`` builds its locals: about half a microsecond per record
    (timed with ``timeit``), against the four tasks the seam spares."""
    frame = getattr(coro, "cr_frame", None)
    return (
        frame is not None
        and coro.cr_code is asyncio.Event.wait.__code__
        and frame.f_locals.get("self") is flow
    )


async def _carry_on(coro: Coroutine[Any, Any, Any], blocked_on: Any) -> Any:
    """Go on with ``coro``, which already ran to a wait on ``blocked_on``, as a task would."""
    return await _resumed(coro, blocked_on)


@types.coroutine
def _resumed(coro: Coroutine[Any, Any, Any], blocked_on: Any) -> Generator[Any, None, Any]:
    """Hand what ``coro`` waits on to the running task, pass a cancellation (or any error
    the task throws) into ``coro``, and resume it once its wait is over."""
    while True:
        try:
            yield blocked_on
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as error:  # a cancellation: coro may catch it and wait again
            try:
                blocked_on = coro.throw(error)
            except StopIteration as done:
                return done.value
            continue
        return (yield from coro)


def _stamped(
    to_message: Callable[[TP, Any], Any], handed: dict[Any, int]
) -> Callable[[TP, Any], Any]:
    """Wrap Faust's ``_to_message`` (seam 11) to stamp when each record was handed over, and
    note one past its offset in ``handed``."""
    clock = time.monotonic

    def stamped(tp: TP, record: Any) -> Any:
        message = to_message(tp, record)
        message.time_in = clock()
        handed[tp] = record.offset + 1
        return message

    return stamped


class Buffer(Protocol):
    """What we read of Faust's ``ProducerBuffer`` (seam 6)."""

    pending: asyncio.Queue[Any]

    @property
    def should_stop(self) -> bool: ...


def buffer_idle(pending: asyncio.Queue[Any]) -> bool:
    """Tell whether nothing is queued and the publishing task waits on ``get()``."""
    return pending.empty() and bool(getattr(pending, "_getters", None))


async def wait_until_idle(buffer: Buffer, limit_s: float = DRAIN_LIMIT_S) -> bool:
    """Wait until the buffer is idle; False if ``limit_s`` passed or it is stopping."""
    deadline = time.monotonic() + limit_s
    while not buffer_idle(buffer.pending):
        if buffer.should_stop or time.monotonic() >= deadline:
            return False  # stopping: nothing publishes any more, waiting would only stall
        await asyncio.sleep(0.001)
    return True


def _drained(buffer: Buffer, commit: Commit, flush: Callable[[], Awaitable[None]] | None) -> Commit:
    async def drained_commit(offsets: Mapping[TP, int], *args: Any, **kwargs: Any) -> bool:
        if not await wait_until_idle(buffer) and not buffer.should_stop:
            log.warning(
                "send buffer busy for %.0fs: committing %d partition(s) anyway",
                DRAIN_LIMIT_S,
                len(offsets),
            )
        if flush is not None:  # at_least_once: what the buffer published must be acked
            await flush()
        return await commit(offsets, *args, **kwargs)

    return drained_commit


def _left_behind(app: faust.App, progress: Progress, offsets: Mapping[Any, int]) -> list[str]:
    """Say which processed partitions a transactional commit leaves below their progress
    while it commits their transaction: their outputs would be committed without their
    offsets, and a replay would send them again."""
    committing = {_transaction_of(app, tp) for tp in offsets} - {None}
    found = []
    for tp in progress.partitions():
        done, at = progress.next_offset(tp), offsets.get(tp, progress.committed(tp))
        if done is None or (at is not None and done <= at):
            continue
        if _transaction_of(app, tp) in committing:
            found.append(f"{tp.topic}[{tp.partition}] at {at} of {done}")
    return found


def _transaction_of(app: faust.App, tp: Any) -> str | None:
    """Return ``tp``'s transactional id, or None for a topic the assignor groups nowhere
    (a diagnostic must never break the commit it watches)."""
    try:
        return transactional_id(app, tp.topic, tp.partition)
    except KeyError:
        return None


def _checked(app: faust.App, progress: Progress, commit: Commit) -> Commit:
    async def checked_commit(offsets: Mapping[TP, int], *args: Any, **kwargs: Any) -> bool:
        left = _left_behind(app, progress, offsets)
        if left:
            log.warning("a commit leaves processed records behind: %s", ", ".join(left))
        return await commit(offsets, *args, **kwargs)

    return checked_commit


def _quiet(progress: Progress, force_commit: Commit) -> Commit:
    async def quiet_commit(*args: Any, **kwargs: Any) -> bool:
        async with progress.quiet():
            return await force_commit(*args, **kwargs)

    return quiet_commit


def _processed(consumer: Any, progress: Progress) -> Callable[[TP], int | None]:
    def processed_offset(tp: TP) -> int | None:
        target = progress.commit_offset(tp)
        acked = consumer._acked.get(tp)
        if target is not None and acked:  # Faust's own lists: keep them from growing
            done = [o for o in acked if o < target]
            if done:
                acked[:] = [o for o in acked if o >= target]
                consumer._acked_index[tp].difference_update(done)
        return target

    return processed_offset


def _with_progress(progress: Progress) -> Callable[..., Iterator[Any]]:
    def partitions_to_commit(topics: Any = None) -> Iterator[Any]:
        return (
            tp
            for tp in progress.partitions()
            if topics is None or tp in topics or tp.topic in topics
        )

    return partitions_to_commit


def guard_commits(app: faust.App, progress: Progress) -> None:
    """Make ``app``'s consumer commit what ``progress`` says was processed, between records,
    after its send buffer is drained (seams 2 to 6).

    Call once the consumer exists (on partition assignment); calling again is a no-op.
    """
    consumer: Any = app.consumer
    if getattr(consumer, "_learnstream_guarded", False):
        return
    buffer = app.producer.buffer
    if app.in_transaction:  # the transaction carries the records: no flush needed
        manager = consumer.transactions
        manager.commit = _drained(buffer, _checked(app, progress, manager.commit), None)
    else:
        consumer._commit = _drained(buffer, consumer._commit, app.producer.flush)
    progress.committed = consumer._committed_offset.get
    progress.seek = seek_on_consumer_thread(consumer)
    progress.starts_of = starts_on_consumer_thread(consumer)
    consumer.force_commit = _quiet(progress, consumer.force_commit)
    consumer._new_offset = _processed(consumer, progress)
    consumer._filter_tps_with_pending_acks = _with_progress(progress)
    consumer._learnstream_guarded = True


def seek_on_consumer_thread(consumer: Any) -> Callable[[Any, int], Awaitable[None]]:
    """Return a seek of ``consumer``'s partitions that runs on its aiokafka thread (seam 10).

    Faust's own ``seek`` also resets its read offset; ``DeliverAll`` ignores that anyway.
    """

    async def seek(tp: Any, offset: int) -> None:
        await _on_consumer_thread(consumer, _seek_now, tp, offset)

    return seek


async def _on_consumer_thread(consumer: Any, fun: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """Run ``fun(aiokafka_consumer, *args)`` on ``consumer``'s aiokafka thread (seam 10)."""
    thread = consumer._thread
    return await thread.call_thread(fun, thread._ensure_consumer(), *args)


async def _seek_now(aiokafka_consumer: AIOKafkaConsumer, tp: TP, offset: int) -> None:
    aiokafka_consumer.seek(tp, offset)


def starts_on_consumer_thread(consumer: Any) -> Callable[[list[Any]], Awaitable[Mapping[Any, int]]]:
    """Return a lookup of where partitions' records start for ``consumer``'s group: each
    one's committed offset the broker holds, else its first offset in the log (where
    ``auto_offset_reset=earliest`` starts), asked on its aiokafka thread (seam 10).

    Not Faust's ``_committed_offset`` (seam 4): its seek to the committed offsets fills that
    in after a new worker's agents already got records.
    """

    async def starts_of(tps: list[Any]) -> Mapping[Any, int]:
        wanted = [TopicPartition(tp.topic, tp.partition) for tp in tps]
        starts = await _on_consumer_thread(consumer, _record_starts_now, wanted)
        return {TP(tp.topic, tp.partition): offset for tp, offset in starts.items()}

    return starts_of


async def _record_starts_now(
    aiokafka_consumer: AIOKafkaConsumer, tps: list[TopicPartition]
) -> dict[TopicPartition, int]:
    committed = await asyncio.gather(*(aiokafka_consumer.committed(tp) for tp in tps))
    starts = {tp: int(c) for tp, c in zip(tps, committed, strict=True) if c is not None and c >= 0}
    if rest := [tp for tp in tps if tp not in starts]:
        starts.update(await _starts_now(aiokafka_consumer, rest))
    return starts


async def fetch_positions(consumer: Any) -> dict[TP, int]:
    """Return where ``consumer`` fetches each assigned partition next, read on its aiokafka
    thread (seam 10); a partition without a valid position yet (being reset) is left out."""
    positions: dict[TP, int] = await _on_consumer_thread(consumer, _positions_now)
    return positions


async def _positions_now(aiokafka_consumer: AIOKafkaConsumer) -> dict[TP, int]:
    positions = {}
    for tp in aiokafka_consumer.assignment():
        try:  # immediate when the position is valid; otherwise it waits for a reset
            offset = await asyncio.wait_for(aiokafka_consumer.position(tp), POSITION_WAIT_S)
        except (TimeoutError, IllegalStateError):  # being reset, or unassigned meanwhile
            continue
        positions[TP(tp.topic, tp.partition)] = offset
    return positions


async def log_starts(consumer: Any, tps: Iterable[TP]) -> dict[TP, int]:
    """Return the first offset in the log of each of ``tps``, asked on ``consumer``'s
    aiokafka thread (seam 10)."""
    wanted = [TopicPartition(tp.topic, tp.partition) for tp in tps]
    starts = await _on_consumer_thread(consumer, _starts_now, wanted)
    return {TP(tp.topic, tp.partition): offset for tp, offset in starts.items()}


async def _starts_now(
    aiokafka_consumer: AIOKafkaConsumer, tps: list[TopicPartition]
) -> dict[TopicPartition, int]:
    starts: dict[TopicPartition, int] = await aiokafka_consumer.beginning_offsets(tps)
    return starts


def committed_offsets(consumer: Any) -> Mapping[TP, int | None]:
    """Return the offsets ``consumer`` last committed or sought to, per partition (seam 4)."""
    committed: Mapping[TP, int | None] = getattr(consumer, "_committed_offset", {})
    return committed


@contextmanager
def processing(event: EventT[Any]) -> Iterator[None]:
    """Let table writes run as in the stream iteration of ``event`` (seam 8)."""
    token = faust_streams._current_event.set(weakref.ref(event))
    try:
        yield
    finally:
        faust_streams._current_event.reset(token)


class _RecordOf:
    """Stands in for a record of ``topic[partition]`` where Faust's tables read only those
    two (the changelog partition of a write, RocksDB's store for it, and the check that the
    topic and the table's changelog have as many partitions)."""

    def __init__(self, topic: str, partition: int) -> None:
        self.message = SimpleNamespace(topic=topic, partition=partition)


@contextmanager
def writing_to(topic: str, partition: int) -> Iterator[None]:
    """Let table writes go to ``partition`` as in a record of ``topic[partition]`` with no
    record under way (seam 8): what is held in memory for a partition is written when a
    rebalance takes it."""
    record = _RecordOf(topic, partition)
    with processing(record):  # type: ignore[arg-type]
        yield


def transactional_id(app: faust.App, topic: str, partition: int) -> str:
    """Return the id of the transaction Faust commits ``topic[partition]``'s offset in (seam 7)."""
    return f"{app.conf.id}-{app.assignor.group_for_topic(topic)}-{partition}"


def retry_lost_coordinators() -> None:
    """Make aiokafka's transactional producers look a coordinator up again when the broker
    asked closed the connection (seam 13); once per process."""
    original = Sender._find_coordinator
    if getattr(original, "learnstream_retries", False):
        return

    # wraps: the seam check (agents/seams/faust_check.py) still reads aiokafka's own function
    @functools.wraps(original)
    async def find_coordinator(self: Any, coordinator_type: Any, coordinator_key: str) -> Any:
        deadline = time.monotonic() + COORDINATOR_RETRY_S
        for attempt in itertools.count():
            try:
                return await original(self, coordinator_type, coordinator_key)
            except KafkaError as exc:
                lost = isinstance(exc.__cause__, KafkaConnectionError)
                if not lost or time.monotonic() > deadline:  # not a failover: as aiokafka does
                    raise
                if attempt == 0:
                    log.warning(
                        "the broker asked for the %s coordinator closed the connection (%s): "
                        "looking it up again until one answers",
                        coordinator_type.name.lower(),
                        exc.__cause__,
                    )
                await self.client.force_metadata_update()
                await asyncio.sleep(self._retry_backoff)
        raise AssertionError("unreachable")  # pragma: no cover

    find_coordinator.learnstream_retries = True  # type: ignore[attr-defined]
    Sender._find_coordinator = find_coordinator


async def refresh_metadata(consumer: AIOKafkaConsumer) -> None:
    """Fetch fresh cluster metadata for ``consumer`` now (seam 9): new topics, partitions."""
    await consumer._client.force_metadata_update()


def partitioned_items(table: Any) -> Iterator[tuple[Any, Any, int | None]]:
    """Yield (key, value, partition) of a table's active partitions (seam 12). A RocksDB
    iterator reads a snapshot, so the table may change while it is read; a store that keeps
    no partitions (memory://, a dict) is read from a copy, with partition None."""
    store: Any = getattr(table, "data", None)
    databases = getattr(store, "_dbs", None)
    if not isinstance(databases, dict) or not hasattr(store, "_visible_items"):
        for key, value in list(table.items()):
            yield key, value, None
        return
    topic = table.changelog_topic.get_topic_name()
    actives = table.app.assignor.assigned_actives()
    for partition, db in list(databases.items()):  # a copy: a rebalance may open others
        if TP(topic, partition) not in actives:
            continue
        for key, value in store._visible_items(db):
            yield store._decode_key(key), store._decode_value(value), partition


def current_partition() -> int | None:
    """Return the partition of the record being processed (where a table write goes)."""
    event = faust_streams.current_event()
    return None if event is None else event.message.partition


def current_record() -> tuple[TP, int] | None:
    """Return the (topic partition, offset) of the record being processed, if any."""
    event = faust_streams.current_event()
    if event is None:
        return None
    msg = event.message
    return TP(msg.topic, msg.partition), msg.offset
