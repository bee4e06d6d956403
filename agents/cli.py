"""The ``learnstream`` command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import click
from pydantic import ValidationError
from pydantic_settings import SettingsError

from streams.settings import Settings
from streams.usererrors import UserError, check_broker, settings_problem

__all__ = ["main"]


def _settings() -> Settings:
    try:
        return Settings()
    except (ValidationError, SettingsError) as exc:
        raise UserError(settings_problem(exc)) from exc


def _broker_variable(settings: Settings) -> str:
    return "LEARNSTREAM_BROKER_URL" if settings.broker_url else "LEARNSTREAM_BROKER__URL"


def _bootstrap(settings: Settings) -> str:
    from streams.admin import bootstrap_of

    if not settings.kafka_url:
        raise UserError(
            "no broker configured: set LEARNSTREAM_BROKER_URL=kafka://host:9092 "
            "(the embedded broker lives only inside `learnstream worker` / `learnstream demo`)"
        )
    check_broker(settings.kafka_url, _broker_variable(settings))
    return bootstrap_of(settings.kafka_url)


def _one_line(exc: BaseException) -> str | None:
    """Return the one-line message of an error the user can fix, or None for a bug."""
    from aiokafka.errors import KafkaConnectionError

    from streams.embedded import EmbeddedBrokerError

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
    from agents.worker import run_worker

    run_worker(_settings())


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
    from streams.sim.demo import run_demo

    sys.exit(run_demo(_settings(), rate=rate, duration=duration, web_port=web_port))


@main.command()
@click.option("--url", default=None, help="a worker's /quality [http://WEB_HOST:WEB_PORT/quality]")
@click.option("--json", "as_json", is_flag=True, help="print the raw JSON")
def quality(url: str | None, as_json: bool) -> None:
    """Show the current 5m / 1h window's quality rates per family, from a running worker.

    Each worker reports the input partitions it owns; with several workers ask each one, or
    read the summed figures in Prometheus (learnstream_window_samples).
    """
    import urllib.request

    from rich.console import Console

    from streams.quality import report_table

    settings = _settings()
    host = "127.0.0.1" if settings.web_host in ("0.0.0.0", "::") else settings.web_host  # noqa: S104
    where = "--url to its address" if url else "LEARNSTREAM_WEB_PORT to its port"
    url = url or f"http://{host}:{settings.web_port}/quality"
    if not url.startswith(("http://", "https://")):
        raise UserError("--url must be an http(s):// URL")
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - scheme checked
            report = json.load(response)
    except (OSError, ValueError) as exc:
        raise UserError(
            f"nothing answers at {url}: is a worker running? Start one, or set {where}"
        ) from exc
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    # Say whose figures these are: any program may listen on the port.
    whose = f" (app_id {report['app_id']})" if "app_id" in report else ""
    click.echo(f"from the worker at {url}{whose}; --url asks another")
    Console().print(report_table(report))


@main.command()
@click.option("--json", "as_json", is_flag=True, help="nested JSON instead of variables")
def config(as_json: bool) -> None:
    """Print every effective setting once, as LEARNSTREAM_* variables (secrets masked)."""
    from streams.configview import effective, env_lines

    settings = _settings()
    if as_json:
        click.echo(json.dumps(effective(settings), indent=2))
    else:
        click.echo("\n".join(env_lines(settings)))


@main.group()
def topics() -> None:
    """Manage learnstream's Kafka topics."""


@topics.command("create")
def topics_create() -> None:
    """Create every topic with its partitions and configs (idempotent)."""
    from streams.admin import create_topics

    settings = _settings()
    for name, status in asyncio.run(create_topics(_bootstrap(settings), settings.topics)):
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
    from streams.dlq_tools import load_dead_letters

    settings = _settings()
    letters = asyncio.run(load_dead_letters(_bootstrap(settings), settings.topics.name("dlq")))
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
    from streams.dlq_tools import load_dead_letters, replay

    settings = _settings()
    bootstrap = _bootstrap(settings)
    letters = asyncio.run(load_dead_letters(bootstrap, settings.topics.name("dlq")))
    chosen = [d for d in letters if reason in (None, d.record.reason)]
    if not chosen:
        click.echo("nothing to replay")
        return
    if not yes:
        click.confirm(f"replay {len(chosen)} dead letters to their source topics?", abort=True)
    sent = asyncio.run(replay(bootstrap, chosen))
    click.echo(f"replayed {sent} dead letters")


if __name__ == "__main__":
    main(prog_name="learnstream")
