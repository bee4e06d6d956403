"""Timer + agent: complete or dead-letter joins that waited ``join.grace``; expire plans.

Faust only lets a table change inside stream iteration (the changelog partition is the
current record's), so the leader's timer sends one tick per partition to an internal,
co-partitioned topic and the worker that owns partition p sweeps the keys of p. A tick runs
under the same guard as every record: a sweep that raises is dead-lettered and logged, and
the next tick tries again, so no tick is read again forever.
"""

from __future__ import annotations

from typing import Any

from faust.types import EventT, StreamT

from learnstream.agents.runtime import Runtime
from learnstream.streams.state.plan import expired

__all__ = ["SCAN_BUDGET_S", "register"]

#: Seconds of each tick spent rebuilding the expiry index from the table (in slices that
#: hand the loop back), until it is built: 10M plans take about 10 minutes of ticks.
SCAN_BUDGET_S = 0.25


def register(runtime: Runtime) -> None:
    """Register the sweep timer and the tick agent."""
    settings = runtime.settings
    partitions = settings.topics.partitions

    @runtime.app.timer(settings.join.sweep_interval, on_leader=True, name="learnstream.tick")  # type: ignore[untyped-decorator]
    async def tick() -> None:
        # Ticks are triggers, not data: send them outside any transaction. Under
        # exactly_once, Faust would put a timer's send into a partition's open transaction
        # from outside stream processing, which stalls that partition's commits.
        name = runtime.topics.join_ticks.get_topic_name()
        for partition in range(partitions):
            await runtime.app.producer.send(name, b"tick", b"", partition, None, None)

    async def sweep(event: EventT[bytes]) -> None:
        msg = event.message
        source = (msg.topic, msg.partition)
        await runtime.join.sweep(msg.partition, source)
        await _expire_plans(runtime, source)

    @runtime.app.agent(runtime.topics.join_ticks, name="learnstream.sweeper")
    async def ticks(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("ticks", event, sweep)

    def on_revoked(*_args: Any, **_kwargs: Any) -> None:
        # Another worker may change the partitions we get back: rebuild on the next tick.
        runtime.plans.expiry.invalidate()
        runtime.metrics.expiry_index_built.set(0)

    runtime.app.on_partitions_revoked.connect(on_revoked)


async def _expire_plans(runtime: Runtime, source: tuple[str, int]) -> None:
    """Delete terminal plans of the tick's partition older than ``join.plan_ttl``
    (tombstones), through the join: what still waits under such a plan ends with it
    (agents/joins/plan_join.py ``Join.delete``).

    After a start or a rebalance the index is rebuilt from the table a slice at a time:
    each tick scans for at most ``SCAN_BUDGET_S``, and expires what is known meanwhile.
    """
    index, ttl = runtime.plans.expiry, runtime.settings.join.plan_ttl
    if not index.built:
        if not index.scanning:
            # each key under the partition that holds it; deletes below may run meanwhile
            index.start(runtime.plans.stored_items())
        await index.scan(SCAN_BUDGET_S)
        runtime.metrics.expiry_index_built.set(1 if index.built else 0)
    moment, partition = runtime.clock(), source[1]
    due = list(index.due(partition, moment, ttl))
    for done, plan_id in enumerate(due):
        try:
            state = runtime.plans.get(plan_id)  # the table decides: it may have been re-opened
            if state is not None and expired(state, moment, ttl):
                await runtime.join.delete(plan_id, source)
        except BaseException:
            index.retry(partition, due[done:])  # popped: due again on the next tick
            raise
