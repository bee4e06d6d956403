"""``learnstream audit``: re-scan the samples topic (or a raw input topic) for residual PII."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import TypeAlias

import click
from aiokafka import ConsumerRecord

from learnstream.agents.cli.common import When, connection_of_settings, settings_or_fail
from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import UserError
from learnstream.streams.io.connection import Broker
from learnstream.streams.io.reader import RangeProgress, read_range
from learnstream.streams.io.topics import INPUTS
from learnstream.streams.privacy.audit import (
    AuditReport,
    Detect,
    Finding,
    detectors,
    scan_input,
    scan_sample,
)

__all__ = ["audit", "audit_topic"]

Record: TypeAlias = ConsumerRecord[bytes, bytes]
Scan: TypeAlias = Callable[[Record, AuditReport], list[Finding]]
#: Input topics ``--topic`` takes by their settings name (a full topic name works too).
_INPUTS = (*INPUTS, "consent")


async def audit_topic(
    broker: Broker, topic: str, since: datetime, until: datetime, scan: Scan
) -> AuditReport:
    """Read ``since <= timestamp < until`` of ``topic`` and scan every record."""
    report, progress = AuditReport(topic), RangeProgress()
    async for record in read_range(broker, topic, since, until, progress=progress):
        report.records += 1
        report.findings += scan(record, report)
    if not progress.partitions:  # a typo must not pass as "no PII found"
        raise UserError(
            f"the broker has no topic {topic}: check --topic and LEARNSTREAM_TOPICS__PREFIX"
        )
    if progress.idle:
        raise UserError(
            f"the read of {topic} stopped with {progress.left} offsets left (no record came "
            "for 10 s): the audit is incomplete, run it again"
        )
    return report


def _samples(detect: Detect, person: Detect) -> Scan:
    """Return a scanner of samples (Avro or JSON), each sample_id audited once."""
    from learnstream.streams.encoding.codecs import decode_any

    seen: set[str] = set()

    def scan(record: Record, report: AuditReport) -> list[Finding]:
        try:
            sample = decode_any(record.value or b"")
        except Exception:  # noqa: BLE001 - any decoder error: counted, never echoed
            report.undecodable += 1
            return []
        if sample.get("sample_id") in seen:
            return []
        seen.add(str(sample.get("sample_id")))
        return scan_sample(sample, detect, person)

    return scan


def _inputs(detect: Detect, person: Detect) -> Scan:
    """Return a scanner of raw input records; one that is not JSON is read as text."""
    from learnstream.streams.dlq.errors import InvalidEvent
    from learnstream.streams.mplp.decode import load_json

    def scan(record: Record, report: AuditReport) -> list[Finding]:
        where = f"{record.topic}/{record.partition}/{record.offset}"
        try:
            doc = load_json(record.value)
        except InvalidEvent:
            doc = (record.value or b"").decode("utf-8", errors="replace")
        return scan_input(where, doc, detect, person)

    return scan


def _detectors(settings: Settings, ner: bool | None) -> tuple[Detect, Detect]:
    """Return the worker's detectors (free text, person keys), PII on whatever the
    settings say.

    Names and places follow ``LEARNSTREAM_PRIVACY__NER`` as the worker does, unless ``ner``
    forces them on or off: an audit that skipped them would pass samples full of names.
    """
    from learnstream.streams.privacy.config import privacy_config

    config = privacy_config(settings)
    config = dataclasses.replace(config, anonymize_pii=True, ner=config.ner if ner is None else ner)
    try:
        return detectors(config)
    except (ImportError, OSError) as exc:
        raise UserError(f"finding names and places needs the spaCy model: {exc}") from exc


def _topic(settings: Settings, topic: str | None) -> str:
    """Return the full name of the topic to audit: the samples topic by default."""
    if topic is None:
        return settings.topics.name("samples")
    return settings.topics.name(topic) if topic in _INPUTS else topic


@click.command()
@click.option("--since", type=When(), required=True, help="from this record time (inclusive)")
@click.option("--until", type=When(), required=True, help="to this record time (exclusive)")
@click.option(
    "--ner/--no-ner",
    default=None,
    help="find names and places (PERSON, LOCATION) or not; default: as the worker does, "
    "LEARNSTREAM_PRIVACY__NER (on unless set to false)",
)
@click.option("--topic", default=None, help=f"a raw input topic: {', '.join(_INPUTS)} or a name")
def audit(since: datetime, until: datetime, ner: bool | None, topic: str | None) -> None:
    """Re-scan the samples topic for PII the anonymizer left; exit 1 if any is found.

    Each finding prints as one line: the entity kind, the sample_id (topic/partition/offset
    with --topic) and the JSON path, never the matched text; a summary line follows on
    stderr. The detector is the worker's: the LEARNSTREAM_PRIVACY__* entities, names and
    places unless LEARNSTREAM_PRIVACY__NER=false (--ner / --no-ner override it), the secret
    detector and its score threshold. <EMAIL_ADDRESS>-style replacements are not findings.
    With --topic, a raw input topic is scanned instead, every field of every record.
    """
    settings = settings_or_fail()
    if until <= since:
        raise UserError("--until must be after --since")
    broker = connection_of_settings(settings)
    detect, person = _detectors(settings, ner)
    scan = _inputs(detect, person) if topic is not None else _samples(detect, person)
    report = asyncio.run(audit_topic(broker, _topic(settings, topic), since, until, scan))
    for finding in report.findings:
        click.echo(finding.line())
    click.echo(report.summary(), err=True)
    if report.findings:
        raise SystemExit(1)
