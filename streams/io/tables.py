"""Every Faust table of the worker, declared in one place.

All are changelogged, so they survive a restart, and partitioned like the input topics; a
changelog is replicated like every topic learnstream creates (Faust creates it with the app's
``topic_replication_factor`` and the ``min.insync.replicas`` given here). Consent
is no table: every worker reads the consent topic itself (streams/consent/view.py), so it
knows how far it has read, which a GlobalTable's changelog does not tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import faust
from faust.types import TableT

from learnstream.streams.config.settings import Settings
from learnstream.streams.io.topics import replica_config
from learnstream.streams.quality.windows import WindowSpec, window_specs

__all__ = ["Tables"]


@dataclass(frozen=True)
class Tables:
    """The tables the agents share."""

    #: plan key -> PlanState JSON bytes (streams/state/plan.py)
    plan_state: TableT[str, Any]
    #: plan key|topic|partition|offset -> one parked event (the join's grace buffer)
    pending: TableT[str, Any]
    #: session:<id> -> SessionState JSON bytes of a MAP session (streams/join/sessions.py)
    map_sessions: TableT[str, Any]
    #: run:<step|execution>:<id> -> RunState JSON bytes (streams/join/runs.py)
    runs: TableT[str, Any]
    #: graph:<id> -> GraphState JSON bytes of a PSG (streams/join/graphs.py)
    graphs: TableT[str, Any]
    #: impact:<delta id> -> ImpactState JSON bytes, a delta and its analysis (join/impacts.py)
    delta_impacts: TableT[str, Any]
    #: kind|name|source partition -> a skill's or tool's stats (agents/learning/stats.py)
    skill_stats: TableT[str, Any]
    #: window label -> counts per (family, label, partition) and window (agents/quality_tables.py)
    quality: dict[str, TableT[Any, Any]]
    #: the window of each quality table, in the order of ``quality``
    windows: tuple[WindowSpec, ...]

    @classmethod
    def declare(cls, app: faust.App, settings: Settings) -> Tables:
        """Declare every table on ``app``; partitions match the input topics."""
        n, options = settings.topics.partitions, settings.table_options()
        replicas = replica_config(settings.topics)

        def keyed(name: str, **kwargs: Any) -> TableT[str, Any]:
            return app.Table(
                name,
                key_type=str,
                partitions=n,
                options=options,
                extra_topic_configs=replicas,
                **kwargs,
            )

        # JSON keys and values: the changelogs stay readable with any Kafka tool. Values held
        # as JSON bytes use Faust's "raw" codec: stored and sent as they are, held unparsed
        # (smaller than dicts, and nothing for the garbage collector to walk).
        windows = window_specs(settings.windows)
        return cls(
            plan_state=keyed("plan_state", value_type=bytes),
            pending=keyed("pending", value_type=bytes),
            map_sessions=keyed("map_sessions", value_type=bytes),
            runs=keyed("runs", value_type=bytes),
            graphs=keyed("graphs", value_type=bytes),
            delta_impacts=keyed("delta_impacts", value_type=bytes),
            skill_stats=keyed("skill_stats"),
            quality={spec.label: _windowed(app, settings, spec) for spec in windows},
            windows=windows,
        )


def _windowed(app: faust.App, settings: Settings, spec: WindowSpec) -> TableT[Any, Any]:
    """Declare the counting table of one window size (one changelog per size)."""
    table = app.Table(
        f"quality_{spec.label}",
        default=int,
        partitions=settings.topics.partitions,
        schema=faust.Schema(key_serializer="json", value_serializer="json"),
        options=settings.table_options(),
        extra_topic_configs=replica_config(settings.topics),
    )
    # Tumbling is hopping with step == size (Faust's TumblingWindow is just that); the window
    # makes Faust key, expire and retain the changelog by window (it is set on the table).
    table.hopping(spec.size, spec.step, expires=spec.expires)
    return table
