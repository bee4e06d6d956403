"""The worker creates every table's changelog before it starts, exactly as Faust's own
declaration would (agents/seams/changelogs.py): same names, partitions, cleanup and retention."""

from __future__ import annotations

import os
from typing import Any

import pytest
from faust.transport.drivers.aiokafka import Transport
from mode.utils.times import want_seconds

from learnstream.agents.seams.changelogs import changelog_specs
from learnstream.agents.wiring import wire
from learnstream.streams.config.settings import Settings
from learnstream.streams.io.app import create_app
from tests.support.apps import close_consumer_loop
from tests.support.offsets import FakeEnds


class Declared:
    """A producer that only notes the topics Faust's ``Topic.declare`` asks it to create."""

    def __init__(self) -> None:
        self.topics: dict[str, tuple[int, dict[str, str]]] = {}

    async def create_topic(self, topic: str, partitions: int, **kwargs: Any) -> None:
        retention = kwargs["retention"]
        config = Transport._topic_config(  # what Faust's Kafka driver sends
            None,  # type: ignore[arg-type]  (it reads nothing of the transport)
            int(want_seconds(retention) * 1000.0) if retention else None,
            kwargs["compacting"],
            kwargs["deleting"],
        )
        config.update(kwargs["config"] or {})
        self.topics[topic] = (partitions, {k: str(v) for k, v in config.items()})


@pytest.fixture
def app(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in list(os.environ):
        if name.startswith("LEARNSTREAM_"):
            monkeypatch.delenv(name)
    settings = Settings(store="memory://", sample_format="json", data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    wire(app, settings, ends=FakeEnds())
    yield app
    close_consumer_loop(app)


async def test_each_changelog_is_created_as_fausts_declaration_would(app: Any) -> None:
    declared = Declared()
    for table in app.tables.values():
        topic = table.changelog_topic

        async def producer(declared: Declared = declared) -> Declared:
            return declared

        topic._get_producer = producer
        await topic.declare()
    specs = {name: (partitions, config) for name, partitions, config in changelog_specs(app)}
    assert specs == declared.topics
    names = sorted(specs)
    assert f"{app.conf.id}-plan_state-changelog" in names
    assert any(name.endswith("quality_1h-changelog") for name in names)  # a windowed one
    windowed = specs[next(n for n in names if n.endswith("quality_1h-changelog"))][1]
    assert windowed["cleanup.policy"] == "compact,delete"
    assert int(windowed["retention.ms"]) > 0
    assert specs[f"{app.conf.id}-plan_state-changelog"][1] == {"cleanup.policy": "compact"}
