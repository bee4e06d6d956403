"""What a decider says one event comes to (:class:`Outcome`), and the join's inputs by name.

The join unit (streams/join/unit.py) applies outcomes whatever the key space; the deciders
(streams/join/rules.py for plans, sessions.py, runs.py, graphs.py, impacts.py) make them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from learnstream.streams.samples.sample import LearningSample

__all__ = ["Outcome", "Source"]

S = TypeVar("S")
#: The input a parked event came from (stored with it in the ``pending`` table).
Source = Literal[
    "decisions", "deltas", "stages", "map_sessions", "runs", "graphs", "core_events", "impacts"
]


@dataclass(frozen=True)
class Outcome(Generic[S]):
    """What the agent must do with one event: emit samples, park it, store a new state, or
    close the key (its state is done with: a session that ended)."""

    samples: list[LearningSample] = field(default_factory=list)
    park: bool = False
    new_state: S | None = None
    close: bool = False
