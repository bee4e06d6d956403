"""Topic declarations (docs/architecture.md §3): names, partitions, configs.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import faust

from learnstream.streams.config.settings import PAIR_INTENTS_RETENTION, Settings, TopicSettings
from learnstream.streams.config.usererrors import UserError

__all__ = [
    "COMPACTED",
    "INPUTS",
    "INTERNAL",
    "MAX_MESSAGE_BYTES",
    "Topics",
    "check_brokers",
    "replica_config",
    "replicated",
    "samples_config",
    "topic_specs",
]

#: Inputs: joined on plan_id, MAP events on session_id, runs on their step or execution id,
#: core events (impact analyses) on plan_id like the deltas they complete; one partition count
#: (co-partitioning).
INPUTS = (
    "plans",
    "plan_approved",
    "plan_rejected",
    "delta_intents",
    "pipeline_stage",
    "map_events",
    "sa_events",
    "runtime_executions",
    "graph_updates",
    "core_events",
)
#: Outputs and side topics.
OUTPUTS = (
    "consent",
    "samples",
    "events",
    "dlq",
    "learn_requests",
    "learn_responses",
    "preference_pairs",
    "reward_samples",
    "experiences",
)
#: Internal topics (name after the prefix): the sweep ticks, and intent_resolution samples
#: re-keyed by intent_id so the pair matcher sees every plan of an intent on one partition.
INTERNAL = {
    "join_ticks": "learnstream.join_ticks",
    "pair_intents": "learnstream.pair_intents",
}
#: Topics where only the latest value per key matters. Samples are stored, not expired (seed
#: 000 §6 "SHALL persist"): compacted by sample_id, a replayed duplicate collapses on the broker.
COMPACTED = frozenset({"plans", "consent", "samples", "preference_pairs", "reward_samples"})
#: Largest record we accept on inputs and pass on to the DLQ (the decoder rejects anything
#: over 1 MiB as ``too_large``, and the DLQ must still hold those bytes unchanged).
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
#: Replicas of every topic unless set: survives one broker's loss with min.insync.replicas 2.
DEFAULT_REPLICATION = 3


def replicated(topics: TopicSettings, brokers: int) -> TopicSettings:
    """Return ``topics`` with its replication decided for a cluster of ``brokers``.

    Unset, the replication factor is min(3, brokers) and ``min.insync.replicas`` one less (at
    least 1). A minimum in sync above the replication factor is a setting no write could
    succeed with: a :class:`UserError` naming the variable. A replication factor above the
    broker count is refused only where a topic is to be created (:func:`check_brokers`):
    while a broker is down, the topics that exist are still written.
    """
    factor = topics.replication_factor or min(DEFAULT_REPLICATION, max(brokers, 1))
    in_sync = topics.min_insync_replicas or max(factor - 1, 1)
    if in_sync > factor:
        raise UserError(
            f"LEARNSTREAM_TOPICS__MIN_INSYNC_REPLICAS={in_sync} is above the replication "
            f"factor {factor}: no write could be acknowledged; set it to {factor} or less"
        )
    return topics.model_copy(update={"replication_factor": factor, "min_insync_replicas": in_sync})


def check_brokers(topics: TopicSettings, brokers: int) -> None:
    """Raise :class:`UserError` if topics with this replication cannot be created on a
    cluster of ``brokers`` (Kafka would refuse each with InvalidReplicationFactor)."""
    factor = topics.replication_factor or 1
    if factor > brokers:
        raise UserError(
            f"LEARNSTREAM_TOPICS__REPLICATION_FACTOR={factor} but the cluster has {brokers} "
            f"broker{'s' if brokers != 1 else ''} up: set it to {brokers} or less, or create "
            "the topics once every broker is up"
        )


def replica_config(topics: TopicSettings) -> dict[str, str]:
    """Return the ``min.insync.replicas`` config of replicated topics (none if undecided)."""
    if topics.min_insync_replicas is None:
        return {}
    return {"min.insync.replicas": str(topics.min_insync_replicas)}


def samples_config(topics: TopicSettings) -> dict[str, str]:
    """Return the samples topic's retention: kept forever by default, else compact + delete."""
    retention = topics.samples_retention_ms
    policy = "compact" if retention < 0 else "compact,delete"
    return {"cleanup.policy": policy, "retention.ms": str(retention)}


def topic_specs(topics: TopicSettings) -> list[tuple[str, int, dict[str, str]]]:
    """Return (name, partitions, config) for every topic learnstream uses."""
    specs = []
    for field in INPUTS + OUTPUTS + tuple(INTERNAL):
        config = {"cleanup.policy": "compact"} if field in COMPACTED else {}
        if field == "samples":
            config = samples_config(topics)
        if field == "pair_intents":  # the miner's intents restore from it (pairs.ttl)
            retention = int(PAIR_INTENTS_RETENTION.total_seconds() * 1000)
            config = {"cleanup.policy": "delete", "retention.ms": str(retention)}
        config.update(replica_config(topics))
        if field in INPUTS or field == "dlq":
            config["max.message.bytes"] = str(MAX_MESSAGE_BYTES)
        name = f"{topics.prefix}{INTERNAL[field]}" if field in INTERNAL else topics.name(field)
        specs.append((name, topics.partitions, config))
    return specs


@dataclass(frozen=True)
class Topics:
    """The faust topic objects the agents consume and produce."""

    plans: faust.TopicT
    decisions: faust.TopicT
    deltas: faust.TopicT
    stages: faust.TopicT
    map_events: faust.TopicT
    runs: faust.TopicT
    graph_updates: faust.TopicT
    core_events: faust.TopicT
    consent: faust.TopicT
    samples: faust.TopicT
    events: faust.TopicT
    dlq: faust.TopicT
    join_ticks: faust.TopicT
    preference_pairs: faust.TopicT
    pair_intents: faust.TopicT
    learn_requests: faust.TopicT
    learn_responses: faust.TopicT
    reward_samples: faust.TopicT
    experiences: faust.TopicT

    @classmethod
    def declare(cls, app: faust.App, settings: Settings) -> Topics:
        """Declare every topic on ``app`` with raw bytes keys and values."""
        t = settings.topics

        def topic(*names: str) -> faust.TopicT:
            return app.topic(
                *names, key_type=bytes, value_type=bytes, partitions=t.partitions, allow_empty=True
            )

        return cls(
            plans=topic(t.name("plans")),
            decisions=topic(t.name("plan_approved"), t.name("plan_rejected")),
            deltas=topic(t.name("delta_intents")),
            stages=topic(t.name("pipeline_stage")),
            map_events=topic(t.name("map_events")),
            runs=topic(t.name("sa_events"), t.name("runtime_executions")),
            graph_updates=topic(t.name("graph_updates")),
            core_events=topic(t.name("core_events")),
            consent=topic(t.name("consent")),
            samples=topic(t.name("samples")),
            events=topic(t.name("events")),
            dlq=topic(t.name("dlq")),
            join_ticks=topic(f"{t.prefix}{INTERNAL['join_ticks']}"),
            preference_pairs=topic(t.name("preference_pairs")),
            pair_intents=topic(f"{t.prefix}{INTERNAL['pair_intents']}"),
            learn_requests=topic(t.name("learn_requests")),
            learn_responses=topic(t.name("learn_responses")),
            reward_samples=topic(t.name("reward_samples")),
            experiences=topic(t.name("experiences")),
        )
