"""``learnstream learn``: the A2E learn capability from the command line (replay sampling)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import click
from pydantic import ValidationError

from learnstream.agents.cli.common import connection_of_settings, settings_or_fail
from learnstream.streams.a2e.models import Experience
from learnstream.streams.a2e.replay import REPLAY_STRATEGIES, sample
from learnstream.streams.io.connection import Broker

__all__ = ["learn", "read_experiences"]


def read_experiences(values: list[bytes | None]) -> tuple[list[Experience], int]:
    """Return the experiences of records in topic order, and how many were unreadable."""
    found, bad = [], 0
    for value in values:
        try:
            found.append(Experience.model_validate_json(value or b""))
        except ValidationError:
            bad += 1
    return found, bad


async def _load(broker: Broker, topic: str) -> tuple[list[Experience], int]:
    from learnstream.streams.io.reader import read_topic

    records = await read_topic(broker, topic)
    records.sort(key=lambda r: (r.timestamp, r.partition, r.offset))  # oldest first
    return read_experiences([r.value for r in records])


@click.group()
def learn() -> None:
    """A2E learn: experience replay (feedback, adapt and stats go through the worker)."""


@learn.command()
@click.option("--n", "n", type=click.IntRange(min=0), default=1000, show_default=True,
              help="experiences to draw (all of them when there are fewer)")  # fmt: skip
@click.option("--strategy", type=click.Choice(REPLAY_STRATEGIES), default="uniform",
              show_default=True,
              help="uniform; recent (the newest --window); prioritized (by |reward|)")  # fmt: skip
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="recent: draw from the newest WINDOW experiences (default: --n)")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="same seed, same batch")
def replay(n: int, strategy: str, window: int | None, seed: int) -> None:
    """Draw a replay batch from a2e.learn.experiences; print it as JSON lines.

    Reads the topic to its end (LEARNSTREAM_BROKER_URL), oldest first by record time.
    """
    settings = settings_or_fail()
    broker = connection_of_settings(settings)
    experiences, bad = asyncio.run(_load(broker, settings.topics.name("experiences")))
    batch = sample(experiences, n, strategy, seed=seed, window=window)
    out: Any = sys.stdout
    for item in batch:
        out.write(json.dumps(item.model_dump(mode="json"), separators=(",", ":")) + "\n")
    note = f"drew {len(batch)} of {len(experiences)} experiences ({strategy}, seed {seed})"
    click.echo(note + (f"; {bad} unreadable records skipped" if bad else ""), err=True)
