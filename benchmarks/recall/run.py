"""Run the corpus through the anonymizer the worker builds, timed in process CPU time."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.recall.corpus import Corpus
from benchmarks.recall.score import score
from learnstream.streams.config.settings import Settings
from learnstream.streams.privacy.config import privacy_config
from learnstream.streams.privacy.pii import build_anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy

__all__ = ["FIELDS", "Configuration", "configurations", "measure", "setting", "worker_anonymizer"]

Anonymize = Callable[[str, str], str]  # (sample field, text) -> text as the sample leaves
_NER = "LEARNSTREAM_PRIVACY__NER"
#: Where each field sits in a sample, as the builders put it: (family, path to the text).
FIELDS: dict[str, tuple[str, tuple[str | int, ...]]] = {
    "objective": ("intent_resolution", ("input", "objective")),
    "step": ("intent_resolution", ("input", "plan_structure", 0, "description")),
    "reason": ("confirm_decision", ("output", "reasoning")),
    "correction": ("error_correction", ("feedback", "details", "user_feedback")),
    "prompt": ("dialog_response", ("input", "prompt")),
}


@dataclass(frozen=True)
class Configuration:
    """Settings to measure: environment variables set on top of this process's own."""

    name: str
    env: dict[str, str] = field(default_factory=dict)


def setting(text: str) -> tuple[str, str]:
    """Parse ``KEY=VALUE`` (privacy section) or ``SECTION.KEY=VALUE`` into an env variable."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    section, _, name = key.rpartition(".")
    return f"LEARNSTREAM_{(section or 'privacy').upper()}__{name.upper()}", value


def configurations(ner: str, privacy: list[tuple[str, str]]) -> list[Configuration]:
    """Return the configurations of an ``--ner`` mode, each with the ``--privacy`` settings."""
    base = dict(privacy)
    modes = {"env": [None], "off": ["false"], "on": ["true"], "both": ["false", "true"]}[ner]
    return [
        Configuration(
            "as configured" if flag is None else f"NER {'on' if flag == 'true' else 'off'}",
            base if flag is None else {**base, _NER: flag},
        )
        for flag in modes
    ]


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """Set ``env`` for the block only: later worker processes must not inherit it."""
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _sample(field_name: str, text: str) -> dict[str, Any]:
    """Return a sample carrying ``text`` where the builders put that field."""
    family, path = FIELDS[field_name]
    node: Any = text
    for step in reversed(path):
        node = [node] if isinstance(step, int) else {step: node}
    return {"sample_family": family, **node}


def _read(field_name: str, sample: dict[str, Any]) -> str:
    node: Any = sample
    for step in FIELDS[field_name][1]:
        node = node[step]
    return str(node)


def worker_anonymizer(config: Configuration) -> tuple[Anonymize, dict[str, Any]]:
    """Build and warm the worker's anonymizer for ``config``; return it and its settings."""
    with _environment(config.env):
        privacy = privacy_config(Settings())
    anonymizer = build_anonymizer(privacy)
    anonymizer.warm()

    def anonymize(field_name: str, text: str) -> str:
        clean, _counts = apply_privacy(_sample(field_name, text), anonymizer)
        return _read(field_name, clean)

    keys = ("ner", "entities", "detect_secrets", "phone_regions", "operator", "score_threshold")
    return anonymize, {k: getattr(privacy, k) for k in keys if hasattr(privacy, k)}


def measure(corpus: Corpus, config: Configuration, examples: int) -> dict[str, Any]:
    """Return one configuration's scores and CPU time on ``corpus`` (or why it cannot run)."""
    head = {"name": config.name, "env": config.env}
    try:
        anonymize, settings = worker_anonymizer(config)
    except (RuntimeError, ImportError, OSError, ValueError) as exc:
        return {**head, "error": f"{type(exc).__name__}: {exc}"}
    start = time.process_time()
    planted = [anonymize(p.field, p.text) for p in corpus.planted]
    middle = time.process_time()
    clean = [anonymize(c.field, c.text) for c in corpus.clean]
    end = time.process_time()
    return {
        **head,
        "settings": settings,
        "cpu_us": {
            "planted": 1e6 * (middle - start) / max(len(planted), 1),
            "clean": 1e6 * (end - middle) / max(len(clean), 1),
            "all": 1e6 * (end - start) / max(len(planted) + len(clean), 1),
        },
        **score(corpus, planted, clean, examples),
    }
