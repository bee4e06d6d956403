"""Agent: per-project learning consent -> the global consent table every worker reads."""

from __future__ import annotations

from faust.types import EventT, StreamT

from agents.runtime import Runtime
from streams.decode import decode_consent

__all__ = ["register"]


def register(runtime: Runtime) -> None:
    """Register the consent agent on the runtime's app."""

    async def handle(event: EventT[bytes]) -> None:
        msg = event.message
        if msg.value is None and msg.key:  # tombstone: back to the global default
            runtime.tables.consent.pop(msg.key.decode("utf-8", "replace"), None)
            return
        record = decode_consent(msg.value)
        runtime.tables.consent[record.project_id] = record.enabled

    @runtime.app.agent(runtime.topics.consent, name="learnstream.consent")
    async def consent(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            await runtime.guarded("consent", event, handle)
