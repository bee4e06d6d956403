"""Trainers' consumer API: LearningSamples (or preference pairs) from a time range or live.

    from learnstream.streams.io.consumer import iter_samples
    since = datetime(2026, 11, 1, tzinfo=UTC)
    for sample in iter_samples(since, families=["intent_resolution"], qualities=["good"]):
        print(sample.input, sample.output)

The range is on the record timestamp (set when the worker wrote the sample, ~ ``created_at``),
``since <= t < until``, read up to the topic's end when called; ``follow=True`` tails the
topic instead (from ``since``, or from now) and never ends. Records are decoded (Avro or
JSON), validated, deduplicated by id (a replay re-emits the same sample id) and filtered;
bad records are skipped and counted in ``stats``. Erased records (``learnstream erase``)
are never yielded, before compaction too: a range read skips every record whose key has a
tombstone after it, which takes a first pass over the range for the tombstones; a tail skips
tombstones, but cannot take back a record it yielded before its tombstone came. The broker
(TLS and SASL included) and topic names come from the LEARNSTREAM_* settings unless given:
``bootstrap=`` takes a bootstrap string (plaintext) or a KafkaConnection. ``learnstream
export`` is built on this.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

from aiokafka import ConsumerRecord

from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.export.files import write_export
from learnstream.streams.export.rows import PAIR_FORMATS, Dedup, RowMaker, SampleFilter
from learnstream.streams.io.connection import Broker, KafkaConnection, connection_of
from learnstream.streams.io.reader import RangeProgress, read_range, tail
from learnstream.streams.samples.pairs import PreferencePair
from learnstream.streams.samples.sample import LearningSample

__all__ = [
    "ReadStats",
    "aiter_pairs",
    "aiter_samples",
    "export_to",
    "iter_pairs",
    "iter_samples",
    "resolve",
]

T = TypeVar("T")
Record: TypeAlias = ConsumerRecord[bytes, bytes]


@dataclass
class ReadStats:
    """What a read did so far: records read, bad / duplicate / filtered ones, offsets left."""

    read: int = 0
    bad: int = 0
    duplicates: int = 0
    filtered: int = 0
    kept: int = 0
    progress: RangeProgress = field(default_factory=RangeProgress)
    #: called after every record read (a progress bar)
    listener: Callable[[ReadStats], None] | None = None

    @property
    def skipped(self) -> int:
        """Return the records read but not kept."""
        return self.bad + self.duplicates + self.filtered


def resolve(
    bootstrap: Broker | None, topic: str | None, field_name: str
) -> tuple[KafkaConnection, str]:
    """Return (connection, topic), the missing ones from the LEARNSTREAM_* settings."""
    if bootstrap and topic:
        return connection_of(bootstrap), topic
    from learnstream.streams.config.settings import Settings

    settings = Settings()
    topic = topic or settings.topics.name(field_name)
    if bootstrap:
        return connection_of(bootstrap), topic
    if not settings.kafka_url:
        raise ValueError("no broker: pass bootstrap= or set LEARNSTREAM_BROKER_URL")
    return KafkaConnection.of(settings.broker, settings.kafka_url), topic


def records(
    broker: Broker,
    topic: str,
    since: datetime | None,
    until: datetime | None,
    follow: bool,
    progress: RangeProgress,
) -> AsyncIterator[Record]:
    """Return the reader of a range (bounded) or of a live tail."""
    if follow:
        if until is not None:
            raise ValueError("follow=True reads until stopped: it takes no until")
        return tail(broker, topic, since)
    return read_range(broker, topic, since, until, progress=progress, live_only=True)


def decode_sample(value: bytes) -> LearningSample:
    """Return the sample of a record value (Avro or JSON); ValueError when it is not one."""
    return LearningSample.model_validate(decode_any(value))


def decode_pair(value: bytes) -> PreferencePair:
    """Return the preference pair of a record value (JSON); ValueError when it is not one."""
    return PreferencePair.model_validate_json(value)


async def decoded(
    source: AsyncIterator[Record],
    decode: Callable[[bytes], T],
    key: Callable[[T], str],
    keep: Callable[[T], bool],
    stats: ReadStats,
) -> AsyncIterator[tuple[Record, T]]:
    """Yield (record, model) of each record that decodes, is new, and passes ``keep``."""
    dedup = Dedup()
    async for record in source:
        stats.read += 1
        item = _decode(decode, record, stats)
        if item is None:
            pass
        elif not keep(item):  # before dedup: only kept ids are remembered
            stats.filtered += 1
        elif not dedup.first(key(item)):
            stats.duplicates += 1
        else:
            stats.kept += 1
            yield record, item
        if stats.listener is not None:
            stats.listener(stats)


def _decode(decode: Callable[[bytes], T], record: Record, stats: ReadStats) -> T | None:
    try:
        return decode(record.value or b"")
    except ValueError:  # CodecError and ValidationError are ValueErrors
        stats.bad += 1  # never logged with its value: it may hold personal data
        return None


async def aiter_samples(
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    follow: bool = False,
    families: Iterable[str] = (),
    qualities: Iterable[str] = (),
    project: str | None = None,
    bootstrap: Broker | None = None,
    topic: str | None = None,
    stats: ReadStats | None = None,
) -> AsyncIterator[LearningSample]:
    """Yield the LearningSamples of a time range (or live, ``follow=True``), filtered."""
    stats = stats if stats is not None else ReadStats()
    bootstrap, topic = resolve(bootstrap, topic, "samples")
    where = SampleFilter(frozenset(families), frozenset(qualities), project)
    source = records(bootstrap, topic, since, until, follow, stats.progress)
    async for _, sample in decoded(source, decode_sample, sample_key, where.accepts, stats):
        yield sample


async def aiter_pairs(
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    follow: bool = False,
    families: Iterable[str] = (),
    project: str | None = None,
    bootstrap: Broker | None = None,
    topic: str | None = None,
    stats: ReadStats | None = None,
) -> AsyncIterator[PreferencePair]:
    """Yield the preference pairs (``mplp.preference_pairs``) of a time range, filtered."""
    stats = stats if stats is not None else ReadStats()
    bootstrap, topic = resolve(bootstrap, topic, "preference_pairs")
    where = SampleFilter(frozenset(families), frozenset(), project)
    source = records(bootstrap, topic, since, until, follow, stats.progress)
    async for _, pair in decoded(source, decode_pair, _pair_id, where.accepts_pair, stats):
        yield pair


def sample_key(sample: LearningSample) -> str:
    """Return the id samples are deduplicated by."""
    return sample.sample_id


def _pair_id(pair: PreferencePair) -> str:
    return pair.pair_id


def iter_samples(
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    follow: bool = False,
    families: Iterable[str] = (),
    qualities: Iterable[str] = (),
    project: str | None = None,
    bootstrap: Broker | None = None,
    topic: str | None = None,
    stats: ReadStats | None = None,
) -> Iterator[LearningSample]:
    """Yield what :func:`aiter_samples` yields, without asyncio (not inside a running loop)."""
    return _sync(
        aiter_samples(
            since,
            until,
            follow=follow,
            families=families,
            qualities=qualities,
            project=project,
            bootstrap=bootstrap,
            topic=topic,
            stats=stats,
        )
    )


def iter_pairs(*args: Any, **kwargs: Any) -> Iterator[PreferencePair]:
    """Yield what :func:`aiter_pairs` yields, without asyncio (same arguments)."""
    return _sync(aiter_pairs(*args, **kwargs))


def _sync(agen: AsyncIterator[T]) -> Iterator[T]:
    """Drive an async generator on a private event loop, one item at a time."""
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
    finally:
        if isinstance(agen, AsyncGenerator):
            loop.run_until_complete(agen.aclose())
        loop.close()


def export_to(
    out: Path,
    maker: RowMaker,
    where: SampleFilter,
    since: datetime | None,
    until: datetime | None,
    *,
    bootstrap: Broker | None = None,
    topic: str | None = None,
    stats: ReadStats | None = None,
) -> int:
    """Export the samples (pairs, for dpo / reward) of a range to ``out``; return rows written."""
    stats = stats if stats is not None else ReadStats()
    common: dict[str, Any] = {"bootstrap": bootstrap, "topic": topic, "stats": stats}
    items: Iterator[Any]
    if maker.fmt in PAIR_FORMATS:
        items = iter_pairs(since, until, families=where.families, project=where.project, **common)
    else:
        items = iter_samples(
            since,
            until,
            families=where.families,
            qualities=where.qualities,
            project=where.project,
            **common,
        )
    return write_export(maker.rows(items), out, maker.fmt)
