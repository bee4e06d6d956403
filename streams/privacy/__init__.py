"""Privacy for LearningSamples: opt-out globs, then offline Presidio PII anonymization.

Nothing here touches the network: recognizers are regex/phonenumbers based, the NLP engine
is a no-op unless ``ner=True`` (spaCy ``en_core_web_sm`` must then be installed), and email
domains are validated with tldextract's bundled public-suffix snapshot.
"""

from streams.privacy.config import (
    DEFAULT_ENTITIES,
    NER_ENTITIES,
    PATTERN_ENTITIES,
    Operator,
    PrivacyConfig,
)
from streams.privacy.optout import strip_opted_out
from streams.privacy.pii import CACHE_SIZE, Anonymizer, build_anonymizer
from streams.privacy.pipeline import PAYLOAD_SECTIONS, apply_privacy
from streams.privacy.recognizers import NER_INSTALL_HINT, OfflineEmailRecognizer

__all__ = [
    "CACHE_SIZE",
    "DEFAULT_ENTITIES",
    "NER_ENTITIES",
    "NER_INSTALL_HINT",
    "PATTERN_ENTITIES",
    "PAYLOAD_SECTIONS",
    "Anonymizer",
    "OfflineEmailRecognizer",
    "Operator",
    "PrivacyConfig",
    "apply_privacy",
    "build_anonymizer",
    "strip_opted_out",
]
