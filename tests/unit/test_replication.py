"""Replication of the topics learnstream creates: decided for the cluster, reported when not."""

from __future__ import annotations

import faust
import pytest
from aiokafka.errors import NodeNotReadyError, TopicAuthorizationFailedError

from learnstream.streams.config.settings import Settings, TopicSettings
from learnstream.streams.config.usererrors import UserError
from learnstream.streams.io import admin
from learnstream.streams.io.admin import _status
from learnstream.streams.io.tables import Tables
from learnstream.streams.io.topics import check_brokers, replicated, topic_specs


@pytest.mark.parametrize(
    ("brokers", "factor", "in_sync"), [(1, 1, 1), (2, 2, 1), (3, 3, 2), (5, 3, 2)]
)
def test_unset_replication_is_three_or_every_broker_and_one_less_in_sync(brokers, factor, in_sync):
    topics = replicated(TopicSettings(), brokers)
    assert (topics.replication_factor, topics.min_insync_replicas) == (factor, in_sync)


def test_set_replication_is_kept_and_its_minimum_follows_it():
    topics = replicated(TopicSettings(replication_factor=2), 5)
    assert (topics.replication_factor, topics.min_insync_replicas) == (2, 1)
    topics = replicated(TopicSettings(replication_factor=3, min_insync_replicas=3), 3)
    assert (topics.replication_factor, topics.min_insync_replicas) == (3, 3)


def test_more_replicas_than_brokers_is_refused_only_for_topics_to_create():
    topics = replicated(TopicSettings(replication_factor=3), 1)  # a broker down: still runs
    assert topics.replication_factor == 3
    with pytest.raises(UserError, match=r"REPLICATION_FACTOR=3 but the cluster has 1 broker up:"):
        check_brokers(topics, 1)
    check_brokers(topics, 3)


def test_a_minimum_in_sync_above_the_replication_is_a_user_error():
    with pytest.raises(UserError, match=r"MIN_INSYNC_REPLICAS=3 is above the replication"):
        replicated(TopicSettings(replication_factor=2, min_insync_replicas=3), 3)


def test_every_topic_is_created_with_the_minimum_in_sync():
    specs = topic_specs(replicated(TopicSettings(), 3))
    assert {config["min.insync.replicas"] for _, _, config in specs} == {"2"}
    samples = dict((name, config) for name, _, config in specs)["mplp.learning_samples"]
    assert samples == {
        "cleanup.policy": "compact",
        "retention.ms": "-1",
        "min.insync.replicas": "2",
    }


def test_undecided_replication_adds_no_config():
    assert all("min.insync.replicas" not in config for _, _, config in topic_specs(TopicSettings()))


def test_every_changelog_gets_the_minimum_in_sync(tmp_path):
    settings = Settings(data_dir=str(tmp_path), store="memory://")
    settings = settings.model_copy(update={"topics": replicated(settings.topics, 3)})
    app = faust.App("replication-test", broker="memory://", store="memory://")
    tables = Tables.declare(app, settings)
    declared = [tables.plan_state, tables.pending, tables.graphs, *tables.quality.values()]
    for table in declared:
        assert table.changelog_topic.config == {"min.insync.replicas": "2"}, table.name


def test_drift_names_the_replication_first_then_each_config():
    want = {"cleanup.policy": "compact", "min.insync.replicas": "2"}
    have = {"cleanup.policy": "compact", "min.insync.replicas": "1"}
    assert _status(want, have, replicas=1, factor=3) == (
        "exists (differs: replication 1 < 3, min.insync.replicas)"
    )
    assert _status(want, want, replicas=3, factor=3) == "exists"
    assert _status(want, want, replicas=5, factor=3) == "exists"


async def test_an_admin_request_is_asked_again_while_a_broker_is_down(monkeypatch):
    monkeypatch.setattr(admin, "RETRY_PAUSE_S", 0.0)
    calls = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise NodeNotReadyError("node 1 is down")
        return "answered"

    assert await admin._retried(flaky) == "answered"
    assert len(calls) == 3


async def test_an_error_that_retrying_cannot_cure_is_raised_at_once(monkeypatch):
    monkeypatch.setattr(admin, "RETRY_PAUSE_S", 0.0)
    calls = []

    async def refused() -> None:
        calls.append(1)
        raise TopicAuthorizationFailedError("not allowed")

    with pytest.raises(TopicAuthorizationFailedError):
        await admin._retried(refused)
    assert len(calls) == 1


class _Cluster:
    """An admin client whose metadata lists a dead broker until the cluster drops it."""

    def __init__(self) -> None:
        self.asked = 0

    async def describe_cluster(self) -> dict:
        self.asked += 1
        live = [{"node_id": 1, "host": "127.0.0.1", "port": 1001}]
        dead = [{"node_id": 2, "host": "127.0.0.1", "port": 1002}]
        return {"brokers": live + (dead if self.asked < 3 else [])}


async def test_a_listed_broker_that_does_not_answer_is_waited_for(monkeypatch):
    monkeypatch.setattr(admin, "RETRY_PAUSE_S", 0.0)

    async def reachable(_host: str, port: int) -> bool:
        return port != 1002

    monkeypatch.setattr(admin, "_reachable", reachable)
    cluster = _Cluster()
    assert await admin._brokers(cluster) == 1  # type: ignore[arg-type]
    assert cluster.asked == 3


def test_a_minimum_in_sync_is_compared_as_a_number_and_unreported_is_the_default():
    want = {"min.insync.replicas": "2"}
    assert _status(want, {"min.insync.replicas": "3"}, replicas=3, factor=3) == "exists"
    assert _status({"min.insync.replicas": "1"}, {}, replicas=1, factor=1) == "exists"
    assert _status(want, {}, replicas=3, factor=3) == "exists (differs: min.insync.replicas)"


class _Describer:
    """An admin client whose brokers learn of a new topic on the third ask."""

    def __init__(self, error_code: int = 0) -> None:
        self.asked, self.error_code = 0, error_code

    async def describe_topics(self, names: list[str]) -> list[dict]:
        self.asked += 1
        known = self.asked >= 3 and self.error_code == 0
        partitions = [{"partition": 0, "replicas": [1, 2, 3]}] if known else []
        return [
            {"topic": n, "error_code": self.error_code, "partitions": partitions} for n in names
        ]


async def test_a_topic_is_described_once_the_broker_asked_knows_its_partitions(monkeypatch):
    monkeypatch.setattr(admin, "RETRY_PAUSE_S", 0.0)
    describer = _Describer()
    (topic,) = await admin.described_topics(describer, ["t"])  # type: ignore[arg-type]
    assert (describer.asked, len(topic["partitions"][0]["replicas"])) == (3, 3)


async def test_a_topic_error_that_asking_again_cannot_cure_is_returned_at_once(monkeypatch):
    monkeypatch.setattr(admin, "RETRY_PAUSE_S", 0.0)
    describer = _Describer(error_code=29)  # TOPIC_AUTHORIZATION_FAILED
    (topic,) = await admin.described_topics(describer, ["t"])  # type: ignore[arg-type]
    assert (describer.asked, topic["error_code"], topic["partitions"]) == (1, 29, [])
