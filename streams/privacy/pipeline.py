"""The privacy step of the stream: opt-out first, then PII anonymization."""

from __future__ import annotations

from collections import Counter
from typing import Any

from streams.privacy.optout import strip_opted_out
from streams.privacy.pii import Anonymizer

__all__ = ["PAYLOAD_SECTIONS", "apply_privacy"]

#: Top-level sample sections that carry user content (plus feedback.details).
PAYLOAD_SECTIONS: tuple[str, ...] = ("input", "state", "output")


def _strip_payload(sample: dict[str, Any], patterns: tuple[str, ...]) -> dict[str, Any]:
    """Return a copy of sample with opted-out keys and paths removed from its payload."""
    out = dict(sample)
    for key in PAYLOAD_SECTIONS:
        if key in out:
            out[key] = strip_opted_out(out[key], patterns)
    feedback = out.get("feedback")
    if isinstance(feedback, dict) and "details" in feedback:
        out["feedback"] = {**feedback, "details": strip_opted_out(feedback["details"], patterns)}
    return out


def apply_privacy(
    sample: dict[str, Any], anonymizer: Anonymizer
) -> tuple[dict[str, Any], Counter[str]]:
    """Return a new sample with opted-out content dropped, then PII anonymized.

    Uses ``anonymizer.config``; with ``anonymize_pii=False`` only opt-out applies.
    The envelope (ids, created_at, meta, feedback labels) is never modified.
    """
    stripped = _strip_payload(sample, anonymizer.config.opt_out_patterns)
    return anonymizer.anonymize_sample(stripped)
