"""Compose a worker: declare topics and tables on a Faust app, register every agent."""

from __future__ import annotations

from typing import Any

import faust

from agents import (
    consent_reader,
    decisions,
    deltas,
    learn,
    outcomes,
    pair_miner,
    plans,
    quality_tables,
    sensor,
    stall_watch,
    sweeper,
)
from agents.faust_check import check
from agents.faust_compat import deliver_every_record, guard_commits
from agents.plan_join import attach as attach_join
from agents.runtime import Runtime
from streams.config.settings import Settings
from streams.encoding.codecs import codec_for
from streams.io.tables import Tables
from streams.io.topics import Topics
from streams.join.expiry import ExpiryIndex
from streams.join.routes import routes as join_routes
from streams.observe.metrics import Metrics
from streams.offsets.progress import Progress
from streams.privacy import build_anonymizer, privacy_config

__all__ = ["wire"]


def wire(app: faust.App, settings: Settings) -> Runtime:
    """Declare topics and tables on ``app``, register every agent, mount ``/metrics``."""
    check()  # refuse to start on a Faust whose private seams we patch have changed
    metrics = Metrics()
    metrics.track_entities(privacy_config(settings).reported_entities)
    runtime = Runtime(
        app=app,
        settings=settings,
        topics=Topics.declare(app, settings),
        tables=Tables.declare(app, settings),
        metrics=metrics,
        anonymizer=build_anonymizer(privacy_config(settings)),
        codec=codec_for(settings.sample_format),
        expiry=ExpiryIndex(settings.topics.partitions),
        # not app.in_transaction: Faust caches that property, False until the worker runs
        progress=Progress(gated=settings.processing_guarantee == "exactly_once"),
    )
    attach_join(runtime, join_routes(settings.topics))
    for module in (
        plans,
        decisions,
        deltas,
        outcomes,
        consent_reader,
        sweeper,
        quality_tables,
        pair_miner,
        learn,
        stall_watch,
    ):
        module.register(runtime)

    def on_assigned(*args: Any, **_kwargs: Any) -> None:
        guard_commits(app, runtime.progress)  # the consumer exists now; once is enough
        runtime.progress.assign(args[1])  # (app, assigned); Faust seeks each to its commit

    def on_revoked(*args: Any, **_kwargs: Any) -> None:
        runtime.progress.forget(args[1])  # (app, revoked partitions): Faust just committed them

    app.on_partitions_assigned.connect(on_assigned)
    app.on_partitions_revoked.connect(on_revoked)
    deliver_every_record(app, runtime.progress)  # Progress orders, de-duplicates instead
    sensor.install(app, metrics.registry)  # Faust's monitor off the per-event path; /metrics
    return runtime
