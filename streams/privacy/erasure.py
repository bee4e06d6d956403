"""Which records ``learnstream erase`` tombstones: a project's samples, pairs, reward samples.

Pure: records in (as read, in offset order per partition), keys out. A key is tombstoned when
its latest record is live (not a tombstone) and chosen; one whose latest record already is a
tombstone is counted as already erased, so a re-run finds nothing new. What is chosen:

- a **sample** (Avro or JSON, any layout ``decode_any`` reads) whose ``meta.project_id`` is
  the project, compared canonically (:func:`learnstream.streams.samples.ids.canonical_id`: the
  runtime's raw id and its UUID stand-in, any case, are one project), with a record timestamp in
  the range;
- a **preference pair** of the project in the range, or built from a chosen sample;
- a **reward sample** of a chosen sample (keyed by the sample's id).

Erased samples of earlier runs still on the topic (before compaction) count as chosen for
the pairs and reward samples, so a run interrupted between topics completes on a re-run.
A record that cannot be read is never chosen, only counted: its project is unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import orjson

from learnstream.streams.encoding.codecs import decode_any
from learnstream.streams.samples.ids import canonical_id

__all__ = ["Scope", "Seen", "Selection", "choose_pairs", "choose_rewards", "choose_samples"]

#: A record's place on its topic: (partition, key). Tombstones go to the same partition.
Place = tuple[int, bytes]


class Seen(Protocol):
    """The parts of a consumed record the selection reads (aiokafka's ``ConsumerRecord``)."""

    @property
    def partition(self) -> int: ...

    @property
    def key(self) -> bytes | None: ...

    @property
    def value(self) -> bytes | None: ...

    @property
    def timestamp(self) -> int: ...


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


@dataclass(frozen=True)
class Scope:
    """One project (canonical id) and a record-time range ``since <= t < until`` (open ends)."""

    project: str
    since_ms: int | None = None
    until_ms: int | None = None

    @classmethod
    def of(
        cls, project: str, since: datetime | None = None, until: datetime | None = None
    ) -> Scope:
        """Return the scope of ``project`` as a user or runtime writes it."""
        return cls(canonical_id(project), _ms(since), _ms(until))

    def in_range(self, timestamp_ms: int) -> bool:
        """Tell whether a record timestamp (ms since the epoch) is in the range."""
        return (self.since_ms is None or timestamp_ms >= self.since_ms) and (
            self.until_ms is None or timestamp_ms < self.until_ms
        )

    def owns(self, project_id: Any) -> bool:
        """Tell whether a record's project id (any spelling) is this project."""
        return (
            isinstance(project_id, str)
            and bool(project_id)
            and (canonical_id(project_id) == self.project)
        )


#: Decide one live record; raises ValueError when it cannot be read.
Choose = Callable[[Seen], bool]


@dataclass
class Selection:
    """Follow one topic's records in offset order; keep what to tombstone."""

    choose: Choose
    unreadable: int = 0
    _live: dict[Place, None] = field(default_factory=dict)  # chosen, latest record live
    _erased: dict[Place, None] = field(default_factory=dict)  # chosen, then a tombstone

    def take(self, record: Seen) -> None:
        """Take the next record of its partition."""
        if record.key is None:  # no key, no tombstone can reach it (never written by us)
            return
        place = (record.partition, record.key)
        if record.value is None:
            if place in self._live:
                del self._live[place]
                self._erased[place] = None
            return
        self._live.pop(place, None)  # a newer value decides now
        try:
            chosen = self.choose(record)
        except ValueError:
            self.unreadable += 1
            return
        if chosen:
            self._live[place] = None
            self._erased.pop(place, None)

    def take_all(self, records: Iterable[Seen]) -> Selection:
        """Take every record; return self."""
        for record in records:
            self.take(record)
        return self

    @property
    def to_tombstone(self) -> list[Place]:
        """Return the places whose latest record is live and chosen, in the order read."""
        return list(self._live)

    @property
    def already_erased(self) -> int:
        """Return how many chosen keys already end in a tombstone."""
        return len(self._erased)

    def chosen_keys(self) -> set[str]:
        """Return every chosen key (to tombstone or already erased), as text."""
        return {key.decode("utf-8", "replace") for _, key in [*self._live, *self._erased]}


def choose_samples(scope: Scope) -> Choose:
    """Choose samples of the scope's project written in its range."""

    def choose(record: Seen) -> bool:
        if not scope.in_range(record.timestamp):
            return False
        meta = decode_any(record.value or b"").get("meta")
        return isinstance(meta, dict) and scope.owns(meta.get("project_id"))

    return choose


def _json_object(value: bytes | None) -> dict[str, Any]:
    try:
        found = orjson.loads(value or b"")
    except orjson.JSONDecodeError as exc:
        raise ValueError("not JSON") from exc
    if not isinstance(found, dict):
        raise ValueError("not a JSON object")
    return found


def choose_pairs(scope: Scope, samples: set[str]) -> Choose:
    """Choose pairs built from one of ``samples``, or of the project and in the range."""

    def choose(record: Seen) -> bool:
        pair = _json_object(record.value)
        if {pair.get("chosen_sample_id"), pair.get("rejected_sample_id")} & samples:
            return True
        return scope.in_range(record.timestamp) and scope.owns(pair.get("project_id"))

    return choose


def choose_rewards(samples: set[str]) -> Choose:
    """Choose the reward samples of ``samples`` (a reward sample is keyed by its sample's id)."""

    def choose(record: Seen) -> bool:
        return (record.key or b"").decode("utf-8", "replace") in samples

    return choose
