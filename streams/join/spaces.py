"""The join's key spaces beside plans, and the rules of what a record and a sample owe them.

Keys are plans' or those of another key space (``session:<id>``, ``run:...``, ``graph:...``,
``impact:...``): a :class:`KeySpace` has its own state store and end (streams/join/sessions.py,
runs.py, graphs.py, impacts.py). Pure: agents/joins/plan_join.py applies what these say.

- **Fan-out** (:func:`fan_out`): a record the join has decided goes on to every space that
  also reads its topic with a route of its own; a space whose keys sit on their plan's
  partition gets it only once its plan is known (a record waiting for its plan is handed on
  when the plan completes it).
- **The consent project** (:func:`with_plan_project`, :func:`plan_projects`): consent is per
  project, so an event or a sample of such a space that names a plan but no project takes
  the plan's; a sample whose plan is not stored here has an unknown project and is not sent,
  since a project that opted out must never be guessed to have consented.
- **Quiet keys** (:func:`may_end_quiet`): a space's keys of a partition that went quiet end
  only once the space's inputs have nothing of that partition unread (a worker catching up
  would end sessions whose next events wait for it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from learnstream.streams.join.unit import Expire, Route
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.sample import LearningSample

__all__ = [
    "UNKNOWN_PROJECT",
    "KeySpace",
    "States",
    "fan_out",
    "may_end_quiet",
    "plan_projects",
    "space_of",
    "with_plan_project",
]

#: What ``project_of`` answers for a plan this worker does not store.
UNKNOWN_PROJECT = object()


class States(Protocol):
    """A key space's state store: a table of states, and when each may end."""

    def get(self, key: str) -> Any: ...
    def store(self, key: str, state: Any) -> bool: ...
    def forget(self, key: str) -> None: ...
    def __contains__(self, key: object) -> bool: ...

    def due(self, partition: int, now: datetime) -> Iterable[str]:
        """Pop the keys of ``partition`` whose state may have ended by ``now``."""
        ...

    def retry(self, partition: int, keys: Iterable[str]) -> None:
        """Make popped ``keys`` due again (their sweep did not finish)."""
        ...

    def invalidate(self) -> None:
        """Forget what is known of when states end (a rebalance): rebuilt when next due."""
        ...


@dataclass(frozen=True)
class KeySpace:
    """Keys other than plans (``<space>:<id>``): where their state is, and how it ends."""

    states: States
    expire: Expire | None = None
    #: The input topics of the space: a quiet key of a partition is not ended while one of
    #: them has records of that partition still unread (the worker is catching up).
    topics: tuple[str, ...] = ()
    #: Routes of the space by topic, over the join's: a topic routed here that the join
    #: routes elsewhere too hands each record to both, the join's route first (a delta
    #: joins its plan, then its impact window: streams/join/impacts.py).
    routes: Mapping[str, Route] = field(default_factory=dict)
    #: Its keys sit on their plan's partition (their records are keyed by plan id): a sample
    #: that names a plan but no project takes the plan's, since consent is per project.
    plan_partitioned: bool = False


def space_of(key: str) -> str | None:
    """Return the key space of a join key (None: a plan's key, which has no prefix)."""
    space, colon, _ = key.partition(":")
    return space if colon else None


def fan_out(
    spaces: Mapping[str, KeySpace], topic: str, own: Route | None, plan_known: bool
) -> Iterator[tuple[KeySpace, Route]]:
    """Yield the spaces (and their routes) a record of ``topic`` the join decided with route
    ``own`` goes on to; ``plan_known``: the plan it names is stored here."""
    for space in spaces.values():
        route = space.routes.get(topic)
        if route is None or route is own:
            continue
        if space.plan_partitioned and not plan_known:
            continue
        yield space, route


def with_plan_project(decoded: Any, project: str | None) -> Any:
    """Return ``decoded`` naming ``project`` if it names none itself (the plan's project)."""
    if project is None or getattr(decoded, "project_id", None) is not None:
        return decoded
    return decoded.model_copy(update={"project_id": project})


def plan_projects(
    samples: Iterable[LearningSample], project_of: Callable[[str], str | None | object]
) -> tuple[list[LearningSample], int]:
    """Return the samples with the project of the plan they name (those that name a plan
    but no project), and how many were left out because their plan is not stored here
    (``project_of`` answers :data:`UNKNOWN_PROJECT`)."""
    kept, unknown = [], 0
    for sample in samples:
        meta = sample.meta
        if meta.project_id is None and meta.plan_id is not None:
            project = project_of(meta.plan_id)
            if project is UNKNOWN_PROJECT:
                unknown += 1
                continue
            if isinstance(project, str):
                meta = meta.model_copy(update={"project_id": canonical_id(project)})
                sample = sample.model_copy(update={"meta": meta})
        kept.append(sample)
    return kept, unknown


def may_end_quiet(
    topics: Iterable[str], partition: int, unread: Callable[[str, int], bool]
) -> bool:
    """Tell whether a space reading ``topics`` may end its quiet keys of ``partition``."""
    return not any(unread(topic, partition) for topic in topics)
