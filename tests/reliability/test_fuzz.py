"""Fuzzed input: hypothesis-generated bad records among valid events.

Sizes: ``LEARNSTREAM_FUZZ_RECORDS`` bad records (2,500 by default, CI; ``make test-soak``
runs 10,000) among ``LEARNSTREAM_FUZZ_VALID_EVENTS`` valid events (1,000; soak 3,000).

The worker must never crash or stall, every bad record must land in the DLQ once with a
reason of its kind, and every valid event must still be sampled.
"""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.sim.simulate import Simulator
from learnstream.streams.sim.workload import Record, build_workload
from tests.reliability.harness import publish_paced, wait_delivered

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(900)]
BAD = int(os.environ.get("LEARNSTREAM_FUZZ_RECORDS", "2500"))
VALID = int(os.environ.get("LEARNSTREAM_FUZZ_VALID_EVENTS", "1000"))
SCHEMA = {"schema_violation"}
#: "{" + text is usually broken JSON; when it parses, it is a bad object of its own.
_BROKEN_JSON = {"invalid_json", "schema_violation", "unknown_event_type"}
_SIM, _WHEN = Simulator(seed=99), datetime(2026, 1, 1, tzinfo=UTC)
_SNAP = _SIM.plan(_WHEN)
#: (topic field, a valid event) to mutate.
_TEMPLATES: list[tuple[str, dict[str, Any]]] = [
    ("plans", _SNAP),
    ("plan_approved", _SIM.decision(_SNAP, True, _WHEN)),
    ("plan_rejected", _SIM.decision(_SNAP, False, _WHEN)),
    ("delta_intents", _SIM.delta(_SNAP, _WHEN)),
    ("pipeline_stage", _SIM.stage(_SNAP, "completed", _WHEN)),
]
_INT = st.integers(min_value=-(2**63), max_value=2**63 - 1)  # what JSON encoders carry
_JSON = st.recursive(
    st.none() | st.booleans() | _INT | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def _paths(obj: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Return the paths of every dict key (to mutate one)."""
    if not isinstance(obj, dict):
        return []
    return [p for k, v in obj.items() for p in [(*prefix, k), *_paths(v, (*prefix, k))]]


_REQUIRED = {
    "event_id",
    "event_family",
    "event_type",
    "timestamp",
    "payload",
    "plan",
    "plan_id",
    "confirm_id",
    "decided_by_role",
    "delta_id",
    "intent_id",
    "change_summary",
    "stage",
    "status",
    "meta",
    "context_id",
    "title",
    "objective",
    "steps",
    "protocolVersion",
}


def _set(obj: dict[str, Any], path: tuple[str, ...], value: Any, delete: bool) -> dict[str, Any]:
    out = orjson.loads(orjson.dumps(obj))
    node = out
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


#: Fields a runtime may leave out: the worker takes them from the Kafka record.
_FILLED = {"event_id", "timestamp"}
#: Topics whose events may name no plan (issue 28): a decision on another target, a stage of
#: a pipeline that is no plan's. Their ``payload.plan_id`` may be missing or null.
_PLANLESS = {"plan_approved", "plan_rejected", "pipeline_stage"}
#: Strings no id may be: empty, with whitespace, longer than 256 characters.
_BAD_IDS = st.just("") | st.text(max_size=8).map(lambda t: f"{t} {t}") | st.just("i" * 257)


@st.composite
def _schema_breakers(draw: st.DrawFn) -> tuple[str, bytes, set[str]]:
    """Valid events with one required field removed, retyped, or given an impossible id.

    Ids may be any 1-256 character string without whitespace, and a missing event id or
    time is taken from the record (issue 16); a decision or a stage may name no plan (issue
    28): those mutations are valid input now.
    """
    topic, event = draw(st.sampled_from(_TEMPLATES))
    path = draw(st.sampled_from([p for p in _paths(event) if p[-1] in _REQUIRED]))
    optional = path[-1] in _FILLED or (topic in _PLANLESS and path == ("payload", "plan_id"))
    hows = ["retype", "bad_id"] if optional else ["delete", "retype", "bad_id"]
    how = draw(st.sampled_from(hows))
    if how == "bad_id" and path[-1].endswith("_id") and path[-1] != "intent_id":
        value: Any = draw(_BAD_IDS)
    elif optional:  # null counts as missing: filled, or no plan named
        value = draw(_INT | st.lists(_INT, min_size=1, max_size=2))
    else:
        value = draw(_INT | st.lists(_INT, min_size=1, max_size=2) | st.none())
    if path[-1] in {"event_family", "event_type"}:
        reasons = {"unknown_event_type", "schema_violation"}
        return topic, orjson.dumps(_set(event, path, value, how == "delete")), reasons
    return topic, orjson.dumps(_set(event, path, value, how == "delete")), SCHEMA


_TOPICS = st.sampled_from([t for t, _ in _TEMPLATES])
BAD_RECORDS = st.one_of(
    _schema_breakers(),
    st.tuples(
        _TOPICS, st.binary(min_size=1).map(lambda b: b"\xff\xfe" + b), st.just({"undecodable"})
    ),
    st.tuples(
        _TOPICS, st.text(min_size=1).map(lambda t: ("{" + t).encode()), st.just(_BROKEN_JSON)
    ),
    st.tuples(
        _TOPICS, _JSON.filter(lambda v: not isinstance(v, dict)).map(orjson.dumps), st.just(SCHEMA)
    ),
    st.tuples(
        st.just("plan_approved"), st.just(orjson.dumps(_TEMPLATES[2][1])), st.just({"wrong_topic"})
    ),
    st.tuples(
        st.just("pipeline_stage"), st.just(orjson.dumps(_TEMPLATES[1][1])), st.just({"wrong_topic"})
    ),
)


def _generate(count: int) -> list[tuple[str, bytes, set[str]]]:
    """Return ``count`` bad records drawn by hypothesis (generation only, no shrinking)."""
    drawn: list[tuple[str, bytes, set[str]]] = []

    @settings(
        max_examples=count,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(BAD_RECORDS)
    def draw(record: tuple[str, bytes, set[str]]) -> None:
        drawn.append(record)

    while len(drawn) < count:
        draw()
    return drawn[:count]


def _giants() -> list[tuple[str, bytes, set[str]]]:
    """Return the hand-made extremes: 2 MB strings and 500-deep nesting."""
    big = orjson.dumps(
        {
            **_TEMPLATES[3][1],
            "payload": {**_TEMPLATES[3][1]["payload"], "change_summary": "x" * 2_000_000},
        }
    )
    deep = orjson.dumps(_TEMPLATES[3][1]).replace(
        b'{"steps_added":1}', b'{"k":' * 500 + b"1" + b"}" * 500
    )
    return [
        ("delta_intents", big, {"too_large"}),
        ("plans", b'{"a":"' + b"y" * 2_000_000 + b'"}', {"too_large"}),
        ("delta_intents", deep, SCHEMA),
    ]


async def test_fuzzed_bad_records_all_dead_lettered(broker, start_worker, namespace):
    topics = TopicSettings(prefix=namespace)
    workload = build_workload(VALID, seed=31)
    bad = _generate(BAD) + _giants()
    expected_reason = {f"bad-{i}".encode(): reasons for i, (_, _, reasons) in enumerate(bad)}
    records = list(workload.records)
    rng = random.Random(3)
    for i, (topic, value, _) in enumerate(bad):
        records.insert(rng.randrange(len(records) + 1), Record(topic, f"bad-{i}".encode(), value))
    worker = start_worker(LEARNSTREAM_JOIN__GRACE="1h", LEARNSTREAM_SAMPLE_FORMAT="json")
    await publish_paced(broker.bootstrap, topics, records, 1500.0, broker.embedded)
    verdict, _, _ = await wait_delivered(broker.bootstrap, topics, workload.expected, 300)
    assert verdict.delivered, verdict.report()
    got = await _dead_letters(broker.bootstrap, topics, len(bad))
    assert sorted(got) == sorted(expected_reason), "each bad record dead-lettered once"
    wrong = {k: (v, expected_reason[k]) for k, v in got.items() if v not in expected_reason[k]}
    assert wrong == {}
    assert worker.proc is not None
    assert worker.proc.poll() is None, "the worker crashed"
    print(
        f"\nfuzz on {broker.kind}: {len(bad)} bad + {len(workload.records)} valid records: "
        f"{len(got)} dead letters, {verdict.report()}"
    )


async def _dead_letters(bootstrap: str, topics: TopicSettings, count: int) -> dict[bytes, str]:
    from learnstream.streams.io.reader import read_until

    dead = await read_until(bootstrap, topics.name("dlq"), count, max_wait=300)
    out: dict[bytes, str] = {}
    for record in dead:
        assert record.key not in out, f"{record.key!r} dead-lettered twice"
        out[record.key] = dict(record.headers)["reason"].decode()
    return out
