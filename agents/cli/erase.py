"""``learnstream erase``: tombstone a project's samples, preference pairs and reward samples."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

import click
from aiokafka import AIOKafkaProducer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from learnstream.agents.cli.common import When, connection_of_settings, settings_or_fail
from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.config.usererrors import UserError
from learnstream.streams.io.connection import Broker, connection_of
from learnstream.streams.io.reader import RangeProgress, read_range
from learnstream.streams.privacy.erasure import (
    Scope,
    Selection,
    choose_pairs,
    choose_rewards,
    choose_samples,
)

__all__ = ["Erasure", "erase", "find", "write"]

#: Read in this order (pairs and reward samples follow from the samples chosen).
TOPICS = ("samples", "preference_pairs", "reward_samples")
#: What the summary calls each topic's records.
_NOUNS = {"samples": "samples", "preference_pairs": "preference pairs",
          "reward_samples": "reward samples"}  # fmt: skip
#: Redraw a progress bar at most this often.
_EVERY_S = 0.1
Report = Callable[[str, int, int], None]  # (what, done, total)


@dataclass
class Erasure:
    """What one erase found on each topic (settings field -> topic name, selection)."""

    names: dict[str, str]
    found: dict[str, Selection] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Return how many tombstones the erase writes."""
        return sum(len(s.to_tombstone) for s in self.found.values())

    def counts(self, attr: str) -> str:
        """Return e.g. ``3 samples, 1 preference pairs, 0 reward samples`` of a count."""
        return ", ".join(
            f"{_count(selection, attr):,} {_NOUNS[f]}" for f, selection in self.found.items()
        )


def _count(selection: Selection, attr: str) -> int:
    return len(selection.to_tombstone) if attr == "new" else int(getattr(selection, attr))


async def _select(
    broker: Broker, topic: str, selection: Selection, report: Report, *, required: bool
) -> Selection:
    """Read ``topic`` whole, up to its end at start, into ``selection``."""
    progress = RangeProgress()
    async for record in read_range(broker, topic, progress=progress):
        selection.take(record)
        report(f"reading {topic}", progress.total - progress.left, progress.total)
    if required and not progress.partitions:  # a typo must not pass as "nothing to erase"
        raise UserError(f"the broker has no topic {topic}: check LEARNSTREAM_TOPICS__PREFIX")
    if progress.idle:
        raise UserError(
            f"the read of {topic} stopped with {progress.left} offsets left (no record came "
            "for 10 s; a transaction still open?): nothing was erased, run it again"
        )
    return selection


async def find(broker: Broker, topics: TopicSettings, scope: Scope, report: Report) -> Erasure:
    """Read the samples, pairs and reward samples topics; return what to tombstone."""
    erasure = Erasure({f: topics.name(f) for f in TOPICS})
    names = erasure.names
    samples = Selection(choose_samples(scope))
    erasure.found["samples"] = await _select(
        broker, names["samples"], samples, report, required=True
    )
    chosen = samples.chosen_keys()
    pairs = Selection(choose_pairs(scope, chosen))
    erasure.found["preference_pairs"] = await _select(
        broker, names["preference_pairs"], pairs, report, required=False
    )
    rewards = Selection(choose_rewards(chosen))
    erasure.found["reward_samples"] = await _select(
        broker, names["reward_samples"], rewards, report, required=False
    )
    return erasure


async def write(broker: Broker, erasure: Erasure, report: Report, *, one_per_batch: bool) -> int:
    """Write the tombstones (acks=all); return how many the broker acknowledged.

    Samples go last: a run stopped half-way leaves samples whose pairs and reward samples
    are gone already, and a re-run finds those samples, so nothing is left behind.
    """
    options = connection_of(broker).client_options()
    batch = {"max_batch_size": 1} if one_per_batch else {}  # the embedded broker counts batches
    producer = AIOKafkaProducer(**options, acks="all", **batch)
    await producer.start()
    done, total = 0, erasure.total
    try:
        for f in reversed(TOPICS):
            topic = erasure.names[f]
            acks = [
                await producer.send(topic, value=None, key=key, partition=partition)
                for partition, key in erasure.found[f].to_tombstone
            ]
            for ack in acks:
                await ack
                done += 1
                report("writing tombstones", done, total)
    finally:
        await producer.stop()
    return done


@contextmanager
def _progress(console: Console) -> Iterator[Report]:
    """Yield a reporter: a rich bar on a terminal (stderr), nothing otherwise."""
    if not console.is_terminal:
        yield lambda what, done, total: None
        return
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task, last = bar.add_task("erase", total=None), [0.0]

        def report(what: str, done: int, total: int) -> None:
            moment = time.monotonic()
            if moment - last[0] >= _EVERY_S or done == total:
                last[0] = moment
                bar.update(task, description=what, completed=done, total=total or None)

        yield report


def _project(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value or value != value.strip() or any(c.isspace() for c in value):
        raise click.BadParameter("a project id has no spaces, e.g. proj-acme or a UUID")
    return value


@click.command()
@click.option(
    "--project",
    required=True,
    callback=_project,
    help="the project whose data goes: its id as the runtime sends it (proj-acme) or the "
    "UUID samples carry in meta.project_id",
)
@click.option("--since", type=When(), default=None, help="only records written from this time")
@click.option("--until", type=When(), default=None, help="only records written before this time")
@click.option("--yes", is_flag=True, help="do not ask; needed when stdin is not a terminal")
@click.option("--dry-run", is_flag=True, help="count what would be erased, write nothing")
def erase(
    project: str, since: datetime | None, until: datetime | None, yes: bool, dry_run: bool
) -> None:
    """Delete a project's samples, preference pairs and reward samples from the topics.

    Writes a tombstone (same key, no value) for every sample of the project on the samples
    topic, for every preference pair of the project or made from one of its samples, and
    for the reward sample of each of its samples. The topics are compacted: the broker then
    removes the records for good (when is up to its log cleaner: segment.ms,
    min.cleanable.dirty.ratio); `learnstream export` and the consumer API leave them out
    at once. Stop new collection first: publish {"project_id": ..., "enabled": false} to the
    consent topic, or samples written after the erase stay.

    \b
    --project   the project id as the runtime sends it, or its UUID from meta.project_id
                (the same project either way, any case)
    --since / --until   only records written in that time (record timestamp, as
                `learnstream export` reads it; ISO-8601, UTC without a zone); by default
                everything the topics hold

    The topics are read from the beginning to their end at start. The counts are printed,
    never a record's content. Safe to run again: keys already erased are not counted again.
    On a terminal it asks before writing; otherwise pass --yes. Not erased: A2E experiences
    (a2e.learn.experiences), whose topic is keyed per request and not compacted; they go
    when the topic's retention.ms expires them.
    """
    if not yes and not dry_run and not sys.stdin.isatty():
        raise click.UsageError("stdin is not a terminal, so erase cannot ask: pass --yes")
    if since is not None and until is not None and until <= since:
        raise UserError("--until must be after --since")
    settings = settings_or_fail()
    broker = connection_of_settings(settings)
    scope, console = Scope.of(project, since, until), Console(stderr=True)
    with _progress(console) as report:
        erasure = asyncio.run(find(broker, settings.topics, scope, report))
    already = f"already erased: {erasure.counts('already_erased')}"
    unreadable = f"unreadable, left as they are: {erasure.counts('unreadable')}"
    if dry_run:
        click.echo(
            f"would tombstone {erasure.total:,} records: {erasure.counts('new')} of project "
            f"{project} ({already}; {unreadable})"
        )
        return
    if erasure.total == 0:
        click.echo(
            f"tombstoned 0 records: nothing new of project {project} ({already}; {unreadable})"
        )
        return
    if not yes:
        click.confirm(
            f"write {erasure.total:,} tombstones ({erasure.counts('new')}) for project {project}?",
            abort=True,
            err=True,
        )
    one_per_batch = bool(settings.broker.one_record_per_batch)
    with _progress(console) as report:
        written = asyncio.run(write(broker, erasure, report, one_per_batch=one_per_batch))
    click.echo(
        f"tombstoned {written:,} records: {erasure.counts('new')} of project {project} "
        f"({already}; {unreadable})"
    )
