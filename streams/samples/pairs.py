"""Preference pairs mined from the samples as written: the wire model, samples in, corrections.

Wire format of ``mplp.preference_pairs``: key = ``pair_id`` (UTF-8), value = the JSON object
of :class:`PreferencePair` with every field present.

``margin`` is how much better chosen is than rejected on the samples' ``meta.quality_score``
scale (``null`` only for a sample written without a score):

- ``replan``: the approved sample's score less the rejected one's (0.5 to 1.0);
- ``correction``: the sample's score, the corrected plan's, less 0 for the plan the user
  set aside by correcting it;
- ``feedback``: ``(1 - score) / 2`` (:mod:`learnstream.streams.a2e.samples`);
- ``optimization``: the plan_optimization sample's score, the share the optimized plan saved
  (the slow plan is its rejected side).

Only samples are read, never raw inputs, so a pair holds nothing its samples did not:
anonymization, opt-out and consent were applied before. Three kinds are built here:

- ``replan``: for one ``intent_id``, a rejected plan followed in event time by an approved
  plan (the matching and its state: :mod:`learnstream.streams.samples.replans`);
- ``correction``: an error_correction sample whose ``output.result`` is an applicable JSON
  merge patch of its ``input.plan_state`` (:func:`correction_pair`);
- ``optimization``: a plan_optimization sample (:mod:`learnstream.streams.samples.optimizations`),
the slow
  plan rejected, the optimized plan chosen (:func:`optimization_pair`).

A pipeline_outcome is read only when it is a completed execution of a plan (it is re-keyed by
intent to be compared: :mod:`learnstream.streams.samples.executions`); the others are skipped
unread.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from learnstream.streams.dlq.errors import InvalidEvent, field_path
from learnstream.streams.mplp.fields import Uuid4
from learnstream.streams.samples.executions import is_execution
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.sample import FAMILIES, LearningSample

__all__ = [
    "NO_PAIR_REASONS",
    "PAIR_FAMILIES",
    "PAIR_KINDS",
    "NoPair",
    "PairFamily",
    "PairKind",
    "PreferencePair",
    "correction_pair",
    "event_time",
    "invalid",
    "merge_patch",
    "optimization_pair",
    "pair_id",
    "pair_sample",
]

PairKind = Literal["replan", "correction", "feedback", "optimization"]
PAIR_KINDS: tuple[str, ...] = PairKind.__args__  # type: ignore[attr-defined]
PairFamily = Literal[
    "intent_resolution", "error_correction", "dialog_response", "plan_optimization"
]
NoPair = Literal[
    "no_plan_state",  # correction: input.plan_state is not an object
    "not_an_object",  # correction: output.result is no JSON object (a summary string)
    "empty_patch",  # correction: output.result is {}
    "unknown_key",  # correction: a key plan_state does not have ({"steps_added": 1})
    "no_change",  # correction: applied, plan_state is as it was
    "undecided",  # intent: neither approved nor rejected
    "intent_full",  # intent: holds its most plans or bytes (streams/samples/replans.py) already
    "no_metrics",  # execution: neither a duration nor a token count to compare
]
NO_PAIR_REASONS: tuple[str, ...] = NoPair.__args__  # type: ignore[attr-defined]
#: The sample families pairs are made of (the others are skipped before validation).
PAIR_FAMILIES = frozenset(
    {"intent_resolution", "error_correction", "pipeline_outcome", "plan_optimization"}
)


def pair_id(kind: str, rejected_sample_id: str, chosen_sample_id: str) -> str:
    """Return the pair's UUID v4-shaped id: a pure function of its kind and two samples.

    A replay of the same samples re-emits the same id, so the compacted topic keeps one.
    """
    return sample_id(f"preference_pair.{kind}", f"{rejected_sample_id}\x1f{chosen_sample_id}")


class PreferencePair(BaseModel):
    """One DPO pair: ``prompt``, a ``chosen`` and a ``rejected`` completion, and provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pair_id: Uuid4
    kind: PairKind
    intent_id: str | None
    project_id: str | None
    family: PairFamily
    prompt: dict[str, Any]
    chosen: dict[str, Any]
    rejected: dict[str, Any]
    chosen_sample_id: str
    rejected_sample_id: str
    event_time: str
    created_at: str
    margin: float | None = None

    def key(self) -> bytes:
        """Return the record key: the pair id."""
        return self.pair_id.encode()

    def to_json(self) -> bytes:
        """Return the record value: compact JSON, every field present."""
        return orjson.dumps(self.model_dump(mode="json"))


def pair_sample(sample: dict[str, Any]) -> LearningSample | None:
    """Validate a sample as written (anonymized, consented) into a LearningSample.

    None: a sample of a family that makes no pair, or a pipeline_outcome that is no
    execution (not validated: it is only skipped).
    """
    family = sample.get("sample_family")
    if family in FAMILIES and family not in PAIR_FAMILIES:
        return None
    if family == "pipeline_outcome" and not is_execution(sample):
        return None
    try:
        return LearningSample.model_validate(sample)
    except ValidationError as exc:
        raise invalid(exc, "a LearningSample") from None


def invalid(exc: ValidationError, expected: str) -> InvalidEvent:
    """Return the InvalidEvent of a validation error, naming a field, never a value or key.

    An unexpected key *is* input (``{"jane_doe": 1}``): its parent is named instead.
    """
    first = exc.errors(include_input=False, include_url=False)[0]
    loc = first["loc"][:-1] if first["type"] == "extra_forbidden" else first["loc"]
    return InvalidEvent("schema_violation", f"not {expected} (at {field_path(loc) or 'top'})")


def merge_patch(target: Any, patch: Any) -> Any:
    """Return ``target`` with the JSON merge patch ``patch`` applied (RFC 7386)."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def _applicable(state: Any, patch: Any) -> NoPair | None:
    """Say why ``patch`` is no applicable merge patch of ``state`` (None: it is one).

    Applicable: a non-empty JSON object whose keys are all keys of ``state`` and that
    changes it. ``{"steps_added": 1}`` describes a change; it is no patch of a plan.
    """
    if not isinstance(state, dict):
        return "no_plan_state"
    if not isinstance(patch, dict):
        return "not_an_object"
    if not patch:
        return "empty_patch"
    if not set(patch) <= set(state):
        return "unknown_key"
    return "no_change" if merge_patch(state, patch) == state else None


def correction_pair(sample: LearningSample, created_at: str) -> PreferencePair | NoPair:
    """Return the pair of an error_correction sample, or why it yields none.

    rejected = ``input.plan_state``; chosen = it with ``output.result`` merge-patched in;
    prompt = the sample's input without ``plan_state`` (that is the rejected side);
    margin = the sample's score (the rejected side scores 0).
    """
    state, patch = sample.input.get("plan_state"), sample.output.get("result")
    reason = _applicable(state, patch)
    if reason is not None:
        return reason
    prompt = {k: v for k, v in sample.input.items() if k != "plan_state"}
    intent_id = sample.input.get("intent_id")
    return PreferencePair(
        pair_id=pair_id("correction", sample.sample_id, sample.sample_id),
        kind="correction",
        intent_id=intent_id if isinstance(intent_id, str) else None,
        project_id=sample.meta.project_id,
        family="error_correction",
        prompt=prompt,
        chosen=merge_patch(state, patch),
        rejected=state,
        chosen_sample_id=sample.sample_id,
        rejected_sample_id=sample.sample_id,
        event_time=sample.meta.event_time or sample.created_at,
        created_at=created_at,
        margin=sample.meta.quality_score,
    )


def optimization_pair(sample: LearningSample, created_at: str) -> PreferencePair:
    """Return the pair of a plan_optimization sample: rejected = the slow plan
    (``input.plan``), chosen = the optimized one (``output.plan``), prompt = the intent (the
    sample's input without the plan and its execution); margin = the sample's score."""
    prompt = {k: v for k, v in sample.input.items() if k not in ("plan", "execution")}
    intent_id = sample.input.get("intent_id")
    return PreferencePair(
        pair_id=pair_id("optimization", sample.sample_id, sample.sample_id),
        kind="optimization",
        intent_id=intent_id if isinstance(intent_id, str) else None,
        project_id=sample.meta.project_id,
        family="plan_optimization",
        prompt=prompt,
        chosen=sample.output["plan"],
        rejected=sample.input["plan"],
        chosen_sample_id=sample.sample_id,
        rejected_sample_id=sample.sample_id,
        event_time=sample.meta.event_time or sample.created_at,
        created_at=created_at,
        margin=sample.meta.quality_score,
    )


def event_time(sample: LearningSample) -> datetime:
    """Return when a sample's source event happened (its creation time if unknown)."""
    return datetime.fromisoformat(sample.meta.event_time or sample.created_at)
