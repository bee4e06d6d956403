"""The privacy step of the stream: opt-out first, then PII and secret anonymization."""

from __future__ import annotations

from collections import Counter
from typing import Any

from learnstream.streams.privacy.optout import OPTED_OUT, strip_opted_out
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.samples.sample import LearningSample, family_errors

__all__ = ["PAYLOAD_SECTIONS", "apply_privacy"]

#: Top-level sample sections that carry user content (plus feedback.details).
PAYLOAD_SECTIONS: tuple[str, ...] = ("input", "state", "output")


def _strip_payload(sample: dict[str, Any], patterns: tuple[str, ...]) -> dict[str, Any]:
    """Return a copy of sample with opted-out files, keys and paths removed from its payload."""
    out = dict(sample)
    for key in PAYLOAD_SECTIONS:
        if key in out:
            out[key] = strip_opted_out(out[key], patterns)
    feedback = out.get("feedback")
    if isinstance(feedback, dict) and "details" in feedback:
        out["feedback"] = {**feedback, "details": strip_opted_out(feedback["details"], patterns)}
    return out


def _errors(sample: dict[str, Any]) -> int:
    """Count what the sample's MPLP family schema finds missing (no full validation)."""
    fields: dict[str, Any] = {k: sample.get(k) or {} for k in ("input", "output")}
    fields["sample_family"] = sample.get("sample_family")
    probe = LearningSample.model_construct(**fields)
    return len(family_errors(probe))


def _keep_required(original: dict[str, Any], stripped: dict[str, Any]) -> dict[str, Any]:
    """Put OPTED_OUT back in a dropped top-level field the sample's family requires.

    Opt-out drops a matching file object's key; when the family schema requires that key
    (an intent summary that *is* an attachment), the sample keeps the key with the marker.
    """
    dropped = [
        (section, key)
        for section in ("input", "output")
        if isinstance(before := original.get(section), dict)
        and isinstance(after := stripped.get(section), dict)
        for key in before
        if key not in after
    ]
    errors = _errors(stripped) if dropped else 0
    for section, key in dropped:
        trial = {**stripped, section: {**stripped[section], key: OPTED_OUT}}
        if errors and (fewer := _errors(trial)) < errors:
            stripped, errors = trial, fewer
    return stripped


def apply_privacy(
    sample: dict[str, Any], anonymizer: Anonymizer
) -> tuple[dict[str, Any], Counter[str]]:
    """Return a new sample with opted-out content dropped, then PII and secrets replaced.

    Uses ``anonymizer.config``; with ``anonymize_pii=False`` only opt-out applies.
    The envelope (ids, created_at, meta, feedback labels) is never modified.
    """
    stripped = _strip_payload(sample, anonymizer.config.opt_out_patterns)
    stripped = _keep_required(sample, stripped)
    return anonymizer.anonymize_sample(stripped)
