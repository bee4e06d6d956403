"""graph_evolution: one sample per significant change of a PSG (streams/join/graphs.py).

The taxonomy's recommended fields: ``input`` trigger_event_id, change_type; ``state``
node_count_before, edge_count_before; ``output`` nodes_added, edges_added,
topology_change_score (and what was removed, the counts after, the updates folded).
``change_type`` is the update kind when the window holds one kind, else ``mixed``.

A window's size before is the graph's size when it is known: the payload gave it, the
update said the graph was created (0), or the worker counted it since. A graph of unknown
size (the schema gives only deltas) is counted from the first update the worker sees, from
0, and its samples say so: ``state.size_counted_since``, the event time counting began
(streams/join/graphs.py). Without it, ``node_count_before`` is the size; with it, the count
of the deltas seen since then.

The label says whether the structure grew: ``good`` when nothing was removed, ``poor`` when
more was removed than added, else ``acceptable``; ``meta.quality_score`` is the share of the
changes that were additions.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, ConfigDict

from learnstream.streams.samples.ids import canonical_id, sample_id
from learnstream.streams.samples.parts import PRODUCER, IdRefs, iso, present
from learnstream.streams.samples.sample import Feedback, LearningSample, Quality, SampleMeta

__all__ = ["FAMILY", "GraphWindow", "build_graph_evolution"]

FAMILY = "graph_evolution"


class GraphWindow(BaseModel):
    """The changes of one graph since its window opened."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    graph_id: str
    opened_at: AwareDatetime
    last_at: AwareDatetime
    #: What the runtime says caused the change (``payload.trigger_event_id``), else the
    #: window's first event.
    trigger_event_id: str
    first_event_id: str
    #: The graph's size when the window opened: known, never a stand-in (module docstring).
    nodes_before: int
    edges_before: int
    #: ``nodes_before`` / ``edges_before`` are a count since this event time, not a size
    #: given (None: given, or counted from the graph's creation).
    counted_since: AwareDatetime | None = None
    updates: int = 0
    update_kinds: tuple[str, ...] = ()
    nodes_added: int = 0
    nodes_removed: int = 0
    edges_added: int = 0
    edges_removed: int = 0
    plan_id: str | None = None
    delta_id: str | None = None
    source_module: str | None = None
    project_id: str | None = None

    @property
    def changed(self) -> int:
        """Return the elements added or removed in the window."""
        return self.nodes_added + self.nodes_removed + self.edges_added + self.edges_removed

    @property
    def score(self) -> float:
        """Return the topology change score (module docstring of streams/join/graphs.py)."""
        before = max(self.nodes_before + self.edges_before, 1)  # an empty graph: any change is 1
        return round(min(self.changed / before, 1.0), 4)


def _quality(window: GraphWindow) -> tuple[Quality, float]:
    added = window.nodes_added + window.edges_added
    removed = window.nodes_removed + window.edges_removed
    share = round(added / (added + removed), 4) if added + removed else 0.0
    if not removed:
        return "good", share
    return ("poor" if removed > added else "acceptable"), share


def build_graph_evolution(
    window: GraphWindow, after: tuple[int, int], now: datetime
) -> LearningSample:
    """Build the graph_evolution sample of a significant window (its id is the window's
    first event's, so a replay writes the same sample)."""
    refs = IdRefs()
    label, share = _quality(window)
    kinds = window.update_kinds
    return LearningSample(
        sample_id=sample_id(FAMILY, canonical_id(window.first_event_id)),
        sample_family=FAMILY,
        created_at=iso(now),
        input=present(
            {
                "graph_id": window.graph_id,
                "trigger_event_id": window.trigger_event_id,
                "change_type": kinds[0] if len(kinds) == 1 else "mixed",
                "source_module": window.source_module,
                "plan_id": window.plan_id,
                "delta_id": window.delta_id,
            }
        ),
        state=present(
            {
                "node_count_before": window.nodes_before,
                "edge_count_before": window.edges_before,
                "size_counted_since": iso(window.counted_since) if window.counted_since else None,
            }
        ),
        output={
            "nodes_added": window.nodes_added,
            "nodes_removed": window.nodes_removed,
            "edges_added": window.edges_added,
            "edges_removed": window.edges_removed,
            "topology_change_score": window.score,
            "node_count_after": after[0],
            "edge_count_after": after[1],
            "updates": window.updates,
        },
        feedback=Feedback(source="system", type="score", quality_label=label),
        meta=SampleMeta(
            source_event_ids=[refs.uuid("source_event_ids[0]", window.first_event_id)],
            project_id=refs.uuid("project_id", window.project_id) if window.project_id else None,
            human_feedback_label="not_reviewed",
            producer=PRODUCER,
            plan_id=refs.uuid("plan_id", window.plan_id) if window.plan_id else None,
            event_time=iso(window.last_at),
            quality_score=share,
            id_refs=dict(refs) or None,
        ),
    )
