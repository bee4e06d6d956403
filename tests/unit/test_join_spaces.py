"""The key spaces' rules (streams/join/spaces.py) on their own: fan-out, the consent
project, quiet keys. No broker, no Faust."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from learnstream.streams.join.spaces import (
    UNKNOWN_PROJECT,
    KeySpace,
    fan_out,
    may_end_quiet,
    plan_projects,
    space_of,
    with_plan_project,
)
from learnstream.streams.join.unit import Route
from learnstream.streams.samples import builders
from learnstream.streams.samples.ids import canonical_id
from tests.unit import test_builders as tb


def route(name: str) -> Route:
    return Route("impacts", lambda *_: name, lambda *_: None, lambda _event: f"{name}:1")


JOIN = route("plan")
IMPACT, SESSION = route("impact"), route("session")
SPACES = {
    "impact": KeySpace(None, routes={"deltas": IMPACT}, plan_partitioned=True),  # type: ignore[arg-type]
    "session": KeySpace(None, routes={"map": SESSION, "deltas": JOIN}),  # type: ignore[arg-type]
}


def test_a_record_goes_on_to_the_spaces_with_a_route_of_their_own() -> None:
    assert [r for _, r in fan_out(SPACES, "deltas", JOIN, plan_known=True)] == [IMPACT]
    assert [r for _, r in fan_out(SPACES, "map", None, plan_known=False)] == [SESSION]
    assert list(fan_out(SPACES, "plans", JOIN, plan_known=True)) == []


def test_a_plan_partitioned_space_waits_for_the_plan() -> None:
    assert list(fan_out(SPACES, "deltas", JOIN, plan_known=False)) == []


class Event(BaseModel):
    project_id: str | None = None


def test_an_event_naming_no_project_takes_its_plans() -> None:
    assert with_plan_project(Event(), "p1").project_id == "p1"
    assert with_plan_project(Event(project_id="own"), "p1").project_id == "own"
    assert with_plan_project(Event(), None).project_id is None


def _sample(plan_id: str | None, project_id: str | None) -> Any:
    sample = builders.build_pipeline_outcome(tb.stage(), None, tb.NOW)
    meta = sample.meta.model_copy(update={"plan_id": plan_id, "project_id": project_id})
    return sample.model_copy(update={"meta": meta})


def test_a_sample_takes_its_plans_project_or_is_left_out_when_the_plan_is_unknown() -> None:
    known, unknown = canonical_id("plan-known"), canonical_id("plan-elsewhere")
    projects = {known: "project-7"}
    samples = [
        _sample(known, None),
        _sample(unknown, None),
        _sample(None, None),  # names no plan: as it is
        _sample(unknown, canonical_id("own")),  # names its project: as it is
    ]
    kept, left_out = plan_projects(samples, lambda plan: projects.get(plan, UNKNOWN_PROJECT))
    assert left_out == 1
    assert [(s.meta.plan_id, s.meta.project_id) for s in kept] == [
        (known, canonical_id("project-7")),
        (None, None),
        (unknown, canonical_id("own")),
    ]


def test_a_plan_that_names_no_project_leaves_the_sample_without_one() -> None:
    plan = canonical_id("plan-1")
    kept, left_out = plan_projects([_sample(plan, None)], lambda _plan: None)
    assert (left_out, kept[0].meta.project_id) == (0, None)


def test_quiet_keys_end_only_with_nothing_of_their_partition_unread() -> None:
    unread = {("map", 1)}
    assert may_end_quiet(("map", "sa"), 0, lambda t, p: (t, p) in unread)
    assert not may_end_quiet(("map", "sa"), 1, lambda t, p: (t, p) in unread)


def test_a_key_names_its_space() -> None:
    assert (space_of("session:abc"), space_of("run:stage:p:s"), space_of("3f2a")) == (
        "session",
        "run",
        None,
    )
