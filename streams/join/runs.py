"""SA steps and runtime executions as a keyed window of the join unit: one state per run.

A run starts (``SAStepStarted``; an execution ``pending`` or ``running``) and ends
(``SAStepCompleted`` / ``SAStepFailed``; ``completed`` / ``failed`` / ``cancelled``). Its end
is a pipeline_outcome sample (execution_completion), whose duration is the end's
``payload.duration_ms`` when it reports one, else runs from the start's event time when the
start was seen (streams/samples/run_end.py). Keys are ``run:step:<SA id>:<step id>`` and
``run:execution:<execution id>``; a step event without ``payload.step_id`` joins nothing and
its end goes out alone (no duration). As for MAP sessions (streams/join/sessions.py), an
ended run keeps its state for ``timeout`` to count late events, a redelivered event (by id)
counts once, and a run that started but never ended is dropped after ``timeout`` of quiet:
it says nothing of an outcome.

A pipeline stage that names no plan but its pipeline (the official stage event: top-level
``pipeline_id``, no plan) is a run too, keyed ``run:stage:<pipeline id>:<stage id>``: its
``running`` event is noted, and its end (completed, failed or skipped) is its
pipeline_outcome (streams/samples/builders.py), lasting from that start when the end
reports no ``payload.duration_ms``. A stage may run again (a retry): a start after an end
starts it anew, and each end is a sample. A stage of a plan joins its plan instead
(streams/join/rules.py ``on_stage``).

One SA event is no run: ``SAPlanEvaluated`` names the plan the agent generated, and joins
that plan's state under the plan's own key (plan_generation, streams/samples/generation.py);
it waits for a plan not seen yet like a decision does, up to the join's grace.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

import orjson
from pydantic import AwareDatetime, BaseModel, ConfigDict

from learnstream.streams.join.outcome import Outcome
from learnstream.streams.join.parked import ParkedEvent
from learnstream.streams.join.rules import plan_key
from learnstream.streams.join.unit import Expire, Route
from learnstream.streams.mplp.fields import text_of
from learnstream.streams.mplp.models import StageEvent
from learnstream.streams.mplp.run_events import (
    ExecutionEvent,
    SaEvent,
    decode_execution,
    decode_sa_event,
)
from learnstream.streams.samples.builders import build_pipeline_outcome
from learnstream.streams.samples.generation import build_plan_generation
from learnstream.streams.samples.ids import canonical_id
from learnstream.streams.samples.run_end import RunEnd, build_run_outcome
from learnstream.streams.state.plan import PlanState

__all__ = [
    "RUN_SPACE",
    "RunState",
    "decide_execution",
    "decide_sa",
    "decide_stage_run",
    "execution_route",
    "run_expiry",
    "sa_route",
    "stage_key",
]

#: The key space of runs in the join (the prefix of their keys).
RUN_SPACE = "run"
SEEN_IDS = 64
RunKind = Literal["step", "execution", "stage"]
_STEP_ENDS = ("SAStepCompleted", "SAStepFailed")
#: The SA event of the plan_generation point (streams/samples/generation.py).
PLAN_EVALUATED = "SAPlanEvaluated"


class RunState(BaseModel):
    """What a run's events said so far; JSON bytes in the ``runs`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: RunKind
    run_id: str
    #: The key of the records that wrote it (the SA's plan or id; the execution's id).
    record_key: str
    touched_at: AwareDatetime
    started_at: AwareDatetime | None = None
    role: str | None = None
    seen: tuple[str, ...] = ()
    #: How the run ended (None: still running), and the events that came after.
    closed: str | None = None
    late_events: int = 0

    def to_table(self) -> bytes:
        """Return the JSON bytes stored in the table and its changelog."""
        return orjson.dumps(self.model_dump(mode="json", exclude_defaults=True))

    @classmethod
    def from_table(cls, raw: bytes) -> RunState:
        """Parse what :meth:`to_table` stored."""
        return cls.model_validate_json(raw)


def run_key(kind: RunKind, run_id: str) -> str:
    """Return the join key of a run."""
    return f"{RUN_SPACE}:{kind}:{canonical_id(run_id)}"


def _seen(state: RunState, event_id: str) -> tuple[str, ...]:
    return (*state.seen, event_id)[-SEEN_IDS:]


def _step(
    state: RunState | None,
    kind: RunKind,
    run_id: str,
    record_key: str,
    event_id: str,
    now: datetime,
    end: RunEnd | None,
    started: datetime | None = None,
    **named: str | None,
) -> Outcome[RunState]:
    """Fold one event of a run: a redelivery counts once, a late one is counted and dropped,
    an end emits the run's outcome."""
    if state is not None and event_id in state.seen:
        return Outcome()
    if state is not None and state.closed is not None:
        late = {"late_events": state.late_events + 1, "seen": _seen(state, event_id)}
        return Outcome(new_state=state.model_copy(update=late))
    if state is None:
        state = RunState(kind=kind, run_id=run_id, record_key=record_key, touched_at=now)
    changes: dict[str, Any] = {"touched_at": max(state.touched_at, now)}
    changes["seen"] = _seen(state, event_id)
    changes["started_at"] = state.started_at or started
    changes |= {name: getattr(state, name) or value for name, value in named.items()}
    folded = state.model_copy(update=changes)
    if end is None:
        return Outcome(new_state=folded)
    sample = build_run_outcome(end, folded.started_at, now, folded.role)
    return Outcome(samples=[sample], new_state=folded.model_copy(update={"closed": end.status}))


def _error(payload: dict[str, Any]) -> Any:
    """Return what an end's payload says went wrong: ``error_info`` (the taxonomy's name),
    else ``error``."""
    info = payload.get("error_info")
    return info if info is not None else payload.get("error")


def _sa_end(event: SaEvent) -> RunEnd | None:
    if event.event_type not in _STEP_ENDS:
        return None
    said = text_of(event.payload, "status")
    failed = event.event_type == "SAStepFailed" or said == "failed"
    return RunEnd(
        status="failed" if failed else "completed",
        event_id=event.event_id,
        at=event.timestamp,
        pipeline_id=event.sa_id,
        stage_id=event.step_id,
        kind="sa_step",
        plan_id=event.plan_id,
        project_id=event.project_id,
        flow_id=text_of(event.payload, "source_flow_id", "flow_id"),
        error=_error(event.payload),
        result=event.payload.get("result"),
        config={"agent_role": text_of(event.payload, "agent_role")},
        role_field="agent_role",
        duration_ms=event.payload.get("duration_ms"),
        token_usage=event.payload.get("token_usage"),
    )


def decide_sa(
    event: SaEvent,
    state: Any,
    now: datetime,
    _parked: ParkedEvent | None,
    _settled: bool,
) -> Outcome[Any]:
    """Fold an SA step event into its step's run; join an ``SAPlanEvaluated`` with its plan
    (plan_generation: it waits for the plan like a decision); other SA events yield nothing."""
    if event.event_type == PLAN_EVALUATED:
        if event.plan_id is None:
            return Outcome()
        if not isinstance(state, PlanState):
            return Outcome(park=True)
        return Outcome(samples=[build_plan_generation(event, state, now)])
    end = _sa_end(event)
    if event.step_id is None or not event.event_type.startswith("SAStep"):
        return Outcome(samples=[build_run_outcome(end, None, now)] if end else [])
    started = event.timestamp if event.event_type == "SAStepStarted" else None
    record_key = event.plan_id or event.sa_id
    return _step(
        state, "step", _step_id(event), record_key, event.event_id, now, end, started,
        role=text_of(event.payload, "agent_role"),
    )  # fmt: skip


def _execution_end(event: ExecutionEvent) -> RunEnd | None:
    status = event.status
    if status not in ("completed", "failed", "cancelled"):
        return None
    return RunEnd(
        status=status,
        event_id=event.event_id,
        at=event.timestamp,
        pipeline_id=event.execution_id,
        stage_id=event.executor_role or event.executor_kind,
        kind="runtime_execution",
        plan_id=text_of(event.payload, "plan_id"),
        project_id=event.project_id,
        flow_id=text_of(event.payload, "source_flow_id", "flow_id"),
        error=_error(event.payload),
        result=event.payload.get("result"),
        config={"executor_kind": event.executor_kind, "executor_role": event.executor_role},
        role_field="executor_role",
        duration_ms=event.payload.get("duration_ms"),
        token_usage=event.payload.get("token_usage"),
    )


def decide_execution(
    event: ExecutionEvent,
    state: RunState | None,
    now: datetime,
    _parked: ParkedEvent | None,
    _settled: bool,
) -> Outcome[RunState]:
    """Fold a runtime execution event into its run; its end emits the outcome."""
    started = event.timestamp if event.status in ("pending", "running") else None
    return _step(
        state, "execution", event.execution_id, event.execution_id, event.event_id, now,
        _execution_end(event), started, role=event.executor_role,
    )  # fmt: skip


def decide_stage_run(
    event: StageEvent,
    state: RunState | None,
    now: datetime,
    stages: frozenset[str] | None = None,
) -> Outcome[RunState]:
    """Fold a pipeline stage that names no plan into its pipeline's run of the stage: a
    start is noted, an end (of a stage ``stages`` collects; None: all) is its outcome."""
    if state is not None and event.event_id in state.seen:
        return Outcome()  # a redelivered record: counted already
    if not (event.starts or event.ends or event.skipped):
        return Outcome()  # pending: nothing to note
    if state is None:
        run_id, key = _stage_run(event), str(event.pipeline_id)
        state = RunState(kind="stage", run_id=run_id, record_key=key, touched_at=now)
    changes: dict[str, Any] = {
        "touched_at": max(state.touched_at, now),
        "seen": _seen(state, event.event_id),
    }
    if event.starts:
        changes |= {"started_at": event.timestamp, "closed": None}
        return Outcome(new_state=state.model_copy(update=changes))
    changes |= {"started_at": None, "closed": event.status}
    collected = stages is None or event.stage in stages
    sample = build_pipeline_outcome(event, None, now, started_at=state.started_at)
    return Outcome(
        samples=[sample] if collected else [], new_state=state.model_copy(update=changes)
    )


def stage_key(event: StageEvent) -> str | None:
    """Return the join key of a stage event: its plan's, else its pipeline's run of the
    stage, else none (a payload-form stage naming neither goes out alone)."""
    if event.payload.plan_id is not None:
        return plan_key(event.payload.plan_id)
    if event.pipeline_id is None:
        return None
    return f"{RUN_SPACE}:stage:{_stage_run(event)}"


def _stage_run(event: StageEvent) -> str:
    return f"{canonical_id(str(event.pipeline_id))}:{canonical_id(event.stage)}"


def run_expiry(timeout: timedelta) -> Expire:
    """Return the ``expire`` hook of runs: a run quiet for ``timeout`` is dropped, ended or
    not (one that never ended makes no sample)."""

    def expire(state: Any, now: datetime) -> Outcome[Any] | None:
        if not isinstance(state, RunState) or now - state.touched_at < timeout:
            return None
        return Outcome(close=True)

    return expire


def _step_id(event: SaEvent) -> str:
    """Return a step's run id: its SA's and its own (step ids need not be unique across SAs)."""
    return f"{canonical_id(event.sa_id)}:{canonical_id(event.step_id or '')}"


def _sa_key(event: SaEvent) -> str | None:
    if event.event_type == PLAN_EVALUATED:  # joins its plan (the SA's records are keyed by it)
        return plan_key(event.plan_id) if event.plan_id is not None else None
    if event.step_id is None or not event.event_type.startswith("SAStep"):
        return None
    return f"{RUN_SPACE}:step:{_step_id(event)}"


def _execution_key(event: ExecutionEvent) -> str:
    return run_key("execution", event.execution_id)


def sa_route() -> Route:
    """Return the route of the SA events topic: steps keyed by step (never parked), a plan
    evaluation by its plan (parked until the plan comes)."""
    return Route("runs", decode_sa_event, decide_sa, key=_sa_key)


def execution_route() -> Route:
    """Return the route of the runtime executions topic (keyed by execution)."""
    return Route("runs", decode_execution, decide_execution, key=_execution_key)
