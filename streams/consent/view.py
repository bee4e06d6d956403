"""Put consent first: every worker's view of the consent topic, and the fence before a verdict.

The guarantee: a consent record ``{project_id, enabled}`` that the broker acknowledged
(``acks=all``) before an event was produced decides that event's samples, on every worker,
whatever topics and partitions the two went to, and from the first record after a restart.

How:

- Every worker reads *all* partitions of the consent topic itself (no consumer group, from
  the beginning: the topic is compacted) into a :class:`ConsentView` of
  ``{canonical project id: enabled}``; a tombstone puts a project back to the global default.
- Before a record's samples are judged, the runtime awaits ``Fence.wait(since)``
  (streams/consent/fence.py), ``since`` being the moment the record reached this process. It returns
  once the view's read positions have reached end offsets fetched by a ListOffsets request
  that *started after* ``since``.
  The event was produced before it reached us and the consent record was acknowledged before
  that, so those end offsets include the consent record: no race is left.
- A restarted worker starts at position 0, so it holds every sample until it has read the
  whole consent topic.
- Cost: one request in flight at a time, shared by every waiter; a record that reached us
  before the last answered request started needs none, so under load most records do not wait.
- Nothing times out: while the broker does not answer, samples wait (the agent blocks as in a
  broker outage) and are never sent without a verdict; ``failures``, ``lag`` and ``waiting``
  feed the metrics and the reader's warnings (agents/consent_reader.py).

The embedded broker answers end offsets of (base offset of the last batch + 1): exact for
the one-record batches every producer sends there, below the true end after a multi-record
batch, where a position past it still means that whole batch (fetched as one) has been read.
"""

from __future__ import annotations

from learnstream.streams.dlq.errors import InvalidEvent
from learnstream.streams.mplp.decode import decode_consent
from learnstream.streams.samples.ids import canonical_id

__all__ = ["ConsentView", "parse_consent"]


def parse_consent(key: bytes | None, value: bytes | None) -> tuple[str, bool | None]:
    """Return (canonical project id, enabled) of a consent record; enabled None = tombstone."""
    if value is None and key:
        return canonical_id(key.decode("utf-8", "replace")), None
    record = decode_consent(value)
    return canonical_id(record.project_id), record.enabled


class ConsentView:
    """Hold every project's consent as read from the consent topic, in topic order."""

    def __init__(self) -> None:
        self._enabled: dict[str, bool] = {}
        #: Invalid records skipped (the consent agent dead-letters them).
        self.ignored = 0

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """Apply one consent record: set, or forget on a tombstone; skip an invalid one."""
        try:
            project, enabled = parse_consent(key, value)
        except InvalidEvent:
            self.ignored += 1
            return
        if enabled is None:
            self._enabled.pop(project, None)
        else:
            self._enabled[project] = enabled

    def get(self, project_id: str | None) -> bool | None:
        """Return the consent of ``project_id`` (any spelling of it), None when unknown."""
        return self._enabled.get(canonical_id(project_id)) if project_id else None

    def __len__(self) -> int:
        return len(self._enabled)
