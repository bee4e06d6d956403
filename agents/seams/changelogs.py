"""Create the tables' changelog topics before the worker starts, as Faust would.

Faust creates each table's changelog as the app starts, while its consumer joins the group.
On a loaded machine the join won: the consumer's metadata had a new changelog with no
partitions, the assignment ignored it, and the first write to that table raised Faust's
``PartitionsMismatch`` (4 source partitions, 0 changelog ones), which crashed the agents
(RELIABILITY.md). Created here first, with the partitions, cleanup policy and retention
Faust's own declaration gives them, every changelog is in the metadata before the consumer
asks for any; Faust then finds them there and creates nothing.
"""

from __future__ import annotations

import faust
from faust.types import TopicT
from mode.utils.times import want_seconds

__all__ = ["changelog_specs", "topic_spec"]


def topic_spec(topic: TopicT, default_partitions: int) -> tuple[str, int, dict[str, str]]:
    """Return (name, partitions, config) of ``topic`` as Faust's ``Topic.declare`` creates
    it: cleanup policy from ``compacting`` / ``deleting``, ``retention.ms`` from
    ``retention``, then the topic's own ``config`` over those."""
    config: dict[str, str] = {}
    flags = {"compact"} if topic.compacting else set()
    if topic.deleting:
        flags.add("delete")
    if flags:
        config["cleanup.policy"] = ",".join(sorted(flags))
    if topic.retention:
        config["retention.ms"] = str(int(want_seconds(topic.retention) * 1000.0))
    config.update({key: str(value) for key, value in (topic.config or {}).items()})
    return topic.get_topic_name(), topic.partitions or default_partitions, config


def changelog_specs(app: faust.App) -> list[tuple[str, int, dict[str, str]]]:
    """Return the spec of every table's changelog on ``app``."""
    partitions = app.conf.topic_partitions
    return [topic_spec(table.changelog_topic, partitions) for table in app.tables.values()]
