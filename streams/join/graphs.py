"""PSG graph updates as a keyed window of the join unit: one state per graph.

Every GraphUpdateEvent of a graph folds into the graph's open window: nodes and edges added
and removed, the kinds of update, what caused them. When the window's change is
significant, its topology change score at least ``threshold``, it is a graph_evolution
sample and a new window starts. An update ``window`` or more after the window opened (event
time) starts a new one: the old one, never significant, ends without a sample.

The score is a share of the graph's size, and a sample's ``node_count_before`` is never made
up: either it is the size, or the sample says it is a count since a moment. The size before
an update is:

- what the payload says, ``node_count`` / ``edge_count`` (the size after it, both given)
  less the update's deltas;
- else 0 when the update says the graph was created: the schema's update kinds (node or
  edge added, updated, deleted, or bulk) have no creation, so that is its ``event_type``
  :data:`CREATED`, and it starts a new window;
- else the size the worker has counted, update by update, since it last knew it (or since
  it began counting, below);
- else unknown: the schema gives only ``node_delta`` and ``edge_delta``, and the worker has
  seen no update of the graph, or closed it after ``ttl``. The worker then counts the graph
  from this update on, from 0: the size it scores is *counted since* the update's event
  time. A runtime that sends only what the schema defines gets samples (its first update of
  a graph is most often the graph's creation, which this counts exactly), and every such
  sample says so: ``state.size_counted_since`` is that time. Absent, the size before was
  given or the graph was created under the worker's eyes; present, it is a count of the
  deltas seen since then, the graph's size only if it began then (a worker that started
  late, or a graph closed after ``ttl``, counts less than there is, and the first change
  counted scores 1 like any change to an empty graph). A trainer that wants exact sizes
  only leaves those samples out. An update that gives the size, or says the graph was
  created, ends the counting: later windows are exact again.

A graph no update touched for ``ttl`` (the worker's clock, up to a sweep tick and a minute
later) is closed: its state, size and open window go, so a worker that sees many short-lived
graphs holds only the recent ones. That is the only tick a graph's key waits for (a key space
has one deadline per key); an open window needs none, since the next update ends it by event
time and a window the graph never updates again goes with the graph.

The topology change score: the elements added or removed in the window over the graph's
elements when it opened, ``(nodes added + removed + edges added + removed) / max(nodes +
edges before, 1)``, at most 1: any change to an empty graph (one just created) scores 1.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict

from learnstream.streams.join.outcome import Outcome
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.unit import Expire, Route
from learnstream.streams.mplp.fields import text_of
from learnstream.streams.mplp.graph_events import GraphUpdateEvent, decode_graph_update
from learnstream.streams.samples.evolution import GraphWindow, build_graph_evolution
from learnstream.streams.samples.ids import canonical_id

__all__ = ["CREATED", "GRAPH_SPACE", "GraphState", "decider", "graph_expiry", "graph_route"]

GRAPH_SPACE = "graph"
SEEN_IDS = 128
#: The ``event_type`` of an update that says its graph was created (its size before is 0).
CREATED = "graph_created"


class GraphState(BaseModel):
    """A graph's size and its open window; JSON bytes in the ``graphs`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: The graph id as the runtime spelled it (the records' key).
    record_key: str
    touched_at: AwareDatetime
    #: ``nodes`` and ``edges`` are the graph's size (False: unknown, they mean nothing).
    sized: bool = False
    nodes: int = 0
    edges: int = 0
    #: The size is a count of the deltas seen since this event time, not a size given
    #: (None: given, or counted from a creation; module docstring).
    counted_since: AwareDatetime | None = None
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


def _before(state: GraphState, event: GraphUpdateEvent) -> tuple[tuple[int, int], datetime | None]:
    """Return the graph's size (nodes, edges) before ``event``, and since when it is counted
    (None: the size is known); a graph of unknown size is counted from 0 since ``event``."""
    nodes, edges = _size(event, "node_count"), _size(event, "edge_count")
    if nodes is not None and edges is not None:
        return (max(nodes - event.node_delta, 0), max(edges - event.edge_delta, 0)), None
    if event.event_type == CREATED:
        return (0, 0), None
    if state.sized:
        return (state.nodes, state.edges), state.counted_since
    return (0, 0), event.timestamp


def _after(
    before: tuple[int, int], counted_since: datetime | None, event: GraphUpdateEvent
) -> dict[str, Any]:
    """Return the graph's size after ``event``: the payload's counts (known from then on),
    else counted."""
    nodes, edges = _size(event, "node_count"), _size(event, "edge_count")
    given = nodes is not None and edges is not None
    return {
        "sized": True,
        "nodes": nodes if nodes is not None else max(before[0] + event.node_delta, 0),
        "edges": edges if edges is not None else max(before[1] + event.edge_delta, 0),
        "counted_since": None if given else counted_since,
    }


def _opened(
    before: tuple[int, int], counted_since: datetime | None, event: GraphUpdateEvent
) -> GraphWindow:
    return GraphWindow(
        graph_id=event.graph_id,
        opened_at=event.timestamp,
        last_at=event.timestamp,
        trigger_event_id=text_of(event.payload, "trigger_event_id") or event.event_id,
        first_event_id=event.event_id,
        nodes_before=before[0],
        edges_before=before[1],
        counted_since=counted_since,
    )


def _window(
    window: GraphWindow | None,
    before: tuple[int, int],
    counted_since: datetime | None,
    event: GraphUpdateEvent,
    span: timedelta,
) -> GraphWindow:
    """Return the window ``event`` folds into: the open one, else a new one (none is open,
    it opened ``span`` or more before the update, or the update says the graph was created)."""
    if window is None or event.event_type == CREATED or event.timestamp - window.opened_at >= span:
        return _opened(before, counted_since, event)
    return window


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
    window is a sample and a new one starts; one older than ``span`` starts over; a graph
    whose size is unknown is counted from its first update seen (module docstring)."""

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
        changes: dict[str, Any] = {
            "touched_at": max(state.touched_at, now),
            "seen": (*state.seen, event.event_id)[-SEEN_IDS:],
        }
        before, counted_since = _before(state, event)
        window = _folded(_window(state.window, before, counted_since, event, span), event)
        changes |= _after(before, counted_since, event)
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
