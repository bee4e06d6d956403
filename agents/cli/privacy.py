"""``learnstream privacy explain``: what the worker's anonymizer masks in a text, and why."""

from __future__ import annotations

import json
import sys

import click

from learnstream.agents.cli.common import settings_or_fail
from learnstream.streams.config.usererrors import UserError

__all__ = ["privacy"]


@click.group()
def privacy() -> None:
    """Look at what the anonymizer does (LEARNSTREAM_PRIVACY__* as the worker reads them)."""


@privacy.command()
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of lines")
def explain(text: str, as_json: bool) -> None:
    """Show each span the worker would mask in TEXT ('-' reads standard input): its entity,
    the recognizer that found it and its score, what an allowed item let through, and the
    text as a sample would carry it.

    It prints here only: nothing is logged, sent or kept. The settings are the worker's
    (entities, names and places, secrets, the allow and deny lists, the operator).
    """
    from learnstream.streams.privacy.config import privacy_config
    from learnstream.streams.privacy.explain import explain as explain_text
    from learnstream.streams.privacy.explain import render
    from learnstream.streams.privacy.pii import build_anonymizer

    config = privacy_config(settings_or_fail())
    if text == "-":
        text = sys.stdin.read().rstrip("\n")
    try:
        anonymizer = build_anonymizer(config)
    except (ImportError, OSError) as exc:
        raise UserError(f"finding names and places needs the spaCy model: {exc}") from exc
    explanation = explain_text(anonymizer, text)
    if as_json:
        click.echo(json.dumps(explanation.as_json(), ensure_ascii=False, indent=1))
    else:
        if not config.anonymize_pii:
            click.echo("LEARNSTREAM_PRIVACY__ANONYMIZE_PII is false: the worker masks nothing")
        click.echo(render(explanation))
