"""plan_optimization (seed 000 §7: slow plan -> optimized plan, from system metrics).

An execution (a completed ``execute`` stage of a plan:
:mod:`learnstream.streams.samples.executions`) is re-keyed by its project and intent by the pairs
miner (agents/joins/pair_miner.py) onto ``learnstream.pair_intents``, beside the decided
plans: no second join. An intent holds its executions with its plans
(streams/samples/replans.py: same TTL, bounds of their own).

Two executions of *different* plans: the later one in event time (``meta.event_time``; equal
times: neither) is an optimization of the earlier when it saved at least ``margin``
(``LEARNSTREAM_PAIRS__OPTIMIZATION_MARGIN``) of the duration or of the tokens (total, else
prompt + completion) and cost no more than ``margin`` extra on the other one where both are
known (:func:`saving`).

One sample per ordered pair of plans of one intent (slow plan, optimized plan), however often
each ran: its id is the intent's and the two plans'. It shows their *earliest qualifying pair*
of executions: the first execution of the optimized plan (event time, then sample id) that
beat an earlier execution of the slow plan, and the first of those it beat. So:

- Arrival order does not matter. Qualifying pairs only add up as executions arrive, and the
  earliest of a growing set only moves earlier: a plan pair's sample is sent when it first
  qualifies, and sent again (same id, new content) when an execution that arrives late in
  event time makes an earlier qualifying pair. The last one sent under an id is the one the
  intent's executions make together, whatever order they came in, and the samples topic,
  compacted by id, keeps it. Executions that arrive in event-time order send each once: a
  new one is the latest, so a pair it makes is never earlier than one found before.
- A replayed execution sends again the samples whose earliest pair it is part of: a sample
  lost in a crash comes back, the same as long as no earlier execution came meanwhile.
- Both directions can hold: A's run beaten by a later run of B, and B's by a later run of A,
  are two samples.
- Within the bounds: an intent holds its earliest executions (``MAX_EXECUTIONS``,
  ``MAX_EXECUTION_BYTES``); a later one beyond them is compared with them but not kept.

The sample: ``input`` the intent and the slow plan with its execution's metrics, ``output``
the optimized plan with its own and ``improvement`` (the share saved, per metric).
``meta.quality_score`` is the largest share saved on a metric that passed the margin
(``margin`` to 1.0); good from 0.5 (at least twice as fast or cheap), else acceptable.
Its preference pair (kind ``optimization``) is mined from the sample as written
(:func:`learnstream.streams.samples.pairs.optimization_pair`).

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from learnstream.streams.samples.executions import Execution
from learnstream.streams.samples.ids import sample_id
from learnstream.streams.samples.parts import PRODUCER, iso, present
from learnstream.streams.samples.sample import Feedback, LearningSample, SampleMeta

__all__ = ["build_plan_optimization", "optimizations", "saving"]


def _shares(slow: Execution, fast: Execution) -> dict[str, float]:
    """Return the share of each metric both know that ``fast`` saved (negative: it cost more)."""
    shares = {}
    for name in ("duration_ms", "tokens"):
        before, after = getattr(slow, name), getattr(fast, name)
        if before is not None and after is not None and (before or after):
            shares[name] = round(1 - after / before, 4) if before else -1.0
    return shares


def saving(slow: Execution, fast: Execution, margin: float) -> dict[str, float] | None:
    """Return what ``fast`` saved over ``slow`` per metric, or None when it is no
    optimization of it (not later, the same plan, not ``margin`` better, or costlier)."""
    if fast.event_time <= slow.event_time or fast.plan_key == slow.plan_key:
        return None
    shares = _shares(slow, fast)
    if any(share < -margin for share in shares.values()):
        return None
    return shares if max(shares.values(), default=0.0) >= margin else None


def build_plan_optimization(
    slow: Execution, fast: Execution, saved: dict[str, float], now: datetime
) -> LearningSample:
    """Build the plan_optimization sample of ``fast`` over ``slow``; its id names the intent
    and the two plans, whichever of their executions it shows."""
    score = min(max(saved.values()), 1.0)
    intent = present({"intent_id": fast.intent_id, "intent_text": slow.intent_text})
    plans = f"{fast.project_id or '-'}:{fast.intent_id}\x1f{slow.plan_key}\x1f{fast.plan_key}"
    return LearningSample(
        sample_id=sample_id("plan_optimization", plans),
        sample_family="plan_optimization",
        created_at=iso(now),
        input=intent | {"plan": slow.plan, "execution": slow.metrics()},
        output={"plan": fast.plan, "execution": fast.metrics(), "improvement": saved},
        feedback=Feedback(
            source="system", type="score", quality_label="good" if score >= 0.5 else "acceptable"
        ),
        meta=SampleMeta(
            source_event_ids=[slow.event_id, fast.event_id],
            project_id=fast.project_id or slow.project_id,
            human_feedback_label="not_reviewed",
            producer=PRODUCER,
            plan_id=fast.plan_ref,
            event_time=iso(fast.event_time),
            quality_score=score,
        ),
    )


def _earliest(
    slow_runs: list[Execution], fast_runs: list[Execution], margin: float
) -> tuple[Execution, Execution, dict[str, float]] | None:
    """Return the earliest qualifying pair of two plans' executions (each list in order):
    the first fast run to beat an earlier slow run, and the first slow run it beat."""
    for fast in fast_runs:
        for slow in slow_runs:
            if slow.event_time >= fast.event_time:
                break
            saved = saving(slow, fast, margin)
            if saved is not None:
                return slow, fast, saved
    return None


def _by_plan(runs: Iterable[Execution]) -> dict[str, list[Execution]]:
    plans: dict[str, list[Execution]] = {}
    for run in sorted(runs, key=lambda r: r.order):
        plans.setdefault(run.plan_key, []).append(run)
    return plans


def _if_earliest(
    new: Execution, slow_runs: list[Execution], fast_runs: list[Execution], margin: float
) -> tuple[Execution, Execution, dict[str, float]] | None:
    """Return the earliest qualifying pair of two plans if ``new`` is part of it."""
    found = _earliest(slow_runs, fast_runs, margin)
    if found is None or new.sample_id not in (found[0].sample_id, found[1].sample_id):
        return None
    return found


def optimizations(
    held: list[Execution], new: Execution, margin: float, now: datetime
) -> list[LearningSample]:
    """Return the samples of the plan pairs whose earliest qualifying pair ``new`` is part
    of, among the executions ``held`` for its intent and ``new``."""
    runs = held if any(r.sample_id == new.sample_id for r in held) else [*held, new]
    plans = _by_plan(runs)
    mine, found = plans.pop(new.plan_key), []
    for theirs in plans.values():
        # the full search only where ``new`` makes a qualifying pair at all (rarely)
        if any(saving(new, run, margin) for run in theirs):
            found.append(_if_earliest(new, mine, theirs, margin))
        if any(saving(run, new, margin) for run in theirs):
            found.append(_if_earliest(new, theirs, mine, margin))
    return [build_plan_optimization(*pair, now) for pair in found if pair is not None]
