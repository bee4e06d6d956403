"""Per-stage cost of turning one event into samples, in-process, no broker.

Runs the pure steps an agent calls (decode, plan-state lookup, builder, privacy, encode) over
the benchmark workload and prints the mean microseconds per event of each, and how many
string leaves reach Presidio. It says what the worker pays besides Kafka and Faust.

    python -m benchmarks.micro --events 5000
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from benchmarks.load import bench_workload, split_plans
from streams.codecs import codec_for
from streams.decode import decode_decision, decode_delta, decode_plan, decode_stage
from streams.join import Outcome, on_decision, on_delta, on_stage
from streams.outbox import learning_event
from streams.plan_state import PlanState, merge_snapshot
from streams.privacy import (
    PAYLOAD_SECTIONS,
    Anonymizer,
    PrivacyConfig,
    build_anonymizer,
    strip_opted_out,
)
from streams.privacy.pii import _MAY_HOLD_PII  # measure the very pre-filter the worker uses
from streams.workload import Record

__all__ = ["main", "measure"]

_T = TypeVar("_T")


class Clock:
    """Accumulate seconds per stage."""

    def __init__(self) -> None:
        self.spent: defaultdict[str, float] = defaultdict(float)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as ``name``."""
        started = time.perf_counter()
        yield
        self.spent[name] += time.perf_counter() - started

    def run(self, name: str, func: Callable[[], _T]) -> _T:
        """Return ``func()``, timed as ``name``."""
        with self.stage(name):
            return func()


def _outcome(record: Record, state: PlanState | None, now: datetime) -> Callable[[], Outcome]:
    kind = record.topic
    if kind in ("plan_approved", "plan_rejected"):
        return lambda: on_decision(decode_decision(record.value, kind), state, now)
    if kind == "delta_intents":
        return lambda: on_delta(decode_delta(record.value), state, now)
    return lambda: on_stage(decode_stage(record.value), state, now)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if not (isinstance(key, str) and (key == "id" or key.endswith(("_id", "_ids")))):
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _privacy(
    clock: Clock, sample: dict[str, Any], anonymizer: Anonymizer, leaves: Counter[str]
) -> Any:
    """Run apply_privacy's two steps on the payload sections, timing each."""
    patterns = anonymizer.config.opt_out_patterns
    payload = {k: sample[k] for k in PAYLOAD_SECTIONS if k in sample}
    for text in _strings(payload):
        leaves["strings"] += 1
        passes = bool(_MAY_HOLD_PII.search(text))
        leaves["pass_prefilter"] += passes
        leaves["pass_gates"] += passes and bool(anonymizer.candidates(text))
    stripped = clock.run(
        "privacy: opt-out globs",
        lambda: {k: strip_opted_out(v, patterns) for k, v in payload.items()},
    )
    clean, found = clock.run(
        "privacy: Presidio walk", lambda: anonymizer.anonymize_sample({**sample, **stripped})
    )
    leaves["pii_entities"] += sum(found.values())
    return clean


def _one_event(
    clock: Clock,
    record: Record,
    raw: dict[str, Any],
    anonymizer: Anonymizer,
    leaves: Counter[str],
    now: datetime,
) -> None:
    """Run one event through the agent's pure steps, timing each."""
    with clock.stage("plan_state lookup (model_validate)"):
        state = PlanState.model_validate(raw)
    outcome = clock.run("decode + builder", _outcome(record, state, now))
    for sample in outcome.samples:
        as_dict = clock.run("sample.to_dict", sample.to_dict)
        clean = _privacy(clock, as_dict, anonymizer, leaves)
        with clock.stage("encode avro"):
            codec_for("avro").encode(clean)
        with clock.stage("encode json (alternative)"):
            codec_for("json").encode(clean)
        with clock.stage("learning event"):
            learning_event(clean, now)
    if outcome.new_state is not None:
        clock.run("plan_state store (to_table)", outcome.new_state.to_table)


def measure(events: int, seed: int = 7) -> tuple[dict[str, float], Counter[str], int]:
    """Return (µs per event by stage, string-leaf counts, events measured)."""
    plans, others = split_plans(bench_workload(events, seed).records)
    now, clock, leaves = datetime.now(UTC), Clock(), Counter[str]()
    table = {}
    for record in plans:
        state = merge_snapshot(None, decode_plan(record.value), now)
        assert state is not None
        table[record.key.decode()] = state.to_table()
    anonymizer = build_anonymizer(PrivacyConfig())
    for record in others:
        _one_event(clock, record, table[record.key.decode()], anonymizer, leaves, now)
    per_event = {k: 1e6 * v / len(others) for k, v in clock.spent.items()}
    return per_event, leaves, len(others)


def main() -> None:
    """Print the per-stage costs."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.micro",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--events", type=int, default=5_000, help="workload size")
    per_event, leaves, count = measure(parser.parse_args().events)
    print(f"{count:,} non-plan events; mean µs per event:")
    for stage, micros in sorted(per_event.items(), key=lambda kv: -kv[1]):
        print(f"  {stage:40} {micros:8.1f}")
    print(
        f"string leaves: {leaves['strings']:,}, passing the PII pre-filter: "
        f"{leaves['pass_prefilter']:,}, then an entity's shape check (analyzed by Presidio): "
        f"{leaves['pass_gates']:,}, PII entities found: {leaves['pii_entities']:,}"
    )


if __name__ == "__main__":
    main()
