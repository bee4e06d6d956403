"""Privacy configuration: what to drop, what counts as PII and how to replace it."""

from __future__ import annotations

from dataclasses import dataclass, field

from learnstream.streams.config.settings import (
    DEFAULT_PHONE_REGIONS,
    DEFAULT_PII_ENTITIES,
    PiiOperator,
    Settings,
)
from learnstream.streams.privacy.secrets import SECRET_ENTITIES

__all__ = [
    "DENY_ENTITY",
    "privacy_config",
    "DEFAULT_ENTITIES",
    "NER_ENTITIES",
    "PATTERN_ENTITIES",
    "REGIONAL_ENTITIES",
    "Operator",
    "PrivacyConfig",
]

#: The entity a user's deny list masks as (streams/privacy/lists.py).
DENY_ENTITY = "DENY_LIST"

Operator = PiiOperator

#: Default entity set: the pattern entities the settings enable by default.
DEFAULT_ENTITIES: tuple[str, ...] = DEFAULT_PII_ENTITIES
#: National ids of regions that are not default phone regions, found by default too: each
#: has a check digit or letter (streams/privacy/checksums.py) and a shape of its own.
REGIONAL_ENTITIES: tuple[str, ...] = ("ES_NIF", "IT_FISCAL_CODE", "BR_CPF", "CA_SIN")
#: Entities detected by offline pattern recognizers (no NLP model). ``URL`` is supported but
#: not a default: agent samples are full of harmless links, and only scheme URLs are matched.
PATTERN_ENTITIES: tuple[str, ...] = (*DEFAULT_ENTITIES, "URL")
#: Entities spaCy's NER adds (``ner=True``, the default).
NER_ENTITIES: tuple[str, ...] = ("PERSON", "LOCATION")
_OPERATORS: frozenset[str] = frozenset({"replace", "mask", "hash", "redact"})


@dataclass(frozen=True)
class PrivacyConfig:
    """Configure opt-out globs and PII anonymization (validated on construction).

    ``hash_salt`` is a secret; it must be non-empty when ``operator == "hash"``.
    ``score_threshold`` drops weak pattern hits (e.g. any 9-digit number as US_SSN, 0.05).
    ``detect_secrets`` adds the secret detector (streams/privacy/secrets.py); like every
    entity it is off when ``anonymize_pii`` is. ``phone_regions`` are the regions whose
    national formats PHONE_NUMBER finds (``+CC`` numbers are found with any of them).
    ``allow`` and ``deny`` are words or ``re:PATTERN`` items never / always masked (lists.py).
    """

    anonymize_pii: bool = True
    opt_out_patterns: tuple[str, ...] = ("*.secret", "*.env")
    entities: tuple[str, ...] = DEFAULT_ENTITIES
    operator: Operator = "replace"
    hash_salt: str = field(default="", repr=False)  # a secret: never in a repr, log or error
    ner: bool = True
    score_threshold: float = 0.3
    detect_secrets: bool = True
    phone_regions: tuple[str, ...] = DEFAULT_PHONE_REGIONS
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Normalize sequences to tuples and reject inconsistent settings."""
        object.__setattr__(self, "opt_out_patterns", tuple(self.opt_out_patterns))
        object.__setattr__(self, "entities", tuple(dict.fromkeys(self.entities)))
        object.__setattr__(self, "phone_regions", tuple(dict.fromkeys(self.phone_regions)))
        object.__setattr__(self, "allow", tuple(self.allow))
        object.__setattr__(self, "deny", tuple(self.deny))
        if not self.phone_regions:
            raise ValueError("phone_regions must name a region; +CC numbers need one too")
        if self.operator not in _OPERATORS:
            raise ValueError(f"unknown operator {self.operator!r}; use one of {sorted(_OPERATORS)}")
        if self.operator == "hash" and not self.hash_salt:
            raise ValueError("operator 'hash' requires a non-empty secret hash_salt")
        allowed = PATTERN_ENTITIES + (NER_ENTITIES if self.ner else ())
        unknown = [e for e in self.entities if e not in allowed]
        if unknown:
            raise ValueError(f"unsupported entities {unknown}; supported: {list(allowed)}")

    @property
    def analyzed_entities(self) -> tuple[str, ...]:
        """Return the entities to detect: configured ones plus NER entities when enabled."""
        extra = tuple(e for e in NER_ENTITIES if self.ner and e not in self.entities)
        return self.entities + extra

    @property
    def reported_entities(self) -> tuple[str, ...]:
        """Return every entity name a sample's counts can hold (the metric's label values)."""
        secrets = SECRET_ENTITIES if self.anonymize_pii and self.detect_secrets else ()
        denied = (DENY_ENTITY,) if self.anonymize_pii and self.deny else ()
        return self.analyzed_entities + secrets + denied


def privacy_config(settings: Settings) -> PrivacyConfig:
    """Return the privacy configuration the settings describe."""
    return PrivacyConfig(
        anonymize_pii=settings.learning.anonymize_pii,
        opt_out_patterns=settings.learning.opt_out_patterns,
        entities=settings.privacy.entities,
        operator=settings.privacy.operator,
        hash_salt=settings.privacy.hash_salt.get_secret_value(),
        ner=settings.privacy.ner,
        detect_secrets=settings.privacy.detect_secrets,
        phone_regions=settings.privacy.phone_regions,
        allow=settings.privacy.allow,
        deny=settings.privacy.deny,
    )
