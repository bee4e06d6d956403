"""Which input partitions wait while the plans and the corrections catch up: the join's
lead order.

A decision or an execute joins its plan's state as of the corrections made before it
(streams/join/watermark.py). Read before its plan, or before the corrections input is read
past it, it parks: in memory for ``join.hold_in_memory``, then in the ``pending`` table, and
a tombstone when it completes. In steady state every input is read to its end and nothing
waits long. A backlog is another matter: a worker started on topics written while it was
down, or restarted after a crash, is handed every input at once, each topic to its own agent
as fast as it is fetched, and the decisions run far ahead of the plans and corrections they
wait for. Pre-loaded with 20,000 events, two of every three decisions and executes parked
longer than the hold: 0.64 changelog records per event, the largest table
(benchmarks/RESULTS.md, 29 Nov).

Kafka Streams picks a task's next record by timestamp across its inputs. Here the order is
known without reading timestamps: a plan before what joins it, the corrections before what
counts them. So while partition p of a leading input has more than ``backlog`` records
unread, partition p of every input ranked after it waits (its fetching paused; inputs are
co-partitioned): the plans lead the corrections, and both lead the rest. A lead not fetched
yet (its backlog unknown) holds back as one behind: after an assignment the followers wait
for the leads' first fetch, or they would fetch a batch each before the first check. A
partition waits at most ``longest``; then it is read whatever its leads' backlog, until that
backlog has once dropped to ``backlog`` or below, so a lead that never catches up starves
nothing.

Pure: the worker (agents/joins/lead.py) asks ``hold`` which partitions Faust may resume
after an assignment, and ``step`` on every tick which to pause and resume.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["LAST", "LeadOrder", "Partition", "lead_ranks"]

#: A topic partition: (topic, partition number).
Partition = tuple[str, int]
#: The rank of the inputs that lead none.
LAST = 2


def lead_ranks(plans: str, corrections: str, others: Iterable[str]) -> dict[str, int]:
    """Return each input's rank: the plans 0, the corrections 1, every other input ``LAST``."""
    ranks = {topic: LAST for topic in others}
    ranks.update({plans: 0, corrections: 1})
    return ranks


@dataclass
class LeadOrder:
    """The inputs' ranks, and which of their partitions wait for a lead, since when."""

    #: Each input topic's rank: a partition waits for those of lower rank.
    ranks: Mapping[str, int]
    #: Unread records a lead partition may have before the partitions after it wait.
    backlog: int
    #: Seconds a partition waits at most.
    longest: float
    #: The partitions waiting, and since when (the caller's clock, in seconds).
    since: dict[Partition, float] = field(default_factory=dict)
    #: Partitions that waited ``longest``: not paused again until their leads catch up.
    released: set[Partition] = field(default_factory=set)

    @property
    def on(self) -> bool:
        """Tell whether anything may wait (a backlog of 0 turns the order off)."""
        return self.backlog > 0

    def leads(self, topic: str) -> bool:
        """Tell whether ``topic`` is an input others wait for."""
        return self.ranks.get(topic, LAST) < LAST

    def paused(self) -> frozenset[Partition]:
        """Return the partitions waiting now."""
        return frozenset(self.since)

    def step(
        self, now: float, assigned: Iterable[Partition], unread: Mapping[Partition, int | None]
    ) -> tuple[set[Partition], set[Partition]]:
        """Return the partitions to pause and those to resume, of the ``assigned`` inputs,
        given how many records of each lead partition are unread (None: not known yet)."""
        mine = {tp for tp in assigned if self.ranks.get(tp[0], 0) > 0}  # inputs that wait
        for gone in [tp for tp in self.since if tp not in mine]:
            del self.since[gone]  # not ours any more: nothing to resume
        self.released &= mine
        pause: set[Partition] = set()
        resume: set[Partition] = set()
        for tp in mine:
            behind = self._behind(tp, unread)
            if not behind:
                self.released.discard(tp)
                if self.since.pop(tp, None) is not None:
                    resume.add(tp)
            elif tp in self.since and now - self.since[tp] >= self.longest:
                del self.since[tp]
                self.released.add(tp)
                resume.add(tp)
            elif tp not in self.since and tp not in self.released:
                self.since[tp] = now
                pause.add(tp)
        return pause, resume

    def hold(
        self, now: float, partitions: Iterable[Partition], unread: Mapping[Partition, int | None]
    ) -> set[Partition]:
        """Return which of ``partitions``, about to be resumed (Faust's, after a table
        recovery), must stay paused: those waiting already, and those whose leads are behind
        or not known yet, which wait from ``now``."""
        held = set()
        for tp in partitions:
            if self.ranks.get(tp[0], 0) == 0:
                continue  # a lead, or not an input
            if tp not in self.since and tp not in self.released and self._behind(tp, unread):
                self.since[tp] = now
            if tp in self.since:
                held.add(tp)
        return held

    def release(self) -> frozenset[Partition]:
        """Stop every wait until the leads catch up, as if each had waited ``longest``;
        return the partitions that were waiting."""
        was = self.paused()
        self.released |= was
        self.since.clear()
        return was

    def _behind(self, tp: Partition, unread: Mapping[Partition, int | None]) -> bool:
        """Tell whether a lead of ``tp`` (a lower-ranked input, same partition number) has
        more than ``backlog`` records unread, or an unknown number."""
        topic, partition = tp
        rank = self.ranks[topic]
        return any(
            count is None or count > self.backlog
            for (lead, number), count in unread.items()
            if number == partition and self.ranks.get(lead, rank) < rank
        )
