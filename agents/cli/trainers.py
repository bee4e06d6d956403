"""``learnstream export`` and ``learnstream quality``: what trainers and SREs read."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from learnstream.agents.cli.common import When, connection_of_settings, settings_or_fail
from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import UserError
from learnstream.streams.export.rows import FORMATS
from learnstream.streams.samples.sample import FAMILIES, QUALITIES

if TYPE_CHECKING:
    import urllib.request

__all__ = ["export", "quality"]


def _qualities(value: str | None) -> list[str]:
    asked = [q.strip() for q in (value or "").split(",") if q.strip()]
    if any(q not in QUALITIES for q in asked):
        raise UserError(f"--quality takes a comma-separated list of {', '.join(QUALITIES)}")
    return asked


@click.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="row format")
@click.option("--since", type=When(), default=None, help="from this record time (inclusive)")
@click.option("--until", type=When(), default=None, help="to this record time (exclusive)")
@click.option(
    "--family",
    "families",
    multiple=True,
    type=click.Choice(FAMILIES),
    help="only this family (repeat for several)",
)
@click.option("--quality", "quality_list", default=None, help="e.g. good,acceptable")
@click.option(
    "--project", default=None, help="only this project: the runtime's id or its meta.project_id"
)
@click.option("--chat", is_flag=True, help="user/assistant messages instead of plain text")
@click.option(
    "--formatter",
    default=None,
    help="module:function(family, input, output) -> (prompt, completion) replacing the "
    "default (streams/export/formatters.py)",
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
    mplp-common       MPLP's common learning sample (common/learning-sample.schema.json),
                      one per sample that has a project_id (the schema requires one;
                      the summary counts the samples left out)
    training-dataset  one JSON object {version, sample_count, samples}, good samples

    --since / --until select by the record timestamp, set when the worker wrote the sample
    (about its created_at), not by when the agent's event happened; ISO-8601, UTC if no
    zone. The read stops at the topic's end as it was at start. Samples are deduplicated by
    sample_id; records that do not decode are skipped and counted. Samples and pairs erased
    with `learnstream erase` are left out, also before the broker's compaction removed them.
    """
    from rich.console import Console

    from learnstream.agents.cli.export_view import export_progress, summary
    from learnstream.streams.export.formatters import (
        FormatterError,
        default_formatter,
        load_formatter,
    )
    from learnstream.streams.export.rows import ExportError, RowMaker, export_filter
    from learnstream.streams.io.consumer import ReadStats, export_to

    settings = settings_or_fail()
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
                bootstrap=connection_of_settings(settings),
                topic=settings.topics.name(field),
                stats=stats,
            )
    except (ExportError, FormatterError) as exc:
        raise UserError(str(exc)) from exc
    line = summary(rows, fmt, str(out), stats)
    if fmt == "mplp-common" and stats.kept > rows:
        # Each sample kept is one row, except those the schema cannot hold (export/common.py).
        line += f"; left out {stats.kept - rows:,} samples with no project_id or success rule"
    click.echo(line, err=True)


def _authorized(url: str, settings: Settings) -> urllib.request.Request:
    """Return the request of ``url``, with the worker's bearer token when one is set."""
    import urllib.request

    token = settings.web.token
    headers = {"Authorization": f"Bearer {token.get_secret_value()}"} if token else {}
    return urllib.request.Request(url, headers=headers)  # noqa: S310 - scheme checked


def _batch_quality(settings: Settings, since: datetime, until: datetime) -> dict[str, Any]:
    from learnstream.streams.io.quality_batch import quality_report

    if until <= since:
        raise UserError("--until must be after --since")
    return asyncio.run(
        quality_report(
            since,
            until,
            settings.windows.expires,
            bootstrap=connection_of_settings(settings),
            topic=settings.topics.name("samples"),
        )
    )


@click.command()
@click.option("--url", default=None, help="a worker's /quality [http://WEB_HOST:WEB_PORT/quality]")
@click.option("--json", "as_json", is_flag=True, help="print the raw JSON")
@click.option("--since", type=When(), default=None, help="batch mode: window start (event time)")
@click.option("--until", type=When(), default=None, help="batch mode: window end (exclusive)")
def quality(url: str | None, as_json: bool, since: datetime | None, until: datetime | None) -> None:
    """Show the current 5m / 1h window's quality rates per family, from a running worker.

    Each worker reports the input partitions it owns; with several workers ask each one, or
    read the summed figures in Prometheus (learnstream_window_samples).

    With --since and --until: compute the same figures for that window from the samples
    topic instead (no worker needed), counting samples by their event time as the live
    windows do, late ones (written after the window expired) left out.
    """
    import urllib.error
    import urllib.request

    from rich.console import Console

    from learnstream.streams.quality.windows import report_table

    settings = settings_or_fail()
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
        with urllib.request.urlopen(_authorized(url, settings), timeout=10) as response:  # noqa: S310
            report = json.load(response)
    except urllib.error.HTTPError as exc:
        if exc.code != 401:
            raise UserError(f"the worker at {url} answered HTTP {exc.code}") from exc
        raise UserError(
            f"the worker at {url} refused the request: set LEARNSTREAM_WEB__TOKEN to its token"
        ) from exc
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
