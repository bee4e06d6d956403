"""Load presidio-evaluator's sentence generator and templates from the installed package.

Its ``PresidioSentenceFaker`` fills templates Presidio's authors wrote for their own
evaluation with fake records (a CSV the package ships) and Faker, and reports each span
it planted with the template's placeholder. Three of its habits are contained here: it
prints to stdout, it loads a ``.env`` file into the environment on import, and one of its
default providers asks a web service for hospital names when built.

It is installed without its dependencies (``INSTALL``): the generator needs only packages
the dev environment has already (spaCy, Faker, pandas, presidio, PyYAML, requests, tqdm,
python-dotenv), while its declared ones bring transformers, which presidio-analyzer then
imports whenever it is present: about a second more for every process that imports it,
tests and workers alike.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
from collections.abc import Iterator
from typing import Any

__all__ = ["INSTALL", "REQUIREMENT", "generated", "read_templates"]

#: The version the recall corpus is generated with, and how to install it.
REQUIREMENT = "presidio-evaluator==0.3.2"
INSTALL = f"pip install --no-deps {REQUIREMENT}"


@contextlib.contextmanager
def _contained() -> Iterator[None]:
    """Drop the package's prints and keep its ``.env`` loading out of our environment."""
    saved = dict(os.environ)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _package() -> Any:
    """Import the generator, or say which requirement brings it."""
    try:
        with _contained():
            from presidio_evaluator import data_generator
    except ImportError as exc:
        raise ImportError(f"the recall corpus needs {REQUIREMENT}: {INSTALL}") from exc
    return data_generator


def read_templates() -> tuple[list[str], dict[str, str]]:
    """Return the package's templates and its placeholder -> entity map."""
    gen = _package()
    lines = gen.presidio_templates_file_path.read_text(encoding="utf-8").splitlines()
    return [t for t in lines if t.strip()], dict(gen.PresidioSentenceFaker.ENTITY_TYPE_MAPPING)


def _generator(seed: int, templates: list[str]) -> Any:
    """Return the package's sentence faker over ``templates``, its providers and records."""
    gen = _package()
    # the hospital provider asks a web service for names when built: no network here
    hospital = gen.faker_extensions.HospitalProvider
    providers = [p for p in gen.presidio_additional_entity_providers if p is not hospital]
    identity = {k: k for k in gen.PresidioSentenceFaker.ENTITY_TYPE_MAPPING}  # keeps variants
    # it draws its records' middle initials from the global generator before seeding it
    random.seed(seed)
    with _contained():
        return gen.PresidioSentenceFaker(
            locale="en_US",
            lower_case_ratio=0.0,
            sentence_templates=templates,
            entity_providers=providers,
            entity_type_mapping=identity,
            random_seed=seed,
        )


def generated(seed: int, count: int, templates: list[str]) -> Iterator[tuple[Any, str]]:
    """Yield (sample, its template) of ``count`` sentences the package generates."""
    faker = _generator(seed, templates)
    with _contained():
        samples = faker.generate_new_fake_sentences(count)
    for sample in samples:
        yield sample, templates[sample.template_id].strip()
