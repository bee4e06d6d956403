"""What the anonymizer masks in one text, and why: ``learnstream privacy explain``.

For a compliance reviewer or a user tuning the allow and deny lists: each span found, its
entity, the recognizer that found it and its score, the PII an allowed item let through,
and the text as a sample would carry it. The result is for the terminal that asked; the
worker never calls this and nothing here is logged.
"""

from __future__ import annotations

from dataclasses import dataclass

from presidio_anonymizer import RecognizerResult

from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.results import NAMES, SECRETS, recognizer

__all__ = ["Explanation", "Span", "explain", "render"]

#: What each recognizer name means to a reader who has not read the code.
_SAY = {
    NAMES: "names and places (spaCy NER, checked by shape)",
    SECRETS: "secrets (detect-secrets plugins and credential rules)",
    "deny list": "deny list (LEARNSTREAM_PRIVACY__DENY)",
}
_BY_USE = (
    "names and places (by their use: a cue, a verb, a list; or a listed given name and surname)"
)


@dataclass(frozen=True)
class Span:
    """One span found: where, its entity, who found it, how sure."""

    start: int
    end: int
    entity: str
    recognizer: str
    score: float


@dataclass(frozen=True)
class Explanation:
    """A text, what a sample would carry instead, the spans masked and those let through."""

    text: str
    masked: str
    spans: list[Span]
    allowed: list[Span]

    def as_json(self) -> dict[str, object]:
        """Return the explanation as plain JSON values (``--json``)."""

        def row(span: Span) -> dict[str, object]:
            return {**span.__dict__, "text": self.text[span.start : span.end]}

        return {
            "text": self.text,
            "masked": self.masked,
            "spans": [row(s) for s in self.spans],
            "allowed": [row(s) for s in self.allowed],
        }


def explain(anonymizer: Anonymizer, text: str) -> Explanation:
    """Return what ``anonymizer`` masks in text and which recognizer found each span."""
    found = anonymizer.find(text)
    model = anonymizer.ner_spans(text) if any(recognizer(r) == NAMES for r in found.results) else []

    def span(result: RecognizerResult) -> Span:
        name, start, end = recognizer(result), result.start, result.end
        if name == NAMES and not any(a < end and start < b for _, a, b in model):
            said = _BY_USE  # the model did not see it: a rule of names.py did
        else:
            said = _SAY.get(name, f"{name or 'pattern'} (Presidio)")
        return Span(start, end, result.entity_type, said, round(result.score, 2))

    masked, _ = anonymizer.anonymize_text(text)
    spans = sorted((span(r) for r in found.results), key=lambda s: (s.start, s.end))
    allowed = sorted((span(r) for r in found.allowed), key=lambda s: (s.start, s.end))
    return Explanation(text, masked, spans, allowed)


def render(explanation: Explanation) -> str:
    """Return the explanation as lines for a terminal."""
    text = explanation.text
    lines = [f"text:   {text}", f"sample: {explanation.masked}", ""]
    if not explanation.spans:
        lines.append("nothing is masked")
    for s in explanation.spans:
        lines.append(f"  {text[s.start : s.end]!r:32} {s.entity:16} {s.score:4.2f}  {s.recognizer}")
    for s in explanation.allowed:
        lines.append(
            f"  {text[s.start : s.end]!r:32} {s.entity:16} {s.score:4.2f}  "
            "left: an allowed item covers it (LEARNSTREAM_PRIVACY__ALLOW)"
        )
    return "\n".join(lines)
