"""Events of things that start and end: single-agent steps and runtime executions.

- SA events (``events/mplp-sa-event.schema.json``, topic ``mplp.sa_events``): a single
  agent's lifecycle, ``SAInitialized`` to ``SACompleted``. Its steps (``SAStepStarted``,
  ``SAStepCompleted``, ``SAStepFailed``, ``payload.step_id``) are the execution_completion
  collection point. The schema is closed at the top level; we read what it names.
- Runtime executions (``events/mplp-runtime-execution-event.schema.json``, topic
  ``mplp.runtime_executions``): an agent, tool, LLM or worker run, ``pending`` / ``running``
  to ``completed`` / ``failed`` / ``cancelled``, by ``execution_id``.

Ids that are no UUID and timestamps without a zone are accepted and noted, as for every
input (streams/mplp/fields.py); open payloads are read field by field, a value of the wrong
type ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.mplp.decode import RecordOrigin, decode_typed, load_json, validate_event
from learnstream.streams.mplp.fields import InputNotes, IsoTime, RuntimeId, text_of
from learnstream.streams.mplp.models import MplpEvent

__all__ = [
    "SA_EVENT_TYPES",
    "ExecutionEvent",
    "SaEvent",
    "decode_execution",
    "decode_sa_event",
]

SaEventType = Literal[
    "SAInitialized",
    "SAContextLoaded",
    "SAPlanEvaluated",
    "SAStepStarted",
    "SAStepCompleted",
    "SAStepFailed",
    "SATraceEmitted",
    "SACompleted",
]
SA_EVENT_TYPES: tuple[str, ...] = SaEventType.__args__  # type: ignore[attr-defined]
ExecutionStatus = Literal["pending", "running", "completed", "failed", "cancelled"]


class SaEvent(BaseModel):
    """One single-agent event, as ``events/mplp-sa-event.schema.json`` defines it."""

    model_config = ConfigDict(extra="allow", frozen=True)
    event_id: RuntimeId
    event_type: SaEventType
    timestamp: IsoTime
    sa_id: RuntimeId
    context_id: RuntimeId | None = None
    plan_id: RuntimeId | None = None
    trace_id: RuntimeId | None = None
    payload: dict[str, Any] = Field(default_factory=dict)

    @property
    def step_id(self) -> str | None:
        """Return the step a step event is about (``payload.step_id``)."""
        return text_of(self.payload, "step_id")

    @property
    def project_id(self) -> str | None:
        """Return the project, if the payload names one (the schema has no field for it)."""
        return text_of(self.payload, "project_id")


class ExecutionEvent(MplpEvent):
    """One runtime execution event (``events/mplp-runtime-execution-event.schema.json``)."""

    event_family: Literal["runtime_execution"]
    execution_id: RuntimeId
    executor_kind: Literal["agent", "tool", "llm", "worker", "external"]
    executor_role: str | None = None
    status: ExecutionStatus


def decode_sa_event(
    data: bytes | None, origin: RecordOrigin | None = None, notes: InputNotes | None = None
) -> SaEvent:
    """Decode an SA event; one whose ``event_type`` the schema does not name is refused."""
    return decode_typed(data, SaEvent, SA_EVENT_TYPES, "SA", origin, notes)


def decode_execution(
    data: bytes | None, origin: RecordOrigin | None = None, notes: InputNotes | None = None
) -> ExecutionEvent:
    """Decode a runtime execution event."""
    obj = load_json(data)
    if isinstance(obj, dict) and obj.get("event_family") != "runtime_execution":
        raise InvalidEvent("unknown_event_type", "event_family: expected runtime_execution")
    return validate_event(ExecutionEvent, obj, origin, notes)
