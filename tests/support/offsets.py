"""End offsets for tests that have no broker: the consent fence's and the watermark's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from learnstream.streams.consent.fence import Offsets

__all__ = ["FakeEnds", "caught_up"]


async def caught_up() -> Offsets:
    """Answer as a reader that has read everything: no partition to wait for."""
    return {}


class FakeEnds:
    """What ``learnstream.agents.wiring.wire(ends=...)`` asks where topics end, answered by the
    test.

    By default the consent view has read everything and the corrections topic ends at 0;
    a test changes either answer while the worker runs (``consent_ends``, ``corrections_end``).
    """

    def __init__(self) -> None:
        self.consent_ends: Callable[[], Awaitable[Offsets]] = caught_up
        self.corrections_end: Callable[[], int] = lambda: 0

    async def consent(self) -> Offsets:
        return await self.consent_ends()

    async def corrections(self, partitions: list[int]) -> Mapping[int, int]:
        return dict.fromkeys(partitions, self.corrections_end())
