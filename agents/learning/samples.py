"""What feedback and experience requests write: samples, pairs, reward samples, transitions.

Feedback becomes a ``dialog_response`` sample sent through ``Runtime.prepare``/``send``
(global switch, opt-out, PII, codec, consent). Its DPO pair and reward sample are the
feedback's own conversions (``Feedback.to_preference_pair``/``to_reward_sample``) of the
sample *as written*, anonymized, so they hold nothing the sample does not, and exist only for
samples the global switch and the project's consent let through. Experiences pass the same
switch, their project's consent and privacy step (opt-out globs, then PII). ``annotator_id``
never enters any of them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
from faust.streams import current_event

from learnstream.agents.learning.stats import SkillTable
from learnstream.agents.runtime import Runtime
from learnstream.streams.a2e.messages import ExperienceResult, FeedbackResult
from learnstream.streams.a2e.models import Experience, Feedback, RewardSample
from learnstream.streams.a2e.samples import build_dialog_response
from learnstream.streams.privacy.optout import strip_opted_out
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.samples.pairs import PreferencePair
from learnstream.streams.samples.sample import LearningSample

__all__ = ["LearnWriter", "anonymize_record"]

Source = tuple[str, int]


def anonymize_record(
    record: dict[str, Any], anonymizer: Anonymizer
) -> tuple[dict[str, Any], Counter[str]]:
    """Return ``record`` through the samples' privacy step: opt-out globs, then PII."""
    stripped = strip_opted_out(record, anonymizer.config.opt_out_patterns)
    clean, found = anonymizer.anonymize_sample({"input": stripped})
    return clean["input"], found


def _record_time() -> float | None:
    """Return the Kafka timestamp (epoch s) of the record being processed: feedback's event
    time for the rolling stats."""
    event = current_event()
    stamp = event.message.timestamp if event is not None else None
    return float(stamp) if stamp else None


class LearnWriter:
    """Send what feedback and experience requests yield, in the source record's transaction."""

    def __init__(self, runtime: Runtime, stats: SkillTable) -> None:
        self.runtime, self.stats, self.metrics = runtime, stats, runtime.metrics

    async def feedback(self, feedbacks: list[Feedback], source: Source) -> FeedbackResult:
        """Send each feedback's sample, then its pair and reward sample; count its skill."""
        moment = self.runtime.clock()
        built = [build_dialog_response(f, moment) for f in feedbacks]
        by_id = {sample.sample_id: f for sample, f in zip(built, feedbacks, strict=True)}
        sent = await self.runtime.emitter.send(self.runtime.emitter.prepare(built), source)
        pairs = rewards = 0
        for sample, out in sent:
            # the sample as written: ``prepare`` ran privacy on it once, for every output
            written = LearningSample.model_validate(out.clean)
            feedback = by_id[sample.sample_id]
            pairs += await self.pair(
                feedback.to_preference_pair(self.runtime.clock(), written=written), source
            )
            rewards += await self.reward(
                feedback.to_reward_sample(written), sample.sample_id, source
            )
        at = _record_time()
        for item, f in enumerate(feedbacks):
            for kind, name in (("skill", f.skill_name), ("tool", f.tool_name)):
                if name:
                    self.stats.count_feedback(kind, name, f.score, at=at, item=item)
        details = {"samples": len(sent), "pairs": pairs, "reward_samples": rewards}
        return FeedbackResult(accepted=len(feedbacks), details=details)

    async def pair(self, pair: PreferencePair | None, source: Source) -> int:
        """Send a feedback's DPO pair, if it has one; return how many."""
        if pair is None:
            return 0
        topic = self.runtime.topics.preference_pairs
        await self.runtime.produce(topic, pair.key(), pair.to_json(), source)
        self.metrics.child(self.metrics.pairs, pair.kind).inc()
        return 1

    async def reward(self, reward: RewardSample | None, sample_id: str, source: Source) -> int:
        """Send the reward sample of a rated turn, keyed by its sample's id; return how many."""
        if reward is None:
            return 0
        value = orjson.dumps({"sample_id": sample_id, **reward.model_dump(mode="json")})
        topic = self.runtime.topics.reward_samples
        await self.runtime.produce(topic, sample_id.encode(), value, source)
        return 1

    async def experiences(
        self, items: list[Experience], key: bytes, source: Source
    ) -> ExperienceResult:
        """Store each transition, anonymized: none while learning is switched off, none of a
        project that opted out."""
        if not self.runtime.settings.learning.enabled:
            self.metrics.child(self.metrics.opted_out, "global").inc(len(items))
            return ExperienceResult(stored=0)
        if any(item.project_id for item in items):  # only a project can have opted out
            allowed = await self.runtime.emitter.consented([item.project_id for item in items])
            items = [item for item, keep in zip(items, allowed, strict=True) if keep]
        topic = self.runtime.topics.experiences
        for item in items:
            record = item.model_dump(
                mode="json", exclude={"project_id"} if not item.project_id else None
            )
            clean, found = anonymize_record(record, self.runtime.anonymizer)
            await self.runtime.produce(topic, key, orjson.dumps(clean), source)
            for entity, count in found.items():
                self.metrics.child(self.metrics.pii, entity).inc(count)
        return ExperienceResult(stored=len(items))
