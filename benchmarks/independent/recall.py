"""Build the recall corpus from presidio-evaluator's templates, filled by its own generator.

The package's ``PresidioSentenceFaker`` fills its 200-odd templates (written by Presidio's
authors for their own evaluation) with its fake records and Faker; every span it reports
is a planted value, its kind the entity the package maps the placeholder to. The
person-name templates are then filled again with the forms of ``names.py``: names in
four non-Latin scripts, lower-case, ALL-CAPS and @handles; login names go in the carriers
``names.USER_KEYS``. ``evaluator.py`` loads the package. The same seed gives the same
corpus, but for date-times, which Faker draws up to the present moment.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

from faker import Faker

from benchmarks.independent import names
from benchmarks.independent.evaluator import generated, read_templates
from benchmarks.recall.corpus import Planted
from benchmarks.recall.source import Value

__all__ = ["FIELD", "build_recall", "planted_value"]

#: Where the sentences go in a sample: an A2E prompt, as a user would type them.
FIELD = "prompt"
_PLACEHOLDER = re.compile(r"(?:\{\{|<)\s*(\w+)\s*(?:\}\}|>)")


def planted_value(kind: str, text: str, variant: str) -> Value:
    """Return a planted value; a name's words are scored even when no capital marks them."""
    words = tuple(w.strip(".,'’") for w in text.split())
    parts = tuple(w for w in words if len(w) >= 2 and w != text) if "PERSON" in kind else ()
    if kind == "@handle":
        parts = (text[1:],)
    return Value(text, (text,), variant, parts)


def _stock(seed: int, count: int) -> Iterator[Planted]:
    """Yield every span of the package's own sentences as a planted value of its entity."""
    templates, mapping = read_templates()
    for sample, template in generated(seed, count, templates):
        for span in sample.spans:
            if span.entity_value.strip():
                kind = mapping.get(span.entity_type, span.entity_type.upper())
                value = planted_value(kind, span.entity_value, span.entity_type)
                yield Planted(kind, FIELD, template, sample.full_text, value)


def _person_templates() -> tuple[list[str], frozenset[str]]:
    """Return the package's templates holding a person placeholder, and those placeholders."""
    templates, mapping = read_templates()
    person = frozenset(k for k, v in mapping.items() if v == "PERSON")
    held = [t for t in templates if person & {p.lower() for p in _PLACEHOLDER.findall(t)}]
    return held, person


def _refilled(seed: int, count: int, kind: str, make: Callable[[str], str]) -> Iterator[Planted]:
    """Yield the person spans of ``count`` sentences, each name replaced by ``make(name)``."""
    templates, person = _person_templates()
    for sample, template in generated(seed, count, templates):
        spans = sorted(
            (s for s in sample.spans if s.entity_type in person and s.entity_value),
            key=lambda s: s.start_position,
            reverse=True,
        )
        text, values = sample.full_text, []
        for span in spans:
            new = make(span.entity_value)
            text = text[: span.start_position] + new + text[span.end_position :]
            values.append((new, span.entity_type))
        for new, variant in values:
            yield Planted(kind, FIELD, template, text, planted_value(kind, new, variant))


def _logins(seed: int, count: int) -> Iterator[Planted]:
    """Yield login names made from Faker names, each after a key that carries one."""
    rng, faker = random.Random(seed), Faker("en_US")
    faker.seed_instance(seed)
    for _ in range(count):
        user, carrier = names.login(faker.name(), rng), rng.choice(names.USER_KEYS)
        yield Planted(
            "username",
            FIELD,
            carrier,
            carrier.format(u=user),
            planted_value("username", user, carrier.split()[0]),
        )


def build_recall(seed: int, stock: int, per_form: int) -> list[Planted]:
    """Return the recall corpus: ``stock`` package sentences, ``per_form`` of each name form."""
    planted = list(_stock(seed, stock))
    for n, (form, change) in enumerate(names.FORMS.items(), start=1):
        rng = random.Random(seed + n)
        kind = form if form.startswith("@") else f"PERSON, {form}"
        planted += _refilled(seed + n, per_form, kind, lambda name, c=change, r=rng: c(name, r))
    for n, script in enumerate(names.SCRIPTS, start=len(names.FORMS) + 1):
        planted += _refilled(
            seed + n, per_form, f"PERSON, {script}", names.script_maker(script, seed + n)
        )
    return planted + list(_logins(seed, per_form))
