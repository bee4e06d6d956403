"""PSG graph updates as a keyed window of the join unit: one state per graph.

Every GraphUpdateEvent of a graph folds into the graph's open window: nodes and edges added
and removed, the kinds of update, what caused them. The graph's size is counted from the
deltas since the worker first saw it (a payload's ``node_count`` / ``edge_count`` resets it
to what the runtime says). When the window's change is significant, its topology change
score at least ``threshold``, it is a graph_evolution sample and a new window starts. An
update ``window`` or more after the window opened (event time) starts a new one: the old
one, never significant, ends without a sample.

A graph no update touched for ``ttl`` (the worker's clock, up to a sweep tick and a minute
later) is closed: its state, size and open window go, so a worker that sees many short-lived
graphs holds only the recent ones. That is the only tick a graph's key waits for (a key space
has one deadline per key); an open window needs none, since the next update ends it by event
time and a window the graph never updates again goes with the graph.

The topology change score: the elements added or removed in the window over the graph's
elements when it opened, ``(nodes added + removed + edges added + removed) / max(nodes +
edges before, 1)``, at most 1.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict

from streams.join.parked import ParkedEvent
from streams.join.rules import Outcome
from streams.join.unit import Expire, Route
from streams.mplp.fields import text_of
from streams.mplp.graph_events import GraphUpdateEvent, decode_graph_update
from streams.samples.evolution import GraphWindow, build_graph_evolution
from streams.samples.ids import canonical_id

__all__ = ["GRAPH_SPACE", "GraphState", "decider", "graph_expiry", "graph_route"]

GRAPH_SPACE = "graph"
SEEN_IDS = 128


class GraphState(BaseModel):
    """A graph's size and its open window; JSON bytes in the ``graphs`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: The graph id as the runtime spelled it (the records' key).
    record_key: str
    touched_at: AwareDatetime
    nodes: int = 0
    edges: int = 0
    window: GraphWindow | None = None
    seen: tuple[str, ...] = ()

    def to_table(self) -> bytes:
        """Return the JSON bytes stored in the table and its changelog."""
        return orjson.dumps(self.model_dump(mode="json", exclude_defaults=True))

    @classmethod
    def from_table(cls, raw: bytes) -> GraphState:
        """Parse what :meth:`to_table` stored."""
        return cls.model_validate_json(raw)


def _size(event: GraphUpdateEvent, name: str) -> int | None:
    value = event.payload.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _opened(state: GraphState, event: GraphUpdateEvent) -> GraphWindow:
    return GraphWindow(
        graph_id=event.graph_id,
        opened_at=event.timestamp,
        last_at=event.timestamp,
        trigger_event_id=text_of(event.payload, "trigger_event_id") or event.event_id,
        first_event_id=event.event_id,
        nodes_before=state.nodes,
        edges_before=state.edges,
    )


def _folded(window: GraphWindow, event: GraphUpdateEvent) -> GraphWindow:
    kinds = tuple(sorted({*window.update_kinds, event.update_kind}))
    node, edge = event.node_delta, event.edge_delta
    return window.model_copy(
        update={
            "last_at": max(window.last_at, event.timestamp),
            "updates": window.updates + 1,
            "update_kinds": kinds,
            "nodes_added": window.nodes_added + max(node, 0),
            "nodes_removed": window.nodes_removed + max(-node, 0),
            "edges_added": window.edges_added + max(edge, 0),
            "edges_removed": window.edges_removed + max(-edge, 0),
            "plan_id": text_of(event.payload, "plan_id") or window.plan_id,
            "delta_id": text_of(event.payload, "delta_id") or window.delta_id,
            "source_module": event.source_module or window.source_module,
            "project_id": event.project_id or window.project_id,
        }
    )


def decider(threshold: float, span: timedelta) -> Any:
    """Return the route's decide: fold an update into its graph's window; a significant
    window is a sample and a new one starts; one older than ``span`` starts over."""

    def decide_graph(
        event: GraphUpdateEvent,
        state: GraphState | None,
        now: datetime,
        _parked: ParkedEvent | None,
        _settled: bool,
    ) -> Outcome[GraphState]:
        if state is not None and event.event_id in state.seen:
            return Outcome()  # a redelivered record: counted already
        if state is None:
            state = GraphState(record_key=event.graph_id, touched_at=now)
        window = state.window
        if window is None or event.timestamp - window.opened_at >= span:
            window = _opened(state, event)
        window = _folded(window, event)
        nodes = _size(event, "node_count")
        edges = _size(event, "edge_count")
        changes: dict[str, Any] = {
            "touched_at": max(state.touched_at, now),
            "seen": (*state.seen, event.event_id)[-SEEN_IDS:],
            "nodes": nodes if nodes is not None else max(state.nodes + event.node_delta, 0),
            "edges": edges if edges is not None else max(state.edges + event.edge_delta, 0),
        }
        if window.score < threshold:
            return Outcome(new_state=state.model_copy(update={**changes, "window": window}))
        after = (changes["nodes"], changes["edges"])
        sample = build_graph_evolution(window, after, now)
        return Outcome(
            samples=[sample], new_state=state.model_copy(update={**changes, "window": None})
        )

    return decide_graph


def graph_expiry(ttl: timedelta) -> Expire:
    """Return the ``expire`` hook of graphs: a graph no update touched for ``ttl`` is closed,
    with its open window (never significant: it makes no sample)."""

    def expire(state: Any, now: datetime) -> Outcome[Any] | None:
        if not isinstance(state, GraphState) or now - state.touched_at < ttl:
            return None
        return Outcome(close=True)

    return expire


def _key(event: GraphUpdateEvent) -> str:
    return f"{GRAPH_SPACE}:{canonical_id(event.graph_id)}"


def graph_route(threshold: float = 0.2, span: timedelta = timedelta(minutes=10)) -> Route:
    """Return the route of the graph updates topic (keyed by graph, never parked)."""
    return Route("graphs", decode_graph_update, decider(threshold, span), key=_key)
