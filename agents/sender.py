"""The one way a record leaves the worker: the producer, in the source partition's transaction."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import faust

from learnstream.agents.seams import faust_compat

__all__ = ["Sender"]


class Sender:
    """Send records on the app's producer; under exactly_once, in the transaction of the
    partition whose record caused them."""

    def __init__(self, app: faust.App) -> None:
        self.app = app

    async def __call__(
        self,
        topic: faust.TopicT,
        key: bytes | None,
        value: bytes | None,
        source: tuple[str, int],
        headers: list[tuple[str, bytes]] | None = None,
    ) -> Awaitable[Any]:
        """Send one record; with exactly_once, inside the source partition's transaction.

        Faust picks a send's transaction from the *destination* partition, which it only
        knows for subscribed topics; our outputs are not subscribed, so Faust would send
        them outside any transaction (faust-streaming #177/#517: duplicates after a kill).
        We name the transaction that commits the source offset instead.

        Straight to the driver's producer, not through ``Topic.send``, in both guarantees:
        that skips Faust's channel layer and send sensors, a per-send cost the worker uses
        nothing of (benchmarks/RESULTS.md, findings behind the design).
        """
        transactional_id = None
        if self.app.in_transaction:
            transactional_id = faust_compat.transactional_id(self.app, source[0], source[1])
        return await self.app.producer.send(
            topic.get_topic_name(),
            key,
            value,
            None,
            None,
            headers,
            transactional_id=transactional_id,
        )
