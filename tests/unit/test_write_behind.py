"""The buffered tables and their flush (agents/write_behind.py), without Faust or a broker:
a key written k times between two flushes is one changelog record, reads see the writes
held, and offsets are released only past a flush of every writer."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

from learnstream.agents.faust_compat import processing
from learnstream.agents.write_behind import BufferedTable, WriteBehind
from learnstream.streams.offsets.progress import Progress


@dataclass(frozen=True)
class TP:
    topic: str
    partition: int


class Message:
    def __init__(self, partition: int) -> None:
        self.partition = partition


class Event:
    """What a flush needs of a record: its partition (weak-referenced as Faust does)."""

    def __init__(self, partition: int) -> None:
        self.message = Message(partition)


class Table(dict[Any, Any]):
    """A table that counts its changelog records (one per set, one per delete), with the
    partition of the record being processed when each was written."""

    def __init__(self) -> None:
        super().__init__()
        self.records: Counter[Any] = Counter()
        self.partitions: dict[Any, int] = {}

    def __setitem__(self, key: Any, value: Any) -> None:
        self._note(key)
        super().__setitem__(key, value)

    def pop(self, key: Any, default: Any = None) -> Any:
        if key in self:
            self._note(key)
        return super().pop(key, default)

    def _note(self, key: Any) -> None:
        from faust.streams import current_event

        event = current_event()
        assert event is not None, "a table write outside stream iteration"
        self.records[key] += 1
        self.partitions[key] = event.message.partition


def test_a_key_written_many_times_is_one_record_and_reads_see_the_last() -> None:
    table = Table()
    buffered = BufferedTable(table)  # type: ignore[arg-type]
    event = Event(3)
    with processing(event):  # type: ignore[arg-type]
        for n in range(5):
            buffered["plan"] = {"n": n}
            assert buffered.get("plan") == {"n": n}
        buffered["parked"] = b"entry"
        assert buffered.pop("parked") == b"entry"  # parked and completed in one interval
    assert table == {}
    assert "plan" in buffered
    assert "parked" not in buffered
    assert buffered.partitions() == {3}
    buffered.flush(3)
    assert table == {"plan": {"n": 4}}
    assert table.records == Counter({"plan": 1})  # nor a tombstone for a key it never held
    assert table.partitions == {"plan": 3}
    assert buffered.partitions() == set()


def test_a_delete_of_a_key_the_table_holds_is_one_tombstone_and_items_see_it() -> None:
    table = Table()
    with processing(Event(0)):  # type: ignore[arg-type]
        table.update(a=1, b=2)
    table.records.clear()
    buffered = BufferedTable(table)  # type: ignore[arg-type]
    with processing(Event(1)):  # type: ignore[arg-type]
        assert buffered.pop("a") == 1
        buffered["a"] = 10
        buffered.pop("a")
        buffered["c"] = 3
        buffered["b"] = 20
    assert dict(buffered.items()) == {"b": 20, "c": 3}
    assert buffered.get("a", "gone") == "gone"
    with pytest.raises(KeyError):
        buffered["a"]
    buffered.flush(1)
    assert table == {"b": 20, "c": 3}
    assert table.records == Counter({"a": 1, "b": 1, "c": 1})


def test_a_write_outside_a_record_is_refused_as_faust_refuses_it() -> None:
    buffered = BufferedTable(Table())  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="outside of agent/stream"):
        buffered["plan"] = 1


def test_forgotten_partitions_write_nothing() -> None:
    table = Table()
    buffered = BufferedTable(table)  # type: ignore[arg-type]
    with processing(Event(1)):  # type: ignore[arg-type]
        buffered["one"] = 1
    with processing(Event(2)):  # type: ignore[arg-type]
        buffered["two"] = 2
    buffered.forget({1})
    assert "one" not in buffered
    buffered.flush(1)
    buffered.flush(2)
    assert table == {"two": 2}


def _progress(offsets: dict[int, int]) -> tuple[Progress, dict[int, TP]]:
    """A progress that processed partition -> offset - 1 (its next offset is ``offset``)."""
    progress, tps = Progress(gated=False), {p: TP("plans", p) for p in offsets}
    for partition, offset in offsets.items():
        progress._next[tps[partition]] = offset
    return progress, tps


def test_commits_take_offsets_only_past_a_flush_of_every_writer() -> None:
    progress, tps = _progress({1: 10, 2: 20})
    now = [0.0]
    behind = WriteBehind(progress, 1.0, stopping=lambda: False, clock=lambda: now[0])
    first, second = BufferedTable(Table()), BufferedTable(Table())  # type: ignore[arg-type]
    behind.add(first)
    behind.add(second)
    assert progress.held  # commits take released offsets from now on
    with processing(Event(1)):  # type: ignore[arg-type]
        first["a"] = 1
        second["b"] = 2
    behind.after_record(Event(1))  # type: ignore[arg-type]
    assert progress.commit_offset(tps[1]) is None  # within the interval: nothing released
    now[0] = 1.0
    behind.after_record(Event(1))  # type: ignore[arg-type]
    assert first.table == {"a": 1}
    assert second.table == {"b": 2}
    assert progress.commit_offset(tps[1]) == 10
    assert progress.commit_offset(tps[2]) is None  # not flushed: not released
    progress.before_commit()  # a commit starts
    assert progress.commit_offset(tps[2]) == 20


def test_a_stopping_producer_flushes_and_releases_nothing() -> None:
    progress, tps = _progress({1: 10})
    stopping = [True]
    behind = WriteBehind(progress, 1.0, stopping=lambda: stopping[0])
    table = Table()
    buffered = BufferedTable(table)  # type: ignore[arg-type]
    behind.add(buffered)
    with processing(Event(1)):  # type: ignore[arg-type]
        buffered["a"] = 1
    progress.before_commit()
    assert table == {}
    assert progress.commit_offset(tps[1]) is None  # the next owner replays the record
    stopping[0] = False
    progress.before_commit()
    assert table == {"a": 1}
    assert progress.commit_offset(tps[1]) == 10
