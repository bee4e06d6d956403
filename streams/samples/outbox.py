"""Turn a built sample into the records we write: consent, privacy, encoding (pure)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from learnstream.streams.encoding.codecs import SampleCodec
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy
from learnstream.streams.samples.ids import sample_id as derived_id
from learnstream.streams.samples.sample import LearningSample

__all__ = ["Outgoing", "consent_verdict", "learning_event", "prepare"]


@dataclass(frozen=True)
class Outgoing:
    """The sample and its learning_sample_captured event, encoded, ready to send."""

    #: the sample as written: anonymized, opt-out patterns applied (what ``value`` encodes)
    clean: dict[str, Any]
    key: bytes
    value: bytes
    #: None when the captured event is switched off (``topics.emit_captured``)
    event_value: bytes | None
    family: str
    quality: str
    pii: Counter[str]


def consent_verdict(enabled: bool, project_consent: bool | None) -> str | None:
    """Return why a sample must be dropped (``global``, ``project``), or None to keep it."""
    if not enabled:
        return "global"
    if project_consent is False:
        return "project"
    return None


def learning_event(sample: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Return the MPLP external_integration event announcing a captured sample."""
    event: dict[str, Any] = {
        "event_id": derived_id("learning_sample_captured", sample["sample_id"]),
        "event_family": "external_integration",
        "event_type": "learning_sample_captured",
        "timestamp": now.isoformat().replace("+00:00", "Z"),
        "payload": {
            "sample_id": sample["sample_id"],
            "sample_family": sample["sample_family"],
            "quality_label": sample["feedback"]["quality_label"],
        },
    }
    if sample["meta"].get("project_id"):
        event["project_id"] = sample["meta"]["project_id"]
    return event


def prepare(
    sample: LearningSample,
    anonymizer: Anonymizer,
    codec: SampleCodec,
    now: datetime,
    *,
    captured: bool = True,
) -> Outgoing:
    """Anonymize and encode ``sample`` (opt-out patterns first, then PII), and its
    learning_sample_captured event unless ``captured`` is off."""
    clean, found = apply_privacy(sample.to_dict(), anonymizer)
    event = orjson.dumps(learning_event(clean, now)) if captured else None
    return Outgoing(
        clean=clean,
        key=clean["sample_id"].encode(),
        value=codec.encode(clean),
        event_value=event,
        family=sample.sample_family,
        quality=sample.feedback.quality_label,
        pii=found,
    )
