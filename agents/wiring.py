"""Compose a worker: declare topics and tables on a Faust app, register every agent."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import faust
from faust.types import TP

from learnstream.agents import consent_reader, quality_tables
from learnstream.agents.clock import Clock, wall_clock
from learnstream.agents.deadletters import DeadLetters
from learnstream.agents.emitter import Emitter, OnSent
from learnstream.agents.joins import (
    decisions,
    deltas,
    lead,
    outcomes,
    pair_miner,
    plans,
    sweeper,
    window_inputs,
)
from learnstream.agents.joins.plan_join import Join
from learnstream.agents.joins.planstore import PlanStore
from learnstream.agents.joins.rekey_replay import Replay
from learnstream.agents.joins.window_store import WindowStore
from learnstream.agents.learning import agent as learn
from learnstream.agents.learning.stats import SkillTable
from learnstream.agents.runtime import Runtime
from learnstream.agents.seams import loop_watch, sensor, stall_watch
from learnstream.agents.seams.end_offsets import EndOffsets, Ends
from learnstream.agents.seams.faust_check import check
from learnstream.agents.seams.faust_compat import (
    bound_fetch_wait,
    deliver_every_record,
    guard_commits,
    hand_over_inline,
    handing_over,
    note_fetches,
    retry_lost_coordinators,
)
from learnstream.agents.seams.prober import Prober
from learnstream.agents.sender import Sender
from learnstream.streams.config.settings import Settings
from learnstream.streams.consent.fence import Fence
from learnstream.streams.consent.view import ConsentView
from learnstream.streams.encoding.codecs import codec_for
from learnstream.streams.io.connection import app_connection
from learnstream.streams.io.tables import Tables
from learnstream.streams.io.topics import INPUTS, Topics
from learnstream.streams.join.expiry import ExpiryIndex
from learnstream.streams.join.graphs import GRAPH_SPACE, GraphState, graph_expiry
from learnstream.streams.join.impacts import IMPACT_SPACE, ImpactState, delta_route, impact_expiry
from learnstream.streams.join.lead import LeadOrder, lead_ranks
from learnstream.streams.join.routes import routes as join_routes
from learnstream.streams.join.runs import RUN_SPACE, RunState, run_expiry
from learnstream.streams.join.sessions import SESSION_SPACE, session_expiry
from learnstream.streams.join.spaces import KeySpace
from learnstream.streams.join.watermark import Watermark
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.offsets.fetched import FetchedEnds
from learnstream.streams.offsets.progress import Progress
from learnstream.streams.privacy.config import privacy_config
from learnstream.streams.privacy.pii import build_anonymizer
from learnstream.streams.samples.sample import LearningSample
from learnstream.streams.state.session import SessionState

__all__ = ["wire"]

log = logging.getLogger("learnstream")


def unread_records(app: faust.App, progress: Progress, topic: str, partition: int) -> bool:
    """Tell whether this worker has records of ``topic``'s ``partition`` still to process
    as last fetched (unknown: no)."""
    try:
        count = lead.unread_count(app, progress, TP(topic, partition))
    except Exception:  # noqa: BLE001  (no consumer yet: nothing to wait for)
        return False
    return count is not None and count > 0


def wire(
    app: faust.App,
    settings: Settings,
    *,
    ends: Ends | None = None,
    clock: Clock = wall_clock,
    replay: Replay | None = None,
) -> Runtime:
    """Declare topics and tables on ``app``, build the runtime whole, register every agent,
    mount ``/metrics``.

    ``ends`` answers where the consent and corrections topics end (default: an asker of the
    broker's, started with the app); ``clock`` is the time every part reads; ``replay``
    reads the pairs miner's re-key topic back (default: a consumer of the broker's). Tests
    pass their own.
    """
    check()  # refuse to start on a Faust whose private seams we patch have changed
    metrics = Metrics()
    metrics.track_entities(privacy_config(settings).reported_entities)
    topics, tables = Topics.declare(app, settings), Tables.declare(app, settings)
    broker = app_connection(app, settings.broker)
    corrections = settings.topics.name("delta_intents")
    # not app.in_transaction: Faust caches that property, False until the worker runs
    exactly_once = settings.processing_guarantee == "exactly_once"
    progress = Progress(gated=exactly_once)
    fetched: FetchedEnds[Any] | None = None
    if ends is None:
        # the worker's own fetches answer the fence and the watermark too (seam 17)
        fetched = FetchedEnds([topics.consent.get_topic_name(), corrections])
        asker = EndOffsets(broker, topics.consent.get_topic_name(), corrections)
        app.add_dependency(asker)
        ends = asker
        # what the worker's consumer reads: committed records only under exactly_once
        isolation = "read_committed" if exactly_once else "read_uncommitted"
        prober = Prober(broker, isolation)
        app.add_dependency(prober)
        progress.first_visible = prober.first_visible
    consent, fence = ConsentView(), Fence(ends.consent, fetched=fetched)
    produce = Sender(app)
    on_sample: list[Callable[[LearningSample], None]] = []
    on_sent: list[OnSent] = []
    anonymizer = build_anonymizer(privacy_config(settings))
    codec = codec_for(settings.sample_format)
    emitter = Emitter(
        settings, topics, metrics, anonymizer, codec, produce,
        consent, fence, clock, on_sample, on_sent,
    )  # fmt: skip
    dead_letters = DeadLetters(topics.dlq, metrics, produce)
    expiry = ExpiryIndex(settings.topics.partitions)
    # at_least_once: parked entries and changed plan states wait in memory first, their
    # records' offsets pinned (exactly_once's transactions must carry every write)
    pins = progress if settings.processing_guarantee == "at_least_once" else None
    plan_store = PlanStore(tables.plan_state, expiry, pins, settings.join.hold_in_memory)
    metrics.held_writes.labels("plan_state").set_function(plan_store.held)
    lateness = settings.join.corrections_lateness
    watermark = Watermark(corrections, progress, ends.corrections, clock, lateness, fetched)
    timeout = settings.sessions.timeout
    partitions = settings.topics.partitions
    sessions = WindowStore(tables.map_sessions, partitions, timeout, SessionState.from_table)
    run_timeout = settings.runs.timeout
    runs = WindowStore(tables.runs, partitions, run_timeout, RunState.from_table)
    routes = join_routes(settings.topics, settings.outcomes.collected, settings.graphs)
    graphs = WindowStore(tables.graphs, partitions, settings.graphs.ttl, GraphState.from_table)
    t = settings.topics
    span = settings.impacts.window
    impacts = WindowStore(tables.delta_impacts, partitions, span, ImpactState.from_table)
    spaces = {
        SESSION_SPACE: KeySpace(sessions, session_expiry(timeout), (t.name("map_events"),)),
        RUN_SPACE: KeySpace(
            runs,
            run_expiry(run_timeout),
            (t.name("sa_events"), t.name("runtime_executions"), t.name("pipeline_stage")),
        ),
        GRAPH_SPACE: KeySpace(
            graphs, graph_expiry(settings.graphs.ttl), (t.name("graph_updates"),)
        ),
        IMPACT_SPACE: KeySpace(
            impacts,
            impact_expiry(span),
            (t.name("core_events"), t.name("delta_intents")),
            routes={t.name("delta_intents"): delta_route()},
            plan_partitioned=True,
        ),
    }
    join = Join(
        settings, routes, tables.pending, plan_store, watermark, emitter, dead_letters, metrics,
        clock, spaces=spaces, unread=partial(unread_records, app, progress),
        pins=pins,
    )  # fmt: skip
    skill_stats = SkillTable(tables.skill_stats, settings, metrics, broker)
    app.add_dependency(skill_stats.reader)
    runtime = Runtime(
        app=app,
        settings=settings,
        topics=topics,
        tables=tables,
        metrics=metrics,
        anonymizer=anonymizer,
        codec=codec,
        clock=clock,
        progress=progress,
        consent=consent,
        fence=fence,
        ends=ends,
        produce=produce,
        plans=plan_store,
        emitter=emitter,
        dead_letters=dead_letters,
        join=join,
        skill_stats=skill_stats,
        on_sample=on_sample,
        on_sent=on_sent,
        after_record=[],
        lead=LeadOrder(
            lead_ranks(t.name("plans"), corrections, (t.name(name) for name in INPUTS)),
            settings.join.lead_backlog,
            settings.join.lead_wait.total_seconds(),
        ),
    )
    for register in (
        plans.register,
        decisions.register,
        deltas.register,
        outcomes.register,
        window_inputs.register,
        consent_reader.register,
        sweeper.register,
        quality_tables.register,
        partial(pair_miner.register, replay=replay),
        learn.register,
        stall_watch.register,
        loop_watch.register,
        lead.register,
    ):
        register(runtime)

    runtime.handover.insert(0, join.write_held)
    flush = runtime.progress.before_commit  # the quality windows', if any

    def before_commit() -> None:
        if handing_over(app):  # the partitions go: write what is held for them first
            for write in runtime.handover:
                try:
                    write()
                except Exception as exc:  # noqa: BLE001  (what stays held stays pinned)
                    log.warning(
                        "could not write what is held before the partitions go (%s): the next "
                        "owner reads those records again",
                        type(exc).__name__,
                    )
        flush()

    runtime.progress.before_commit = before_commit

    def on_assigned(*args: Any, **_kwargs: Any) -> None:
        guard_commits(app, runtime.progress)  # the consumer exists now; once is enough
        runtime.progress.assign(args[1])  # (app, assigned); Faust seeks each to its commit

    def on_revoked(*args: Any, **_kwargs: Any) -> None:
        runtime.progress.forget(args[1])  # (app, revoked partitions): Faust just committed them
        join.on_revoked({tp.partition for tp in args[1]})

    app.on_partitions_assigned.connect(on_assigned)
    app.on_partitions_revoked.connect(on_revoked)
    deliver_every_record(app, runtime.progress)  # Progress orders, de-duplicates instead
    fetching = settings.broker
    bound_fetch_wait(
        app, fetching.fetch_max_wait_ms, fetching.fetch_min_bytes, fetching.prefetch_backoff_ms
    )
    if fetched is not None:
        note_fetches(app, fetched)  # the ends its fetches carry
    hand_over_inline(app)  # no tasks per record handed over, when its stream has room
    retry_lost_coordinators()  # a failover must not crash a transactional producer
    sensor.install(app, metrics.registry)  # Faust's monitor off the per-event path; /metrics
    return runtime
