"""Per-stage cost of turning one event into samples, in-process, no broker.

Runs the pure steps an agent calls (decode, plan-state lookup, builder, privacy, encode) over
the benchmark workload and prints the mean microseconds per event of each, how many string
leaves reach Presidio, and what the secret detector costs per string leaf (its gate alone,
then its plugins on the leaves that pass). It says what the worker pays besides Kafka and Faust.
Times are this process's CPU time (other programs on the machine do not inflate them).

    python -m benchmarks.micro --events 5000
    python -m benchmarks.micro --events 5000 --no-secrets   # A/B of the secret detector
    python -m benchmarks.micro --phone-regions US,GB,DE,FR,IL,IN,CA,BR  # Presidio's own list
    python -m benchmarks.micro --compare-phone-regions  # the phone recognizer alone, A/B
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from presidio_analyzer.predefined_recognizers import PhoneRecognizer

from benchmarks.load import bench_workload, split_plans
from learnstream.streams.config.settings import DEFAULT_PHONE_REGIONS
from learnstream.streams.encoding.codecs import codec_for
from learnstream.streams.join.outcome import Outcome
from learnstream.streams.join.rules import on_decision, on_delta, on_stage
from learnstream.streams.mplp.decode import decode_decision, decode_delta, decode_plan, decode_stage
from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.gates import (
    MAY_HOLD_PII as _MAY_HOLD_PII,  # the worker's pre-filter
)
from learnstream.streams.privacy.idkeys import is_wellformed_id
from learnstream.streams.privacy.optout import strip_opted_out
from learnstream.streams.privacy.pii import Anonymizer, build_anonymizer
from learnstream.streams.privacy.pipeline import PAYLOAD_SECTIONS
from learnstream.streams.privacy.secrets import find_secrets, may_hold_secret
from learnstream.streams.samples.outbox import learning_event
from learnstream.streams.sim.workload import Record
from learnstream.streams.state.plan import PlanState, merge_snapshot

__all__ = ["main", "measure"]

_T = TypeVar("_T")


class Clock:
    """Accumulate CPU seconds per stage (process time: a busy machine does not count)."""

    def __init__(self) -> None:
        self.spent: defaultdict[str, float] = defaultdict(float)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as ``name``."""
        started = time.process_time()
        yield
        self.spent[name] += time.process_time() - started

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


def _strings(value: Any, under_id: bool = False) -> Iterator[str]:
    """Yield the string leaves the anonymizer reads (well-formed ids under id keys are not)."""
    if isinstance(value, str):
        if not (under_id and is_wellformed_id(value)):
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            is_id = isinstance(key, str) and (key == "id" or key.endswith(("_id", "_ids")))
            yield from _strings(item, is_id)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, under_id)


def _secret_step(clock: Clock, texts: list[str], leaves: Counter[str]) -> None:
    """Time the secret detector alone on the string leaves: its gate, then its plugins."""
    with clock.stage("privacy: secret gate (all leaves)"):
        passed = [text for text in texts if may_hold_secret(text)]
    leaves["pass_secret_gate"] += len(passed)
    with clock.stage("privacy: secret plugins (gated leaves)"):
        for text in passed:
            leaves["secrets"] += len(find_secrets(text))


def _privacy(
    clock: Clock, sample: dict[str, Any], anonymizer: Anonymizer, leaves: Counter[str]
) -> Any:
    """Run apply_privacy's two steps on the payload sections, timing each."""
    patterns = anonymizer.config.opt_out_patterns
    payload = {k: sample[k] for k in PAYLOAD_SECTIONS if k in sample}
    texts = list(_strings(payload))
    _secret_step(clock, texts, leaves)
    for text in texts:
        leaves["strings"] += 1
        passes = bool(_MAY_HOLD_PII.search(text))
        leaves["pass_prefilter"] += passes
        leaves["pass_gates"] += passes and bool(anonymizer.candidates(text))
    stripped = clock.run(
        "privacy: opt-out globs",
        lambda: {k: strip_opted_out(v, patterns) for k, v in payload.items()},
    )
    clean, found = clock.run(
        "privacy: anonymizer walk (PII + secrets)",
        lambda: anonymizer.anonymize_sample({**sample, **stripped}),
    )
    leaves["pii_entities"] += sum(found.values())
    return clean


def _one_event(
    clock: Clock,
    record: Record,
    raw: bytes,
    anonymizer: Anonymizer,
    leaves: Counter[str],
    now: datetime,
) -> None:
    """Run one event through the agent's pure steps, timing each."""
    with clock.stage("plan_state lookup (from_table)"):
        state = PlanState.from_table(raw)
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


def measure(
    events: int,
    seed: int = 7,
    detect_secrets: bool = True,
    phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS,
) -> tuple[dict[str, float], Counter[str], int, dict[str, float]]:
    """Return (µs per event by stage, string-leaf counts, events measured, seconds by stage)."""
    plans, others = split_plans(bench_workload(events, seed).records)
    now, clock, leaves = datetime.now(UTC), Clock(), Counter[str]()
    table: dict[str, bytes] = {}
    for record in plans:
        state = merge_snapshot(None, decode_plan(record.value), now)
        assert state is not None
        table[record.key.decode()] = state.to_table()
    config = PrivacyConfig(detect_secrets=detect_secrets, phone_regions=phone_regions)
    anonymizer = build_anonymizer(config)
    for record in others:
        _one_event(clock, record, table[record.key.decode()], anonymizer, leaves, now)
    per_event = {k: 1e6 * v / len(others) for k, v in clock.spent.items()}
    return per_event, leaves, len(others), dict(clock.spent)


def compare_phone_regions(events: int, rounds: int = 5) -> None:
    """Print the phone recognizer's CPU per event with Presidio's regions and with ours.

    Runs each recognizer over the strings that reach it in the workload, interleaved,
    and keeps the best round of each (the machine's noise only ever adds).
    """
    texts: list[str] = []
    real = PhoneRecognizer.analyze

    def spy(self: PhoneRecognizer, text: str, *args: Any, **kwargs: Any) -> Any:
        texts.append(text)
        return real(self, text, *args, **kwargs)

    PhoneRecognizer.analyze = spy  # type: ignore[method-assign]
    try:
        _, _, count, _ = measure(events)
    finally:
        PhoneRecognizer.analyze = real  # type: ignore[method-assign]
    sets = {
        "Presidio's": PhoneRecognizer.DEFAULT_SUPPORTED_REGIONS,
        "default": DEFAULT_PHONE_REGIONS,
    }
    best = dict.fromkeys(sets, float("inf"))
    found = dict.fromkeys(sets, 0)
    for _ in range(rounds):
        for name, regions in sets.items():
            recognizer = PhoneRecognizer(supported_regions=regions)
            started = time.process_time()
            found[name] = sum(len(recognizer.analyze(t, ["PHONE_NUMBER"])) for t in texts)
            best[name] = min(best[name], time.process_time() - started)
    print(f"{len(texts):,} strings reach the phone recognizer in {count:,} events")
    for name, regions in sets.items():
        micros = 1e6 * best[name] / count
        print(f"  {name} {','.join(regions)}: {micros:.0f} µs/event, {found[name]} phones")


def main() -> None:
    """Print the per-stage costs."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.micro",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--events", type=int, default=5_000, help="workload size")
    parser.add_argument(
        "--no-secrets",
        action="store_true",
        help="anonymizer without the secret detector (LEARNSTREAM_PRIVACY__DETECT_SECRETS=false)",
    )
    parser.add_argument(
        "--phone-regions",
        default=",".join(DEFAULT_PHONE_REGIONS),
        help="comma-separated regions of the phone recognizer (LEARNSTREAM_PRIVACY__PHONE_REGIONS)",
    )
    parser.add_argument(
        "--compare-phone-regions",
        action="store_true",
        help="only time the phone recognizer: Presidio's 8 regions against the default",
    )
    args = parser.parse_args()
    if args.compare_phone_regions:
        compare_phone_regions(args.events)
        return
    regions = tuple(args.phone_regions.split(","))
    per_event, leaves, count, spent = measure(
        args.events, detect_secrets=not args.no_secrets, phone_regions=regions
    )
    print(f"{count:,} non-plan events; mean µs per event:")
    for stage, micros in sorted(per_event.items(), key=lambda kv: -kv[1]):
        print(f"  {stage:40} {micros:8.1f}")
    print(
        f"string leaves: {leaves['strings']:,}, passing the PII pre-filter: "
        f"{leaves['pass_prefilter']:,}, then an entity's shape check (analyzed by Presidio): "
        f"{leaves['pass_gates']:,}, PII entities found: {leaves['pii_entities']:,}"
    )
    strings = max(leaves["strings"], 1)
    gate_us = 1e6 * spent["privacy: secret gate (all leaves)"] / strings
    plugin_us = (
        1e6 * spent["privacy: secret plugins (gated leaves)"] / max(leaves["pass_secret_gate"], 1)
    )
    print(
        f"secret step: gate {gate_us:.2f} µs per string leaf; "
        f"{leaves['pass_secret_gate']:,} leaves passed it "
        f"({100 * leaves['pass_secret_gate'] / strings:.1f} %), plugins {plugin_us:.1f} µs each; "
        f"secrets found: {leaves['secrets']:,}"
    )


if __name__ == "__main__":
    main()
