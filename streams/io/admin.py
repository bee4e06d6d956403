"""Create learnstream's topics with explicit partitions and configs (DESIGN §3)."""

from __future__ import annotations

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import TopicAlreadyExistsError

from streams.config.settings import TopicSettings
from streams.io.connection import Broker, bootstrap_of, connection_of
from streams.io.topics import topic_specs

__all__ = ["bootstrap_of", "create_topics"]


async def _differing(admin: AIOKafkaAdminClient, name: str, want: dict[str, str]) -> list[str]:
    """Return the names of the configs of an existing topic that differ from ``want``."""
    responses = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)])
    have = {
        entry[0]: entry[1]
        for response in responses
        # (error_code, error_message, resource_type, resource_name, [(name, value, ...)])
        for _, _, _, _, entries, *_ in response.resources
        for entry in entries
    }
    return sorted(key for key, value in want.items() if have.get(key) != value)


async def _existing(admin: AIOKafkaAdminClient, name: str, want: dict[str, str]) -> str:
    """Say 'exists', naming the configs an operator must change (we never alter a topic)."""
    differing = await _differing(admin, name, want) if "cleanup.policy" in want else []
    return f"exists (differs: {', '.join(differing)})" if differing else "exists"


async def create_topics(broker: Broker, topics: TopicSettings) -> list[tuple[str, str]]:
    """Create every topic that is missing; return (name, 'created' | 'exists ...') per topic.

    An existing compacted topic whose cleanup or retention config differs (a samples topic
    created before samples were kept forever) is reported, not altered: AlterConfigs would
    reset every other config the operator set on it.
    """
    options = connection_of(broker).client_options()
    admin = AIOKafkaAdminClient(**options, request_timeout_ms=30_000)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        results = []
        for name, partitions, config in topic_specs(topics):
            if name in existing:
                results.append((name, await _existing(admin, name, config)))
                continue
            new = NewTopic(name, partitions, topics.replication_factor, topic_configs=config)
            try:
                await admin.create_topics([new])
                results.append((name, "created"))
            except TopicAlreadyExistsError:
                results.append((name, "exists"))
        return results
    finally:
        await admin.close()
