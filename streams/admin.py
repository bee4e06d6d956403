"""Create learnstream's topics with explicit partitions and configs (DESIGN §3)."""

from __future__ import annotations

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from streams.settings import TopicSettings
from streams.topics import topic_specs

__all__ = ["bootstrap_of", "create_topics"]


def bootstrap_of(url: str) -> str:
    """Return ``host:port[,..]`` from a ``kafka://`` URL (or a bare bootstrap string)."""
    return url.removeprefix("kafka://").rstrip("/").replace(";", ",")


async def create_topics(bootstrap: str, topics: TopicSettings) -> list[tuple[str, str]]:
    """Create every topic that is missing; return (name, 'created' | 'exists') per topic."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        results = []
        for name, partitions, config in topic_specs(topics):
            if name in existing:
                results.append((name, "exists"))
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
