"""A transactional producer whose coordinator's broker dies looks the coordinator up again.

aiokafka's ``Sender._find_coordinator`` raises a lookup whose connection the broker closed as a
plain ``KafkaError``, which kills the sender and the worker with it; seam 13
(``retry_lost_coordinators``) asks again, as aiokafka does for a coordinator not available.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from aiokafka.client import CoordinationType
from aiokafka.errors import KafkaConnectionError, KafkaError, NodeNotReadyError
from aiokafka.producer.sender import Sender

from learnstream.agents.seams.faust_compat import retry_lost_coordinators


class _Client:
    """Answers FindCoordinator with the given outcomes in turn, counting metadata updates."""

    def __init__(self, *outcomes: object) -> None:
        self.outcomes, self.updates = list(outcomes), 0

    async def coordinator_lookup(self, _type: object, _key: str) -> int:
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return int(outcome)  # type: ignore[call-overload]

    async def force_metadata_update(self) -> bool:
        self.updates += 1
        return True

    async def ready(self, _node: int, group: object = None) -> bool:
        return True


def _sender(client: _Client) -> SimpleNamespace:
    return SimpleNamespace(
        client=client,
        _coordinators={},
        _retry_backoff=0.0,
        _txn_manager=SimpleNamespace(transactional_id="ls-app-0-0"),
    )


async def test_a_closed_connection_during_a_lookup_is_asked_again():
    retry_lost_coordinators()
    client = _Client(KafkaConnectionError("Connection at 127.0.0.1:9 closed"), 3)
    sender = _sender(client)

    node = await Sender._find_coordinator(sender, CoordinationType.GROUP, "ls-app")

    assert node == 3
    assert sender._coordinators == {CoordinationType.GROUP: 3}
    assert client.updates >= 1


async def test_any_other_lookup_failure_still_raises():
    retry_lost_coordinators()
    retry_lost_coordinators()  # once per process: a second call wraps nothing twice
    sender = _sender(_Client(KafkaError("unknown"), 3))

    with pytest.raises(KafkaError) as raised:
        await Sender._find_coordinator(sender, CoordinationType.TRANSACTION, "ls-app-0-0")
    assert not isinstance(raised.value.__cause__, KafkaConnectionError)


async def test_what_aiokafka_already_retries_is_left_to_it():
    retry_lost_coordinators()
    client = _Client(NodeNotReadyError("node 2"), 1)
    assert await Sender._find_coordinator(_sender(client), CoordinationType.GROUP, "g") == 1
