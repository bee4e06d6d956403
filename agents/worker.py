"""Run the learnstream worker: broker (given or embedded), topics, Faust app, agents.

The composition root: the one place that puts ``streams`` (pure logic, the Faust app) and
``agents`` (what runs on it) together, so nothing under ``streams/`` imports ``agents``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Iterator

import faust

from learnstream.agents.seams.changelogs import changelog_specs
from learnstream.agents.seams.ready import ReadyWorker, startup_phases
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import UserError
from learnstream.streams.io.admin import create_missing, ensure_topics
from learnstream.streams.io.app import create_app, one_record_per_batch
from learnstream.streams.io.broker_check import check_handshake
from learnstream.streams.io.connection import KafkaConnection
from learnstream.streams.io.embedded import EmbeddedBroker
from learnstream.streams.io.preflight import check_broker, check_port_free
from learnstream.streams.io.web_auth import exposed_writes_problem

__all__ = [
    "broker_for",
    "build_app",
    "freeze_startup_objects",
    "guarantee_problem",
    "library_log_level",
    "preflight",
    "run_worker",
]

log = logging.getLogger("learnstream")


@contextlib.contextmanager
def broker_for(settings: Settings) -> Iterator[tuple[str, bool]]:
    """Yield (kafka URL, embedded?) — starting the embedded broker when none is configured."""
    if settings.kafka_url:
        yield settings.kafka_url, False
        return
    with EmbeddedBroker(port=settings.broker.embedded_port) as broker:
        log.warning(
            "no broker configured (LEARNSTREAM_BROKER_URL unset): started the embedded "
            "broker at %s — in memory, for development only",
            broker.url,
        )
        yield broker.url, True


def build_app(settings: Settings, url: str, embedded: bool) -> faust.App:
    """Return the Faust app with every agent registered."""
    app = create_app(settings, url, embedded=embedded)
    runtime = wire(app, settings)
    # What the recognizers load on first use is loaded now, before run_worker freezes the
    # start-up objects: the first records do not wait for it (benchmarks/RESULTS.md,
    # findings behind the design).
    runtime.anonymizer.warm()
    return app


def guarantee_problem(settings: Settings, embedded: bool) -> str | None:
    """Say why the processing guarantee cannot work on this broker, if it cannot."""
    if embedded and settings.processing_guarantee == "exactly_once":
        return (
            "LEARNSTREAM_PROCESSING_GUARANTEE=exactly_once needs Kafka transactions, which the "
            "embedded broker does not have: set LEARNSTREAM_BROKER_URL to an Apache Kafka "
            "cluster, or use at_least_once (samples have deterministic ids)"
        )
    return None


def freeze_startup_objects() -> int:
    """Take every object alive now out of the cyclic collector's scans; return how many.

    After start-up a worker holds ~180,000 long-lived objects (modules, Faust, Presidio's
    recognizers, pydantic schemas). Each full collection would walk all of them, a pause
    long enough to make the p95/p99 of event latency (benchmarks/RESULTS.md, findings behind
    the design). They live as long as the process, so the collector has nothing to find
    there (``gc.freeze``).
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def preflight(settings: Settings) -> None:
    """Raise UserError, before anything starts, on what the user must fix first."""
    problem = guarantee_problem(settings, embedded=not settings.kafka_url)
    if problem:
        raise UserError(problem)
    exposed = exposed_writes_problem(settings.web_host, settings.web)
    if exposed:
        raise UserError(exposed)
    check_port_free(settings.web_host, settings.web_port, "LEARNSTREAM_WEB_PORT")
    if settings.kafka_url:
        variable = "LEARNSTREAM_BROKER_URL" if settings.broker_url else "LEARNSTREAM_BROKER__URL"
        check_broker(settings.kafka_url, variable, embedded_hint=True)
        # Faust retries a refused password or certificate for ever: say why here, once.
        check_handshake(KafkaConnection.of(settings.broker, settings.kafka_url))


def prepare_topics(settings: Settings, connection: KafkaConnection) -> Settings:
    """Create missing topics; return ``settings`` with replication decided for the cluster.

    An existing topic with less replication than wanted, or other configs, is only reported
    (one warning each): learnstream never alters a topic an operator may have tuned.
    """
    topics, statuses = asyncio.run(ensure_topics(connection, settings.topics))
    for name, status in statuses:
        if status.startswith("exists (differs"):
            log.warning(
                "topic %s %s: learnstream wants replication %d and min.insync.replicas %d "
                "(LEARNSTREAM_TOPICS__REPLICATION_FACTOR, __MIN_INSYNC_REPLICAS); with less, "
                "a broker's loss can lose acknowledged writes",
                name,
                status,
                topics.replication_factor,
                topics.min_insync_replicas,
            )
    return settings.model_copy(update={"topics": topics})


def prepare_changelogs(app: faust.App, settings: Settings, connection: KafkaConnection) -> None:
    """Create the tables' changelogs the broker does not have yet (agents/seams/changelogs.py)."""
    replication = settings.topics.replication_factor or 1
    created = asyncio.run(create_missing(connection, changelog_specs(app), replication))
    if created:
        log.info("created %d changelog topics", len(created))


def library_log_level(level: str) -> str:
    """Return the level for every logger but learnstream's: never below info.

    Faust, aiokafka and Presidio print whole record keys and values, and the text they
    analyse, in their debug lines: raw plans and samples before masking. Debug turns on
    learnstream's own lines, which name records by topic, partition and offset only.
    """
    number = logging.getLevelName(level.upper())
    return "INFO" if isinstance(number, int) and number < logging.INFO else level.upper()


def run_worker(settings: Settings) -> None:
    """Run the worker until SIGINT/SIGTERM."""
    phases = startup_phases()
    outside = library_log_level(settings.log_level)
    logging.basicConfig(level=outside, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    log.setLevel(settings.log_level.upper())
    preflight(settings)
    with broker_for(settings) as (url, embedded):
        phases.mark("preflight and broker", time.monotonic())
        log.info("processing guarantee: %s", settings.processing_guarantee)
        if one_record_per_batch(settings, embedded):
            log.info("one record per producer batch (embedded broker offsets count batches)")
        settings = prepare_topics(settings, KafkaConnection.of(settings.broker, url))
        phases.mark("topics", time.monotonic())
        app = build_app(settings, url, embedded)
        phases.mark("wiring and warm-up", time.monotonic())
        prepare_changelogs(app, settings, KafkaConnection.of(settings.broker, url))
        phases.mark("changelogs", time.monotonic())
        worker = ReadyWorker(app, phases, loglevel=outside, quiet=True)
        log.info(
            "%d start-up objects frozen out of the garbage collector", freeze_startup_objects()
        )
        phases.mark("gc freeze", time.monotonic())
        worker.execute_from_commandline()
