"""Refuse to start on a Faust or aiokafka whose private seams are not the ones we patch.

Each seam of ``agents/seams/faust_compat.py`` (numbered as in its docstring) is checked where it
lives: a method by its parameter names, an attribute by the code that creates it, a call
Faust makes into a patched method by the caller's source text. pyproject.toml pins both
packages to ``PINNED``; another version passes if its seams are unchanged.
"""

from __future__ import annotations

import importlib
import inspect
import platform
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from learnstream.streams.config.usererrors import UserError

__all__ = ["PINNED", "SEAMS", "Seam", "check"]

#: The versions the seams were written and tested against (pyproject.toml pins these).
PINNED = {"faust-streaming": "0.15.3", "aiokafka": "0.14.0"}

_FAUST, _AIOKAFKA, _PYTHON = "faust-streaming", "aiokafka", "Python"
_BASE = "faust.transport.consumer:Consumer"
_DRIVER = "faust.transport.drivers.aiokafka:Consumer"  # the class a worker's consumer is
_ROCKSDB = "faust.stores.rocksdb:Store"


@dataclass(frozen=True)
class Seam:
    """One private attribute we use: where it is, its parameters, the code it relies on."""

    package: str
    name: str  # as an error message names it
    target: str  # "module:Class.attribute"
    params: tuple[str, ...] | None = None
    source: tuple[str, ...] = ()  # text the target's source must contain

    def problem(self) -> str | None:
        """Return what changed (``"Consumer._commit changed"``), or None."""
        found = _resolve(self.target)
        if found is None:
            return f"{self.name} is missing"
        if self.params is not None and _params(found) != self.params:
            return f"{self.name} changed"
        text = _source(found)
        if text is not None and not all(part in text for part in self.source):
            return f"{self.name} changed"
        return None


SEAMS: tuple[Seam, ...] = (
    Seam(_FAUST, "App._new_consumer", "faust:App._new_consumer", ("self",)),
    Seam(_FAUST, "Consumer._read_offset", f"{_BASE}.__init__", None, ("self._read_offset =",)),
    Seam(
        _FAUST,
        "Consumer._drain_messages",
        f"{_DRIVER}._drain_messages",
        ("self", "fetcher"),
        (
            "self._read_offset.__getitem__",
            "self.wait_first(",
            "callback(message), self.suspend_flow.wait()",
        ),
    ),
    Seam(_FAUST, "Consumer.suspend_flow", f"{_BASE}.__init__", None, ("self.suspend_flow = ",)),
    Seam(_FAUST, "Consumer._new_offset", f"{_DRIVER}._new_offset", ("self", "tp")),
    Seam(
        _FAUST,
        "Consumer._to_message",
        f"{_DRIVER}._to_message",
        ("self", "tp", "record"),
        ("return ConsumerMessage(",),
    ),
    Seam(
        _FAUST,
        "Consumer.getmany",
        f"{_BASE}.getmany",
        ("self", "timeout"),
        ("to_message = self._to_message",),
    ),
    Seam(
        _FAUST,
        "Consumer._filter_committable_offsets",
        f"{_DRIVER}._filter_committable_offsets",
        ("self", "tps"),
        ("self._new_offset(",),
    ),
    Seam(
        _FAUST,
        "Consumer._acked",
        f"{_BASE}.__init__",
        None,
        ("self._acked =", "self._acked_index ="),
    ),
    Seam(
        _FAUST,
        "Consumer._filter_tps_with_pending_acks",
        f"{_DRIVER}._filter_tps_with_pending_acks",
        ("self", "topics"),
    ),
    Seam(
        _FAUST,
        "Consumer.force_commit",
        f"{_DRIVER}.force_commit",
        ("self", "topics", "start_new_transaction"),
        ("self._filter_tps_with_pending_acks(",),
    ),
    Seam(
        _FAUST,
        "Consumer._committed_offset",
        f"{_BASE}.__init__",
        None,
        ("self._committed_offset =",),
    ),
    Seam(_FAUST, "Consumer._commit", f"{_DRIVER}._commit", ("self", "offsets")),
    Seam(
        _FAUST,
        "Consumer._commit_offsets",
        f"{_DRIVER}._commit_offsets",
        ("self", "offsets", "start_new_transaction"),
        ("self.transactions.commit(", "self._commit("),
    ),
    Seam(
        _FAUST,
        "TransactionManager.commit",
        "faust.transport.consumer:TransactionManager.commit",
        ("self", "offsets", "start_new_transaction"),
        ('f"{group_id}-{group}-{tp.partition}"',),
    ),
    Seam(
        _FAUST,
        "ProducerBuffer.pending",
        "faust.transport.producer:ProducerBuffer.__post_init__",
        None,
        ("self.pending = asyncio.Queue()",),
    ),
    Seam(
        _FAUST,
        "ProducerBuffer._handle_pending",
        "faust.transport.producer:ProducerBuffer._handle_pending",
        ("self",),
        ("self.pending.get",),
    ),
    Seam(
        _FAUST,
        "faust.streams._current_event",
        "faust.streams:current_event",
        (),
        ("_current_event.get(None)", "eventref()"),
    ),
    Seam(
        _FAUST,
        "ThreadDelegateConsumer._thread",
        "faust.transport.consumer:ThreadDelegateConsumer.__init__",
        None,
        ("self._thread = ",),
    ),
    Seam(
        _FAUST,
        "QueueServiceThread.call_thread",
        "mode.threads:QueueServiceThread.call_thread",
        ("self", "fun", "args", "kwargs"),
    ),
    Seam(
        _FAUST,
        "AIOKafkaConsumerThread._ensure_consumer",
        "faust.transport.drivers.aiokafka:AIOKafkaConsumerThread._ensure_consumer",
        ("self",),
    ),
    Seam(
        _FAUST,
        "AIOKafkaConsumerThread._create_worker_consumer",
        "faust.transport.drivers.aiokafka:AIOKafkaConsumerThread._create_worker_consumer",
        ("self", "transport"),
        ("aiokafka.AIOKafkaConsumer(", "fetch_max_wait_ms="),
    ),
    Seam(_PYTHON, "asyncio.Queue._getters", "asyncio:Queue.__init__", None, ("self._getters",)),
    Seam(_FAUST, "RocksDB Store._dbs", f"{_ROCKSDB}.__init__", None, ("self._dbs = ",)),
    Seam(_FAUST, "Consumer.resume_partitions", f"{_BASE}.resume_partitions", ("self", "tps")),
    Seam(_FAUST, "Consumer.pause_partitions", f"{_BASE}.pause_partitions", ("self", "tps")),
    Seam(
        _FAUST,
        "Consumer.on_buffer_drop",
        f"{_BASE}.on_buffer_drop",
        ("self", "tp"),
        ("active_partitions.add(tp)",),
    ),
    Seam(_FAUST, "RocksDB Store._visible_items", f"{_ROCKSDB}._visible_items", ("self", "db")),
    Seam(_FAUST, "Store._decode_key", "faust.stores.base:Store._decode_key", ("self", "key")),
    Seam(_FAUST, "Store._decode_value", "faust.stores.base:Store._decode_value", ("self", "value")),
    Seam(
        _AIOKAFKA,
        "AIOKafkaConsumer._client",
        "aiokafka:AIOKafkaConsumer.__init__",
        None,
        ("self._client = ",),
    ),
    Seam(
        _AIOKAFKA,
        "AIOKafkaConsumer._fetch_max_wait_ms",
        "aiokafka:AIOKafkaConsumer.__init__",
        None,
        ("self._fetch_max_wait_ms = fetch_max_wait_ms",),
    ),
    Seam(
        _AIOKAFKA,
        "AIOKafkaConsumer._fetch_min_bytes",
        "aiokafka:AIOKafkaConsumer.__init__",
        None,
        ("self._fetch_min_bytes = fetch_min_bytes",),
    ),
    Seam(
        _AIOKAFKA,
        "AIOKafkaConsumer.start",
        "aiokafka:AIOKafkaConsumer.start",
        ("self",),
        ("fetch_max_wait_ms=self._fetch_max_wait_ms", "fetch_min_bytes=self._fetch_min_bytes"),
    ),
    Seam(
        _AIOKAFKA,
        "AIOKafkaConsumer._fetcher",
        "aiokafka:AIOKafkaConsumer.start",
        ("self",),
        ("self._fetcher = Fetcher(",),
    ),
    Seam(
        _AIOKAFKA,
        "Fetcher._proc_fetch_request",
        "aiokafka.consumer.fetcher:Fetcher._proc_fetch_request",
        ("self", "assignment", "node_id", "request"),
        (
            "for topic, partitions in request.topics:",
            "tp_state = assignment.state_value(tp)",
            "tp_state.lso = lso",
            "tp_state.timestamp = now_ms",
            "backoff=self._prefetch_backoff",  # seam 18
        ),
    ),
    Seam(
        _AIOKAFKA,
        "Fetcher._prefetch_backoff",
        "aiokafka.consumer.fetcher:Fetcher.__init__",
        None,
        ("self._prefetch_backoff = prefetch_backoff",),
    ),
    Seam(
        _AIOKAFKA,
        "Fetcher._fetch_requests_routine",
        "aiokafka.consumer.fetcher:Fetcher._fetch_requests_routine",
        ("self",),
        ("self._proc_fetch_request(",),
    ),
    Seam(
        _AIOKAFKA,
        "AIOKafkaClient.force_metadata_update",
        "aiokafka.client:AIOKafkaClient.force_metadata_update",
        ("self",),
    ),
    Seam(
        _AIOKAFKA,
        "Sender._find_coordinator",
        "aiokafka.producer.sender:Sender._find_coordinator",
        ("self", "coordinator_type", "coordinator_key"),
        ("raise KafkaError(repr(err)) from err", "self._retry_backoff"),
    ),
)


def _resolve(target: str) -> Any:
    module_name, _, path = target.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in path.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return getattr(found, "fun", found)  # mode's @Service.task keeps the function in .fun


def _params(found: Any) -> tuple[str, ...] | None:
    try:
        return tuple(inspect.signature(found).parameters)
    except (TypeError, ValueError):
        return None  # not a callable any more


def _source(found: Any) -> str | None:
    try:
        return inspect.getsource(found)
    except (OSError, TypeError):
        return None  # installed without sources: the parameter check has to do


def _installed(package: str) -> str:
    if package == _PYTHON:
        return platform.python_version()
    try:
        return version(package)
    except PackageNotFoundError:
        return "(not installed)"


def _message(seam: Seam, what: str) -> str:
    installed, pinned = _installed(seam.package), PINNED.get(seam.package)
    if pinned is None:
        return f"{seam.package} {installed}: {what}; learnstream runs on Python 3.11 to 3.13"
    if installed == pinned:
        return (
            f"{seam.package} {installed} is not the release learnstream was built for: "
            f"{what}; reinstall {seam.package}=={pinned}"
        )
    return (
        f"{seam.package} {installed} is not the version learnstream was built for ({pinned}): "
        f"{what}; install {seam.package}=={pinned}"
    )


def check(seams: tuple[Seam, ...] = SEAMS) -> None:
    """Raise UserError naming the first seam that is missing or changed, and the versions."""
    problems = [(seam, what) for seam in seams if (what := seam.problem()) is not None]
    if problems:
        seam, what = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UserError(_message(seam, what) + more)
