"""Create learnstream's topics with explicit partitions, replication and configs.

Which topics, and their keys: docs/architecture.md §3.

Replication is decided against the cluster it runs on
(:func:`learnstream.streams.io.topics.replicated`): by default three replicas, or one per broker on
a smaller cluster, and ``min.insync.replicas`` one less, so that with the producers' ``acks=all``
no acknowledged write is lost when one broker fails. An existing topic is never altered
(AlterConfigs would reset every other config an operator set on it, and a replica reassignment is
the operator's to plan): what differs is reported, replication first.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from learnstream.streams.config.settings import TopicSettings
from learnstream.streams.io.connection import Broker, bootstrap_of, connection_of
from learnstream.streams.io.topics import check_brokers, replicated, topic_specs

__all__ = [
    "bootstrap_of",
    "create_missing",
    "create_topics",
    "described_topics",
    "ensure_topics",
]

log = logging.getLogger(__name__)
T = TypeVar("T")
#: How long a request is tried again while brokers come and go (a failover, a rolling restart).
RETRY_FOR_S = 60.0
RETRY_PAUSE_S = 1.0
#: describe_topics answers for a topic whose metadata has not reached the broker asked yet:
#: none, UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE.
_NOT_YET = frozenset({0, 3, 5})
#: How long a broker may take to accept a connection before it counts as down.
REACH_S = 3.0


async def _retried(call: Callable[[], Awaitable[T]]) -> T:
    """Return what ``call`` gives, asking again for up to ``RETRY_FOR_S`` while it fails with
    a retriable error: the admin client sends each request to one broker picked at random (or
    the controller), which may be the one that is down while the cluster fails over."""
    deadline = asyncio.get_running_loop().time() + RETRY_FOR_S
    while True:
        try:
            return await call()
        except KafkaError as exc:
            if not exc.retriable or asyncio.get_running_loop().time() > deadline:
                raise
            log.info("admin request failed (%s): asking another broker", type(exc).__name__)
            await asyncio.sleep(RETRY_PAUSE_S)


async def _configs(admin: AIOKafkaAdminClient, names: list[str]) -> dict[str, dict[str, str]]:
    """Return the configs of existing topics, by topic."""
    if not names:
        return {}
    resources = [ConfigResource(ConfigResourceType.TOPIC, name) for name in names]
    responses = await _retried(lambda: admin.describe_configs(resources))
    return {
        # (error_code, error_message, resource_type, resource_name, [(name, value, ...)])
        resource_name: {entry[0]: entry[1] for entry in entries}
        for response in responses
        for _, _, _, resource_name, entries, *_ in response.resources
    }


async def described_topics(admin: AIOKafkaAdminClient, names: list[str]) -> list[dict[str, Any]]:
    """Return ``describe_topics(names)`` once every topic shows its partitions.

    A topic just created is known to the controller before every broker's metadata has it, and
    the broker asked (one picked at random) answers for it with no partitions, or unknown, or
    no leader yet: asked again, for up to ``RETRY_FOR_S``, then returned as it is with a
    warning. Any other error (not authorized, say) is returned at once.
    """
    deadline = asyncio.get_running_loop().time() + RETRY_FOR_S
    while True:
        described: list[dict[str, Any]] = await _retried(lambda: admin.describe_topics(names))
        pending = [
            topic["topic"]
            for topic in described
            if topic["error_code"] in _NOT_YET and not topic["partitions"]
        ]
        if not pending:
            return described
        if asyncio.get_running_loop().time() > deadline:
            log.warning("topics %s still show no partitions after %.0f s", pending, RETRY_FOR_S)
            return described
        await asyncio.sleep(RETRY_PAUSE_S / 4)


async def _replicas(admin: AIOKafkaAdminClient, names: list[str]) -> dict[str, int]:
    """Return the fewest replicas any partition of each existing topic has, by topic."""
    if not names:
        return {}
    described = await described_topics(admin, names)
    return {
        topic["topic"]: min((len(p["replicas"]) for p in topic["partitions"]), default=0)
        for topic in described
    }


def _differs(key: str, want: str, have: Mapping[str, str]) -> bool:
    """Tell whether an existing topic's config falls short of ``want``. A minimum in sync is
    a number, and more is no fault; a broker that reports none applies its default, 1."""
    if key == "min.insync.replicas":
        return int(have.get(key) or 1) < int(want)
    return have.get(key) != want


def _status(want: Mapping[str, str], have: Mapping[str, str], replicas: int, factor: int) -> str:
    """Say 'exists', naming what an operator must change: replication, then each config."""
    differing = [f"replication {replicas} < {factor}"] if replicas < factor else []
    differing += sorted(key for key, value in want.items() if _differs(key, value, have))
    return f"exists (differs: {', '.join(differing)})" if differing else "exists"


async def _reachable(host: str, port: int) -> bool:
    """Tell whether a broker accepts a TCP connection within ``REACH_S`` (name lookup
    included)."""
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), REACH_S)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


async def _brokers(admin: AIOKafkaAdminClient) -> int:
    """Return how many brokers the cluster's metadata lists, once every one listed answers.

    A broker that just died stays listed until its session times out (9 s by default), and
    Faust, starting, sends its topic declarations to whichever broker the metadata names as
    controller: a dead one makes the worker exit. So a broker listed but unreachable is
    waited for (``RETRY_FOR_S`` at most) until the cluster drops it or it comes back.
    """
    deadline = asyncio.get_running_loop().time() + RETRY_FOR_S
    while True:
        cluster: dict[str, Any] = await _retried(admin.describe_cluster)
        listed = cluster.get("brokers", [])
        answers = await asyncio.gather(*(_reachable(b["host"], b["port"]) for b in listed))
        down = [b["node_id"] for b, up in zip(listed, answers, strict=True) if not up]
        if not down or asyncio.get_running_loop().time() > deadline:
            return len(listed) or 1
        log.info("brokers %s are listed but do not answer: waiting for the cluster", down)
        await asyncio.sleep(RETRY_PAUSE_S)


async def create_topics(broker: Broker, topics: TopicSettings) -> list[tuple[str, str]]:
    """Return the statuses of :func:`ensure_topics` (which creates what is missing)."""
    return (await ensure_topics(broker, topics))[1]


async def ensure_topics(
    broker: Broker, topics: TopicSettings
) -> tuple[TopicSettings, list[tuple[str, str]]]:
    """Create every topic that is missing, in one admin session; return ``topics`` with the
    replication decided for the cluster (what the worker gives Faust's changelogs), and
    (name, 'created' | 'exists ...') per topic.

    An existing topic with fewer replicas, another ``min.insync.replicas``, or (compacted) a
    cleanup or retention config that differs (a samples topic created before samples were kept
    forever) is reported as ``exists (differs: ...)``, not altered.
    """
    options = connection_of(broker).client_options()
    admin = AIOKafkaAdminClient(**options, request_timeout_ms=30_000)
    await admin.start()
    try:
        brokers = await _brokers(admin)
        topics = replicated(topics, brokers)
        factor = topics.replication_factor or 1
        specs = topic_specs(topics)
        listed = set(await _retried(admin.list_topics))
        if any(name not in listed for name, _, _ in specs):
            check_brokers(topics, brokers)
        names = [name for name, _, _ in specs if name in listed]
        configs, replicas = await _configs(admin, names), await _replicas(admin, names)
        absent = [spec for spec in specs if spec[0] not in listed]
        created = await _create_absent(admin, absent, factor)
        results = []
        for name, _, config in specs:
            if name in listed:
                have = configs.get(name, {})
                results.append((name, _status(config, have, replicas.get(name, 0), factor)))
            else:
                results.append((name, "created" if name in created else "exists"))
        return topics, results
    finally:
        await admin.close()


async def create_missing(
    broker: Broker, specs: list[tuple[str, int, dict[str, str]]], replication: int
) -> list[str]:
    """Create each (name, partitions, config) of ``specs`` the broker does not have, with
    ``replication`` replicas; return the names created. Existing topics are left as they
    are (the worker's changelogs: Faust would create them as the app starts, and a consumer
    that joins its group meanwhile sees them with no partitions)."""
    if not specs:
        return []
    admin = AIOKafkaAdminClient(**connection_of(broker).client_options(), request_timeout_ms=30_000)
    await admin.start()
    try:
        listed = set(await _retried(admin.list_topics))
        return await _create_absent(admin, [s for s in specs if s[0] not in listed], replication)
    finally:
        await admin.close()


async def _create_absent(
    admin: AIOKafkaAdminClient, specs: list[tuple[str, int, dict[str, str]]], replication: int
) -> list[str]:
    """Create each (name, partitions, config) of ``specs`` with ``replication`` replicas, one
    request per topic; return the names created (one another client created meanwhile is
    not among them)."""
    created = []
    for name, partitions, config in specs:
        new = NewTopic(name, partitions, replication, topic_configs=config)
        try:
            await _retried(functools.partial(admin.create_topics, [new]))
            created.append(name)
        except TopicAlreadyExistsError:
            pass
    return created
