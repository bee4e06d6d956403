"""Which keys ``learnstream erase`` tombstones: pure selection over records as read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
import pytest

from learnstream.streams.a2e.models import Feedback
from learnstream.streams.a2e.samples import build_dialog_response
from learnstream.streams.encoding.codecs import codec_for
from learnstream.streams.privacy.erasure import (
    Scope,
    Selection,
    choose_pairs,
    choose_rewards,
    choose_samples,
)
from learnstream.streams.samples.ids import canonical_id, sample_id

T0 = datetime(2026, 3, 1, tzinfo=UTC)
MS = int(T0.timestamp() * 1000)
HOUR = 3_600_000


@dataclass(frozen=True)
class Rec:
    partition: int
    key: bytes | None
    value: bytes | None
    timestamp: int = MS


def sample(n: int, project: str | None, fmt: str = "json") -> tuple[bytes, bytes]:
    """Return (key, value) of a sample of ``project`` as the worker writes it."""
    turn = {"prompt": "private words", "response": "r"}
    feedback = Feedback(
        correlation_id=f"turn-{n}", polarity="POSITIVE", score=1, rated_turn=turn,
        project_id=project,
    )  # fmt: skip
    built = build_dialog_response(feedback, T0)
    return built.sample_id.encode(), codec_for(fmt).encode(built.to_dict())  # type: ignore[arg-type]


def keys(selection: Selection) -> list[bytes]:
    return [key for _, key in selection.to_tombstone]


@pytest.mark.parametrize("fmt", ["avro", "json"])
def test_samples_of_the_project_are_chosen_in_every_format(fmt: str) -> None:
    mine, other, none = sample(1, "proj-a", fmt), sample(2, "proj-b", fmt), sample(3, None, fmt)
    records = [Rec(0, *mine), Rec(1, *other), Rec(0, *none)]
    chosen = Selection(choose_samples(Scope.of("proj-a"))).take_all(records)
    assert chosen.to_tombstone == [(0, mine[0])]
    assert (chosen.already_erased, chosen.unreadable) == (0, 0)


@pytest.mark.parametrize(
    "given", ["proj-a", canonical_id("proj-a"), canonical_id("proj-a").upper()]
)
def test_the_project_matches_as_the_worker_canonicalises_it(given: str) -> None:
    key, value = sample(1, "proj-a")
    assert keys(Selection(choose_samples(Scope.of(given))).take_all([Rec(0, key, value)])) == [key]


def test_a_uuid_project_matches_in_any_case() -> None:
    project = "3F2A9C1E-7B4D-4E8A-9C2B-1D5E6F7A8B9C"
    key, value = sample(1, project.lower())
    assert keys(Selection(choose_samples(Scope.of(project))).take_all([Rec(0, key, value)])) == [
        key
    ]


def test_the_range_is_on_the_record_timestamp_since_inclusive_until_exclusive() -> None:
    scope = Scope.of("proj-a", T0, datetime(2026, 3, 1, 2, tzinfo=UTC))
    at = {n: sample(n, "proj-a") for n in range(4)}
    times = {0: MS - 1, 1: MS, 2: MS + 2 * HOUR - 1, 3: MS + 2 * HOUR}
    records = [Rec(0, *at[n], timestamp=times[n]) for n in range(4)]
    assert keys(Selection(choose_samples(scope)).take_all(records)) == [at[1][0], at[2][0]]


def test_a_rerun_finds_nothing_new_and_counts_what_is_erased() -> None:
    key, value = sample(1, "proj-a")
    records = [Rec(0, key, value), Rec(0, key, value), Rec(0, key, None)]  # replayed, erased
    chosen = Selection(choose_samples(Scope.of("proj-a"))).take_all(records)
    assert (chosen.to_tombstone, chosen.already_erased) == ([], 1)
    assert chosen.chosen_keys() == {key.decode()}  # its pairs and rewards still follow


def test_a_record_after_its_tombstone_is_chosen_again() -> None:
    key, value = sample(1, "proj-a")
    records = [Rec(0, key, value), Rec(0, key, None), Rec(0, key, value)]
    chosen = Selection(choose_samples(Scope.of("proj-a"))).take_all(records)
    assert (keys(chosen), chosen.already_erased) == ([key], 0)


def test_the_latest_value_of_a_key_decides() -> None:
    key, mine = sample(1, "proj-a")
    _, theirs = sample(1, "proj-b")
    scope = Scope.of("proj-a")
    assert (
        keys(Selection(choose_samples(scope)).take_all([Rec(0, key, mine), Rec(0, key, theirs)]))
        == []
    )
    assert keys(
        Selection(choose_samples(scope)).take_all([Rec(0, key, theirs), Rec(0, key, mine)])
    ) == [key]


def test_keys_are_placed_per_partition() -> None:
    key, value = sample(1, "proj-a")
    records = [Rec(0, key, value), Rec(3, key, value), Rec(3, key, None)]
    chosen = Selection(choose_samples(Scope.of("proj-a"))).take_all(records)
    assert chosen.to_tombstone == [(0, key)]


def test_unreadable_and_unkeyed_records_are_counted_never_chosen() -> None:
    key, value = sample(1, "proj-a")
    records = [
        Rec(0, b"k1", b"\xc3\x01not avro"),
        Rec(0, b"k2", b"{not json"),
        Rec(0, b"k3", b"[1, 2]"),
        Rec(0, None, value),
        Rec(0, key, value),
        Rec(0, key, b"{oops"),  # the latest value of a chosen key is unreadable: left alone
    ]
    chosen = Selection(choose_samples(Scope.of("proj-a"))).take_all(records)
    assert (chosen.to_tombstone, chosen.unreadable) == ([], 4)


def _pair(n: int, project: str | None, chosen: str, rejected: str) -> Rec:
    pid = sample_id("p", str(n))
    pair = {
        "pair_id": pid, "project_id": project and canonical_id(project),
        "chosen_sample_id": chosen, "rejected_sample_id": rejected, "prompt": {"p": "words"},
    }  # fmt: skip
    return Rec(0, pid.encode(), orjson.dumps(pair))


def test_pairs_of_the_project_or_of_its_samples_are_chosen() -> None:
    erased = sample_id("s", "erased")
    records = [
        _pair(1, "proj-a", "s1", "s2"),  # the project's
        _pair(2, None, erased, "s3"),  # made of an erased sample
        _pair(3, "proj-b", "s4", erased),
        _pair(4, "proj-b", "s5", "s6"),  # another project's
        Rec(0, b"bad", b"nope"),
    ]
    chosen = Selection(choose_pairs(Scope.of("proj-a"), {erased})).take_all(records)
    assert keys(chosen) == [records[0].key, records[1].key, records[2].key]
    assert chosen.unreadable == 1


def test_pairs_outside_the_range_go_only_with_their_samples() -> None:
    erased = sample_id("s", "erased")
    late = Scope.of("proj-a", since=datetime(2026, 4, 1, tzinfo=UTC))
    records = [_pair(1, "proj-a", "s1", "s2"), _pair(2, "proj-a", erased, "s3")]
    assert keys(Selection(choose_pairs(late, {erased})).take_all(records)) == [records[1].key]


def test_reward_samples_follow_their_samples() -> None:
    erased = sample_id("s", "erased")
    reward = orjson.dumps({"sample_id": erased, "prompt": "p", "response": "r", "reward": 1.0})
    records = [Rec(1, erased.encode(), reward), Rec(2, b"other", reward), Rec(1, b"gone", None)]
    chosen = Selection(choose_rewards({erased})).take_all(records)
    assert chosen.to_tombstone == [(1, erased.encode())]
