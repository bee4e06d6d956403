"""Read topics' configs as a broker describes them, once it knows every topic asked for."""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

__all__ = ["describe_configs"]


async def describe_configs(
    admin: AIOKafkaAdminClient, topics: list[str], wait_s: float = 20.0
) -> list[Any]:
    """Return describe_configs of ``topics`` once the broker answers each without an error.

    A broker may not know yet a topic its controller created a moment ago: it then answers
    that topic with UNKNOWN_TOPIC_OR_PARTITION and no entries (seen on Apache Kafka under
    load, one node and three). After ``wait_s`` the last answer is returned as it is.
    """
    resources = [ConfigResource(ConfigResourceType.TOPIC, topic) for topic in topics]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        responses = await admin.describe_configs(resources)
        failed = [r for response in responses for r in response.resources if r[0] != 0]
        if not failed or loop.time() > deadline:
            return responses
        await asyncio.sleep(0.2)
