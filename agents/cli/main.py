"""The ``learnstream`` command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import click

from learnstream.agents.cli.audit import audit
from learnstream.agents.cli.common import connection_of_settings, settings_or_fail
from learnstream.agents.cli.erase import erase
from learnstream.agents.cli.learn import learn
from learnstream.agents.cli.privacy import privacy
from learnstream.agents.cli.trainers import export, quality
from learnstream.streams.config.usererrors import UserError

__all__ = ["main"]


def _one_line(exc: BaseException) -> str | None:
    """Return the one-line message of an error the user can fix, or None for a bug."""
    from aiokafka.errors import KafkaConnectionError

    from learnstream.streams.io.embedded import EmbeddedBrokerError

    if isinstance(exc, UserError | EmbeddedBrokerError):
        return str(exc)
    if isinstance(exc, KafkaConnectionError):
        return "lost the connection to the Kafka broker: check LEARNSTREAM_BROKER_URL"
    return None


def _verbose() -> bool:
    ctx = click.get_current_context(silent=True)
    flag = bool(ctx and ctx.find_root().params.get("verbose"))
    return flag or os.environ.get("LEARNSTREAM_LOG_LEVEL", "").lower() == "debug"


class _Cli(click.Group):
    """Turn an error the user can fix into one line (a traceback only with --verbose)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            message = _one_line(exc)
            if message is None or _verbose():
                raise
            raise click.ClickException(message) from exc


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="learnstream", message="learnstream %(version)s")
@click.option(
    "-v", "--verbose", is_flag=True, help="show tracebacks (or LEARNSTREAM_LOG_LEVEL=debug)"
)
def main(verbose: bool) -> None:
    """Turn MPLP agent feedback on Kafka into anonymized LearningSamples.

    Configure with LEARNSTREAM_* environment variables; `learnstream config` shows them.
    """


@main.command()
def worker() -> None:
    """Run the stream processor (starts the embedded broker when no broker is configured)."""
    settings = settings_or_fail()  # a bad variable is reported before the worker's imports
    from learnstream.agents.worker import run_worker

    run_worker(settings)


@main.command()
@click.option("--rate", default=20.0, show_default=True, help="simulated plans per second")
@click.option("--duration", default=0.0, help="stop after N seconds (0 = until Ctrl-C)")
@click.option(
    "--web-port",
    type=int,
    default=None,
    help="worker /metrics port [LEARNSTREAM_WEB_PORT; else 6066, or a free port if taken]",
)
def demo(rate: float, duration: float, web_port: int | None) -> None:
    """Run embedded broker + worker + a simulated agent runtime, with a live view.

    Ctrl-C (or SIGTERM) stops it and prints a summary; nothing is left behind.
    """
    settings = settings_or_fail()
    from learnstream.streams.io.demo import run_demo

    sys.exit(run_demo(settings, rate=rate, duration=duration, web_port=web_port))


@main.command()
@click.option("--json", "as_json", is_flag=True, help="nested JSON instead of variables")
def config(as_json: bool) -> None:
    """Print every effective setting once, as LEARNSTREAM_* variables (secrets masked)."""
    from learnstream.streams.config.effective import effective, env_lines

    settings = settings_or_fail()
    if as_json:
        click.echo(json.dumps(effective(settings), indent=2))
    else:
        click.echo("\n".join(env_lines(settings)))


@main.group()
def topics() -> None:
    """Manage learnstream's Kafka topics."""


@topics.command("create")
def topics_create() -> None:
    """Create every topic with its partitions, replication and configs (idempotent).

    Replication is three, or one per broker on a smaller cluster, with min.insync.replicas
    one less (LEARNSTREAM_TOPICS__REPLICATION_FACTOR, __MIN_INSYNC_REPLICAS); an existing
    topic is never altered, what differs is printed: exists (differs: ...).
    """
    from learnstream.streams.io.admin import create_topics

    settings = settings_or_fail()
    for name, status in asyncio.run(
        create_topics(connection_of_settings(settings), settings.topics)
    ):
        click.echo(f"{status:8} {name}")


@main.group()
def dlq() -> None:
    """Inspect and replay dead letters (mplp.learning_dlq)."""


@dlq.command("show")
@click.option("--limit", default=50, show_default=True, help="most recent N dead letters")
@click.option("--reason", default=None, help="only this reason (e.g. schema_violation)")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per line")
def dlq_show(limit: int, reason: str | None, as_json: bool) -> None:
    """Print dead letters: reason, source topic/partition/offset, error, value."""
    from learnstream.streams.io.dlq_tools import load_dead_letters

    settings = settings_or_fail()
    letters = asyncio.run(
        load_dead_letters(connection_of_settings(settings), settings.topics.name("dlq"))
    )
    chosen = [d for d in letters if reason in (None, d.record.reason)][-limit:]
    for letter in chosen:
        click.echo(json.dumps(letter.as_dict()) if as_json else letter.describe())
    if not as_json:
        click.echo(f"-- {len(chosen)} of {len(letters)} dead letters shown", err=True)


@dlq.command("replay")
@click.option("--reason", default=None, help="only this reason (e.g. plan_state_missing)")
@click.option("--yes", is_flag=True, help="do not ask for confirmation")
def dlq_replay(reason: str | None, yes: bool) -> None:
    """Re-publish dead letters, unchanged, to the topic they came from."""
    from learnstream.streams.io.dlq_tools import load_dead_letters, replay

    settings = settings_or_fail()
    broker = connection_of_settings(settings)
    letters = asyncio.run(load_dead_letters(broker, settings.topics.name("dlq")))
    chosen = [d for d in letters if reason in (None, d.record.reason)]
    if not chosen:
        click.echo("nothing to replay")
        return
    if not yes:
        click.confirm(f"replay {len(chosen)} dead letters to their source topics?", abort=True)
    sent = asyncio.run(replay(broker, chosen))
    click.echo(f"replayed {sent} dead letters")


main.add_command(export)
main.add_command(quality)
main.add_command(audit)
main.add_command(erase)
main.add_command(learn)
main.add_command(privacy)

if __name__ == "__main__":
    main(prog_name="learnstream")
