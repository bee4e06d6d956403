"""Faust tables: plan state and the pending-join buffer.

Consent is no table: every worker reads the consent topic itself (streams/consent/view.py), so it
knows how far it has read, which a GlobalTable's changelog does not tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import faust

from streams.config.settings import Settings

__all__ = ["Tables"]


@dataclass(frozen=True)
class Tables:
    """The tables the agents share; all are changelogged, so they survive a restart."""

    plan_state: faust.types.TableT[str, Any]  # plan_id -> PlanState JSON bytes
    #: plan key|topic|partition|offset -> one parked event (the join's grace buffer)
    pending: faust.types.TableT[str, Any]

    @classmethod
    def declare(cls, app: faust.App, settings: Settings) -> Tables:
        """Declare the tables on ``app``; partitions match the input topics."""
        # JSON keys and values: the changelogs stay readable with any Kafka tool.
        n, options = settings.topics.partitions, settings.table_options()
        return cls(
            # plan_state values are PlanState's JSON bytes (PlanState.to_table): the changelog
            # text a dict value would give, held unparsed (smaller, and no GC walk over them).
            plan_state=app.Table(
                "plan_state",
                key_type=str,
                value_type=bytes,  # Faust's "raw" codec: stored and sent as they are
                partitions=n,
                options=options,
            ),
            # one parked event per key (streams/join/parked.py): its JSON bytes, raw codec
            pending=app.Table(
                "pending", key_type=str, value_type=bytes, partitions=n, options=options
            ),
        )
