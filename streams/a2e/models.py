"""The A2E learn records: Feedback, Experience, SkillPerformanceRecord and the reward sample.

The fields are in streams/a2e/records.py; :class:`Feedback` adds seed 003's calls, which
build the feedback's samples (streams/a2e/samples.py). Seeds are cited as docs/seeds.md
digests them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from learnstream.streams.a2e.records import (
    DIMENSIONS,
    POLARITIES,
    SOURCES,
    STRATEGIES,
    Dimension,
    Experience,
    FeedbackFields,
    Name,
    Polarity,
    RatedTurn,
    RewardSample,
    SkillPerformanceRecord,
    Source,
    Strategy,
)
from learnstream.streams.a2e.samples import build_dialog_response, dialog_pair, reward_of
from learnstream.streams.samples.pairs import PreferencePair
from learnstream.streams.samples.sample import LearningSample

__all__ = [
    "DIMENSIONS",
    "POLARITIES",
    "SOURCES",
    "STRATEGIES",
    "Dimension",
    "Experience",
    "Feedback",
    "Name",
    "Polarity",
    "RatedTurn",
    "RewardSample",
    "SkillPerformanceRecord",
    "Source",
    "Strategy",
]

#: The creation time of a sample only a reward sample is made of (a reward sample has none).
_UNUSED_TIME = datetime(1970, 1, 1, tzinfo=UTC)


class Feedback(FeedbackFields):
    """One feedback signal on an agent's turn (A2E Feedback model).

    ``skill_name``/``tool_name`` are learnstream extensions: they let the score count in
    that skill's ``avg_score``. So is ``project_id``: the runtime's project, whose consent
    (the consent topic) decides whether the feedback's sample, pair and reward sample are
    kept, and whose erasure (``learnstream erase``) removes them.
    """

    def to_preference_pair(
        self,
        now: datetime | None = None,
        project_id: str | None = None,
        *,
        written: LearningSample | None = None,
    ) -> PreferencePair | None:
        """Return the DPO pair this feedback yields, or None (see
        :mod:`learnstream.streams.a2e.samples`).

        The pair is made of this feedback's dialog_response sample: ``written``, the sample
        as it was written (after privacy), so the pair holds nothing the written sample does
        not; without it, the sample built here for ``project_id`` (default: the feedback's).
        ``now``, the pair's (and a sample built here's) creation time, defaults to the clock,
        so seed 003's ``feedback.to_preference_pair()`` works as written.
        """
        now = datetime.now(UTC) if now is None else now
        if written is None:
            written = build_dialog_response(self, now, project_id=project_id or self.project_id)
        return dialog_pair(written, now)

    def to_reward_sample(self, written: LearningSample | None = None) -> RewardSample | None:
        """Return the reward-model sample (reward = score), or None without a rated turn.

        Its prompt, response and correlation id are those of this feedback's dialog_response
        sample: ``written``, as for :meth:`to_preference_pair`, else the sample built here.
        It takes no time (a reward sample has none), so seed 003's
        ``feedback.to_reward_sample()`` works as written.
        """
        if written is None:
            written = build_dialog_response(self, _UNUSED_TIME)
        return reward_of(written, self)
