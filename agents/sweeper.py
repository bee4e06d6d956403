"""Timer + agent: dead-letter joins that waited past ``join.grace``; expire terminal plans.

Faust only lets a table change inside stream iteration (the changelog partition is the
current record's), so the leader's timer sends one tick per partition to an internal,
co-partitioned topic and the worker that owns partition p sweeps the keys of p.
"""

from __future__ import annotations

from typing import Any

from faust.types import StreamT

from agents.runtime import Runtime, now
from streams.dlq import DlqRecord
from streams.join import split_due
from streams.plan_state import expired
from streams.settings import format_duration

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the sweep timer and the tick agent."""
    settings, tables, metrics = runtime.settings, runtime.tables, runtime.metrics
    partitions = settings.topics.partitions
    grace = format_duration(settings.join.grace)

    @runtime.app.timer(settings.join.sweep_interval, on_leader=True, name="learnstream.tick")  # type: ignore[untyped-decorator]
    async def tick() -> None:
        # Ticks are triggers, not data: send them outside any transaction. Under
        # exactly_once, Faust would put a timer's send into a partition's open transaction
        # from outside stream processing, which stalls that partition's commits.
        name = runtime.topics.join_ticks.get_topic_name()
        for partition in range(partitions):
            await runtime.app.producer.send(name, b"tick", b"", partition, None, None)

    async def sweep(partition: int) -> None:
        moment = now()
        for plan_id, entries in list(tables.pending.items()):
            if not entries or _changelog_partition(entries) != partition:
                continue
            due, keep = split_due(entries, moment, settings.join.grace)
            for entry in due:
                record = DlqRecord(
                    "plan_state_missing",
                    f"no plan state arrived within LEARNSTREAM_JOIN__GRACE ({grace})",
                    entry.topic,
                    entry.partition,
                    entry.offset,
                )
                await runtime.dead_letter(
                    record, (entry.key or "").encode() or None, entry.raw.encode()
                )
                metrics.join_misses.inc()
            if due and keep:
                tables.pending[plan_id] = keep
            elif due:
                del tables.pending[plan_id]
        _expire_plans(runtime, partition)
        metrics.pending.set(sum(len(v or ()) for v in tables.pending.values()))

    @runtime.app.agent(runtime.topics.join_ticks, name="learnstream.sweeper")
    async def ticks(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            msg = event.message
            async with runtime.progress.record(msg.tp, msg.offset) as fresh:
                if fresh:
                    await sweep(msg.partition)

    def on_revoked(*_args: Any, **_kwargs: Any) -> None:
        # Another worker may change the partitions we get back: rebuild on the next tick.
        runtime.expiry.invalidate()

    runtime.app.on_partitions_revoked.connect(on_revoked)


def _changelog_partition(entries: list[dict[str, Any]]) -> int:
    """Return the partition the pending entry's changelog records went to.

    Faust writes a table change to the partition of the record being processed: the
    last parked record's. Hashing the table key would not do: it may be a stand-in for
    the runtime's id (``plan_key``), and a sweep on the wrong partition would never
    come, or would write its tombstone where recovery does not look.
    """
    return int(entries[-1]["partition"])


def _expire_plans(runtime: Runtime, partition: int) -> None:
    """Delete terminal plans of ``partition`` older than ``join.plan_ttl`` (tombstones)."""
    index, ttl, moment = runtime.expiry, runtime.settings.join.plan_ttl, now()
    if not index.built:  # first tick, or after a rebalance: one scan of the table
        index.rebuild(runtime.tables.plan_state.items())
    for plan_id in list(index.due(partition, moment, ttl)):
        state = runtime.plan_state(plan_id)  # the table decides: it may have been re-opened
        if state is not None and expired(state, moment, ttl):
            runtime.forget_plan(plan_id)
