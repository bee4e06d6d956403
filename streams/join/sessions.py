"""MAP sessions as a keyed window of the join unit: one state per ``session_id``.

Every MAP event of a session folds into its :class:`SessionState` (turns, handoffs,
broadcasts, conflicts, roles). ``MAPSessionCompleted`` emits the session's
multi_agent_coordination sample; a session that hears nothing for ``timeout`` emits it on a
tick, labelled as timed out (``expire``). Either way the state is kept, closed, for another
``timeout``: an event of the session that comes late is counted and dropped instead of
opening a second session of the same id (whose sample would replace the first on the
compacted samples topic, the sample id being the session's). Then the key is deleted.

Keys are ``session:<canonical session id>``, so a session never shares a key with a plan in
the join's ``pending`` table. A redelivered event (at-least-once) is recognised by its id and
counted once; the state remembers the last :data:`SEEN_IDS` ids of a session.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from learnstream.streams.join.outcome import Outcome
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.unit import Expire, Route
from learnstream.streams.mplp.fields import text_of
from learnstream.streams.mplp.map_events import MapEvent, decode_map_event
from learnstream.streams.samples.coordination import build_coordination
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.state.session import SEEN_IDS, SessionState

__all__ = [
    "SEEN_IDS",
    "SESSION_SPACE",
    "SessionState",
    "decide_map",
    "fold",
    "map_route",
    "session_expiry",
    "session_key",
]

#: The key space of sessions in the join (the prefix of their keys).
SESSION_SPACE = "session"


def session_key(session_id: str) -> str:
    """Return the join key of a session (its canonical id in the session key space)."""
    return f"{SESSION_SPACE}:{canonical_id(session_id)}"


def _key(event: MapEvent) -> str:
    return session_key(event.session_id)


def _roles(event: MapEvent) -> list[str]:
    """Return the roles an event names: initiator, targets, and the payload's role fields."""
    named = [event.initiator_role, *event.target_roles]
    named += [text_of(event.payload, key) for key in ("role_id", "broadcaster_role_id")]
    named += [text_of(event.payload, "receiver_role_id")]
    roles = event.payload.get("roles")
    if isinstance(roles, list):  # MAPRolesAssigned: role ids, or objects with a role_id
        for role in roles:
            value = role.get("role_id") if isinstance(role, dict) else role
            named.append(value if isinstance(value, str) else None)
    return [role for role in named if role]


def fold(state: SessionState | None, event: MapEvent, now: datetime) -> SessionState:
    """Return the state with ``event`` counted (its time widens the session's span)."""
    if state is None:
        state = SessionState(
            session_id=event.session_id,
            first_at=event.timestamp,
            last_at=event.timestamp,
            touched_at=now,
        )
    kind = event.event_type
    changes: dict[str, Any] = {
        "first_at": min(state.first_at, event.timestamp),
        "last_at": max(state.last_at, event.timestamp),
        "touched_at": max(state.touched_at, now),
        "roles": tuple(sorted({*state.roles, *_roles(event)})),
        "seen": (*state.seen, event.event_id)[-SEEN_IDS:],
        "initiator_role": state.initiator_role or event.initiator_role,
        "coordination_mode": state.coordination_mode
        or text_of(event.payload, "coordination_mode", "mode"),
        "project_id": state.project_id or text_of(event.payload, "project_id"),
        "source_flow_id": state.source_flow_id
        or text_of(event.payload, "source_flow_id", "flow_id"),
    }
    if kind == "MAPSessionStarted":
        changes["started"] = True
    elif kind == "MAPTurnDispatched":
        role = text_of(event.payload, "role_id")
        changes["turns_dispatched"] = state.turns_dispatched + 1
        if role is not None:
            moved = state.last_turn_role is not None and role != state.last_turn_role
            changes["handoffs"] = state.handoffs + moved
            changes["last_turn_role"] = role
    elif kind == "MAPTurnCompleted":
        changes["turns_completed"] = state.turns_completed + 1
    elif kind == "MAPBroadcastSent":
        changes["broadcasts_sent"] = state.broadcasts_sent + 1
    elif kind == "MAPBroadcastReceived":
        changes["broadcasts_received"] = state.broadcasts_received + 1
    elif kind == "MAPConflictDetected":
        changes["conflicts_detected"] = state.conflicts_detected + 1
    elif kind == "MAPConflictResolved":
        changes["conflicts_resolved"] = state.conflicts_resolved + 1
    elif kind == "MAPSessionCompleted":
        changes["reported_outcome"] = text_of(event.payload, "outcome", "status")
    return state.model_copy(update=changes)


def decide_map(
    event: MapEvent,
    state: SessionState | None,
    now: datetime,
    _parked: ParkedEvent | None,
    _settled: bool,
) -> Outcome[SessionState]:
    """Fold one MAP event into its session; its completion emits the session's sample."""
    if state is not None and event.event_id in state.seen:
        return Outcome()  # a redelivered record: counted already
    if state is not None and state.closed is not None:
        seen = (*state.seen, event.event_id)[-SEEN_IDS:]
        late = state.model_copy(update={"late_events": state.late_events + 1, "seen": seen})
        return Outcome(new_state=late)
    folded = fold(state, event, now)
    if event.event_type != "MAPSessionCompleted":
        return Outcome(new_state=folded)
    sample = build_coordination(folded, event.event_id, "completed", now)
    return Outcome(samples=[sample], new_state=folded.model_copy(update={"closed": "completed"}))


def session_expiry(timeout: timedelta) -> Expire:
    """Return the ``expire`` hook of sessions: a quiet open session ends as timed out; a
    closed one is deleted once late events are no longer expected."""

    def expire(state: Any, now: datetime) -> Outcome[Any] | None:
        if not isinstance(state, SessionState) or now - state.touched_at < timeout:
            return None
        if state.closed is not None:
            return Outcome(close=True)
        last = state.seen[-1] if state.seen else state.session_id
        sample = build_coordination(state, last, "timeout", now)
        closed = state.model_copy(update={"closed": "timeout", "touched_at": now})
        return Outcome(samples=[sample], new_state=closed)

    return expire


def map_route() -> Route:
    """Return the route of the MAP events topic (keyed by session, never parked)."""
    return Route("map_sessions", decode_map_event, decide_map, key=_key)
