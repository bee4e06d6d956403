"""All custom Prometheus metrics, in one registry (docs/architecture.md §7). Labels are bounded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from learnstream.streams.dlq.errors import REASONS
from learnstream.streams.mplp.fields import InputNotes
from learnstream.streams.mplp.models import ID_FIELDS, TIME_FIELDS
from learnstream.streams.samples.pairs import NO_PAIR_REASONS, PAIR_KINDS
from learnstream.streams.samples.sample import FAMILIES, QUALITIES

__all__ = ["SOURCES", "VIEW_PARTIAL_REASONS", "Metrics"]

SOURCES = (
    "plans",
    "decisions",
    "deltas",
    "stages",
    "consent",
    "samples",
    "pair_intents",
    "learn",
    "map_sessions",
    "runs",
    "graphs",
    "core_events",
    "ticks",
)

#: Why a sample was not collected (``learnstream_samples_skipped_total``): its collection
#: point is switched off, or it fell outside its family's sampling rate.
SKIP_REASONS = ("point_off", "rate")

#: Why a stats/adapt answer did not wait for the stats view (agents/learning/view.py): its
#: reader holds no changelog partitions yet, the catch-up ran out of time, or the broker
#: failed while it was asked for end offsets.
VIEW_PARTIAL_REASONS = ("unassigned", "timeout", "broker_error")

#: The core-event series created at 0: the families a collection point reads.
CORE_USES = (
    ("impact_analysis", "joined"),
    ("impact_analysis", "incomplete"),
    ("intent", "joined"),
    ("intent", "incomplete"),
    ("cost_budget", "joined"),
    ("cost_budget", "incomplete"),
)

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900)
_PROCESSING_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
_CONSENT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5, 10, 60)
_LOOP_LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120)


def _counter(registry: CollectorRegistry, name: str, doc: str, *labels: str) -> Counter:
    return Counter(name, doc, labels, registry=registry)


@dataclass
class Metrics:
    """The learnstream metrics; one instance per worker process."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.events = _counter(r, "learnstream_events", "Input events consumed", "source")
        self.samples = _counter(r, "learnstream_samples", "Samples emitted", "family", "quality")
        self.dlq = _counter(r, "learnstream_dlq", "Records sent to the DLQ", "reason")
        self.pii = _counter(r, "learnstream_pii_entities", "PII entities anonymized", "entity")
        self.opted_out = _counter(
            r, "learnstream_opted_out", "Samples dropped by opt-out", "reason"
        )
        self.skipped = _counter(
            r,
            "learnstream_samples_skipped",
            "Samples not collected: their collection point is off, or outside their rate",
            "family",
            "reason",
        )
        self.pairs = _counter(r, "learnstream_preference_pairs", "Pairs emitted", "kind")
        self.no_pair = _counter(
            r, "learnstream_no_pair", "Samples that yield no preference pair", "reason"
        )
        self.pair_intents_expired = _counter(
            r,
            "learnstream_pair_intents_expired",
            "Intents dropped by pairs.ttl (approved=false: rejections never followed by one)",
            "approved",
        )
        self.pair_intents_restored = Counter(
            "learnstream_pair_intents_restored",
            "Re-keyed records read back to restore the pairs miner's intents of a partition "
            "this worker was assigned (they have no changelog)",
            registry=r,
        )
        self.skill_calls = _counter(
            r,
            "learnstream_skill_calls",
            "Skill/tool calls counted by the A2E stats (name: a2e.skills, else the first "
            "a2e.max_skills seen, then other)",
            "kind",
            "name",
            "outcome",
        )
        self.learn_requests = _counter(
            r, "learnstream_learn_requests", "A2E learn requests answered", "type", "result"
        )
        self.learn_view_partial = _counter(
            r,
            "learnstream_learn_view_partial",
            "A2E stats/adapt answers given before the stats view caught up with the changelog",
            "reason",
        )
        self.join_misses = Counter(
            "learnstream_join_misses", "Events whose plan never came", registry=r
        )
        self.redelivered = Counter(
            "learnstream_redelivered",
            "Records skipped: processed before, or above a hole that is read again",
            registry=r,
        )
        self.rebalances = Counter("learnstream_rebalances", "Partition reassignments", registry=r)
        self.non_uuid_ids = _counter(
            r, "learnstream_non_uuid_ids", "Input ids accepted that are not UUID v4", "field"
        )
        self.naive_timestamps = _counter(
            r, "learnstream_naive_timestamps", "Input times without a zone (read as UTC)", "field"
        )
        self.filled_fields = _counter(
            r, "learnstream_filled_fields", "Event fields taken from the Kafka record", "field"
        )
        self.core_events = _counter(
            r,
            "learnstream_core_events",
            "Core events read, by family and use: joined (an impact analysis completing its "
            "delta), counted (intent, cost_budget), incomplete (an analysis naming no delta "
            "or outcome), ignored (families no collection point reads)",
            "family",
            "use",
        )
        self.pending = Gauge(
            "learnstream_pending_joins", "Events parked for their plan", registry=r
        )
        self.held_writes = Gauge(
            "learnstream_held_writes",
            "Changed table values held in memory, their records' offsets not committed yet "
            "(at_least_once; each is one changelog record when written)",
            ["table"],
            registry=r,
        )
        self.waiting_corrections = Gauge(
            "learnstream_join_waiting_corrections",
            "Plans whose parked events wait for the corrections input to be read past them",
            registry=r,
        )
        self.lead_paused = Gauge(
            "learnstream_join_lead_paused_partitions",
            "Input partitions not fetched while the plans or corrections partition of their "
            "number catches up on a backlog (streams/join/lead.py)",
            registry=r,
        )
        self.latency = Histogram(
            "learnstream_event_to_sample_seconds",
            "Event time to sample emitted",
            ["family"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.processing = Histogram(
            "learnstream_event_processing_seconds",
            "Time to process one input event",
            ["source"],
            buckets=_PROCESSING_BUCKETS,
            registry=r,
        )
        self.window_samples = Gauge(
            "learnstream_window_samples",
            "Samples in the current event-time window, over this worker's active partitions",
            ["family", "quality", "window"],
            registry=r,
        )
        self.late_events = _counter(
            r, "learnstream_late_events", "Samples older than the window expiry", "window"
        )
        self.consent_fence = Histogram(
            "learnstream_consent_fence_seconds",
            "Time a record's samples waited for this worker's consent view to catch up",
            buckets=_CONSENT_BUCKETS,
            registry=r,
        )
        self.consent_lag = Gauge(
            "learnstream_consent_lag_records",
            "Consent records this worker's view has not read yet (at the last end-offset answer)",
            registry=r,
        )
        self.consent_waiting = Gauge(
            "learnstream_consent_fence_waiting",
            "Records whose samples wait for this worker's consent view",
            registry=r,
        )
        self.consumer_lag = Gauge(
            "learnstream_consumer_lag",
            "Input records not yet committed (high watermark - committed offset)",
            ["topic", "partition"],
            registry=r,
        )
        self.loop_lag = Histogram(
            "learnstream_event_loop_lag_seconds",
            "How late a timer asking to wake every 100 ms woke (the loop was held that long)",
            buckets=_LOOP_LAG_BUCKETS,
            registry=r,
        )
        self.loop_lag_max = Gauge(
            "learnstream_event_loop_lag_max_seconds",
            "The longest event-loop lag since the worker started",
            registry=r,
        )
        self.expiry_index_built = Gauge(
            "learnstream_expiry_index_built",
            "1 once the sweeper's index of terminal plans is rebuilt from plan_state, else 0",
            registry=r,
        )
        self._lag_shown: set[tuple[str, str]] = set()
        self._children: dict[tuple[object, tuple[str, ...]], Any] = {}
        self._zero_known_series()

    def child(self, metric: Any, *values: str) -> Any:
        """Return ``metric.labels(*values)``, resolved once (the hot path calls it per event).

        Not for series that get removed (the consumer-lag gauge).
        """
        key = (metric, values)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*values)
        return found

    def _zero_known_series(self, entities: tuple[str, ...] = ()) -> None:
        """Create every known label set at 0, so the first increment shows in ``rate()``."""
        for family in FAMILIES:
            for quality in QUALITIES:
                self.samples.labels(family, quality)
            for reason in SKIP_REASONS:
                self.skipped.labels(family, reason)
        for reason in REASONS:
            self.dlq.labels(reason)
        for source in SOURCES:
            self.events.labels(source)
            self.processing.labels(source)
        for kind in PAIR_KINDS:
            self.pairs.labels(kind)
        for reason in NO_PAIR_REASONS:
            self.no_pair.labels(reason)
        for approved in ("true", "false"):
            self.pair_intents_expired.labels(approved)
        for kind in ("feedback", "experience", "adapt", "stats"):
            for result in ("ok", "error"):
                self.learn_requests.labels(kind, result)
        for reason in VIEW_PARTIAL_REASONS:
            self.learn_view_partial.labels(reason)
        for why in ("global", "project", "project_unknown"):
            self.opted_out.labels(why)
        for name in ID_FIELDS:
            self.non_uuid_ids.labels(name)
        for name in TIME_FIELDS:
            self.naive_timestamps.labels(name)
        for name in ("event_id", "timestamp"):
            self.filled_fields.labels(name)
        for family, use in CORE_USES:
            self.core_events.labels(family, use)
        for entity in entities:
            self.pii.labels(entity)

    def note_input(self, notes: InputNotes) -> None:
        """Count the fields one input record sent in a tolerated form (labels: field names)."""
        for metric, names in (
            (self.non_uuid_ids, notes.non_uuid_ids),
            (self.naive_timestamps, notes.naive_timestamps),
            (self.filled_fields, notes.filled),
        ):
            for name in names:
                self.child(metric, name).inc()
        for family, use in notes.core_events:
            self.child(self.core_events, family, use).inc()

    def track_entities(self, entities: tuple[str, ...]) -> None:
        """Create the PII counters of the configured entities at 0."""
        self._zero_known_series(entities)

    def track_windows(self, labels: tuple[str, ...]) -> None:
        """Create the late-event counters and window gauges of the configured windows at 0."""
        for label in labels:
            self.late_events.labels(label)
            self.show_window(label, {})

    def show_window(self, label: str, counts: Mapping[str, Mapping[str, int]]) -> None:
        """Set every family x quality gauge of window ``label`` (0 where ``counts`` has none)."""
        for family in FAMILIES:
            for quality in QUALITIES:
                value = counts.get(family, {}).get(quality, 0)
                self.child(self.window_samples, family, quality, label).set(value)

    def show_lags(self, lags: Mapping[tuple[str, int], int]) -> None:
        """Set the lag of each (topic, partition); drop the label sets no longer ours."""
        shown = {(topic, str(partition)) for topic, partition in lags}
        for labels in self._lag_shown - shown:
            self.consumer_lag.remove(*labels)
        for (topic, partition), lag in lags.items():
            self.consumer_lag.labels(topic, str(partition)).set(lag)
        self._lag_shown = shown
