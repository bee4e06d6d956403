"""The ``learnstream`` command line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError
from pydantic_settings import SettingsError

from streams.export import FORMATS
from streams.samples import FAMILIES, QUALITIES
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


class _When(click.ParamType):
    """An ISO-8601 date-time; without a zone it is UTC."""

    name = "ISO"

    def convert(self, value: Any, param: click.Parameter | None, ctx: Any) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail("must be an ISO-8601 date-time, e.g. 2026-11-24T08:00:00Z", param, ctx)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _qualities(value: str | None) -> list[str]:
    asked = [q.strip() for q in (value or "").split(",") if q.strip()]
    if any(q not in QUALITIES for q in asked):
        raise UserError(f"--quality takes a comma-separated list of {', '.join(QUALITIES)}")
    return asked


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="row format")
@click.option("--since", type=_When(), default=None, help="from this record time (inclusive)")
@click.option("--until", type=_When(), default=None, help="to this record time (exclusive)")
@click.option(
    "--family",
    "families",
    multiple=True,
    type=click.Choice(FAMILIES),
    help="only this family (repeat for several)",
)
@click.option("--quality", "quality_list", default=None, help="e.g. good,acceptable")
@click.option("--project", default=None, help="only this meta.project_id")
@click.option("--chat", is_flag=True, help="user/assistant messages instead of plain text")
@click.option(
    "--formatter",
    default=None,
    help="module:function(family, input, output) -> (prompt, completion) replacing the "
    "default (streams/formatters.py)",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="file to write; .parquet writes Parquet",
)
def export(
    fmt: str,
    since: datetime | None,
    until: datetime | None,
    families: tuple[str, ...],
    quality_list: str | None,
    project: str | None,
    chat: bool,
    formatter: str | None,
    out: Path,
) -> None:
    """Export samples as files TRL's trainers read (JSON lines; --out X.parquet: Parquet).

    \b
    sft               {prompt, completion}, good samples (--quality good,acceptable adds more)
    kto               {prompt, completion, label}: good -> true, poor -> false
    dpo               {prompt, chosen, rejected} from mplp.preference_pairs
    reward            {chosen, rejected} (prompt + completion each) from the same pairs
    mplp              the LearningSamples themselves, one per line
    training-dataset  one JSON object {version, sample_count, samples}, good samples

    --since / --until select by the record timestamp, set when the worker wrote the sample
    (about its created_at), not by when the agent's event happened; ISO-8601, UTC if no
    zone. The read stops at the topic's end as it was at start. Samples are deduplicated by
    sample_id; records that do not decode are skipped and counted.
    """
    from rich.console import Console

    from agents.export_view import export_progress, summary
    from streams.consumer import ReadStats, export_to
    from streams.export import ExportError, RowMaker, export_filter
    from streams.formatters import FormatterError, default_formatter, load_formatter

    settings = _settings()
    if not out.parent.is_dir():
        raise UserError(f"--out: the directory {out.parent} does not exist")
    if since is not None and until is not None and until <= since:
        raise UserError("--until must be after --since")
    stats, console = ReadStats(), Console(stderr=True)
    field = "preference_pairs" if fmt in ("dpo", "reward") else "samples"
    try:
        where = export_filter(fmt, families, _qualities(quality_list), project)
        render = load_formatter(formatter) if formatter else default_formatter
        maker = RowMaker(fmt, render, chat)
        with export_progress(stats, console):
            rows = export_to(
                out,
                maker,
                where,
                since,
                until,
                bootstrap=_bootstrap(settings),
                topic=settings.topics.name(field),
                stats=stats,
            )
    except (ExportError, FormatterError) as exc:
        raise UserError(str(exc)) from exc
    click.echo(summary(rows, fmt, str(out), stats), err=True)


def _batch_quality(settings: Settings, since: datetime, until: datetime) -> dict[str, Any]:
    from streams.quality_batch import quality_report

    if until <= since:
        raise UserError("--until must be after --since")
    return asyncio.run(
        quality_report(
            since,
            until,
            settings.windows.expires,
            bootstrap=_bootstrap(settings),
            topic=settings.topics.name("samples"),
        )
    )


@main.command()
@click.option("--url", default=None, help="a worker's /quality [http://WEB_HOST:WEB_PORT/quality]")
@click.option("--json", "as_json", is_flag=True, help="print the raw JSON")
@click.option("--since", type=_When(), default=None, help="batch mode: window start (event time)")
@click.option("--until", type=_When(), default=None, help="batch mode: window end (exclusive)")
def quality(url: str | None, as_json: bool, since: datetime | None, until: datetime | None) -> None:
    """Show the current 5m / 1h window's quality rates per family, from a running worker.

    Each worker reports the input partitions it owns; with several workers ask each one, or
    read the summed figures in Prometheus (learnstream_window_samples).

    With --since and --until: compute the same figures for that window from the samples
    topic instead (no worker needed), counting samples by their event time as the live
    windows do, late ones (written after the window expired) left out.
    """
    import urllib.request

    from rich.console import Console

    from streams.quality import report_table

    settings = _settings()
    if since is not None or until is not None:
        if since is None or until is None or url:
            raise UserError("batch mode takes both --since and --until, and no --url")
        report = _batch_quality(settings, since, until)
        if as_json:
            click.echo(json.dumps(report, indent=2))
            return
        click.echo(f"from the topic {report['topic']}, all partitions")
        Console().print(report_table(report))
        return
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
