"""Privacy for LearningSamples: opt-out globs, then offline PII and secret anonymization.

Nothing here touches the network: recognizers are regex/phonenumbers based, the NLP engine
is a no-op unless ``ner=True`` (spaCy ``en_core_web_sm`` must then be installed), email
domains are validated with tldextract's bundled public-suffix snapshot, and detect-secrets
plugins are called in-process without their verification step. PRIVACY.md lists every path.
"""

from streams.privacy.config import (
    DEFAULT_ENTITIES,
    NER_ENTITIES,
    PATTERN_ENTITIES,
    Operator,
    PrivacyConfig,
    privacy_config,
)
from streams.privacy.idkeys import is_wellformed_id
from streams.privacy.optout import OPTED_OUT, PATH_FIELDS, strip_opted_out
from streams.privacy.pii import CACHE_SIZE, Anonymizer, build_anonymizer
from streams.privacy.pipeline import PAYLOAD_SECTIONS, apply_privacy
from streams.privacy.recognizers import NER_INSTALL_HINT, OfflineEmailRecognizer
from streams.privacy.secrets import SECRET_ENTITIES, find_secrets

__all__ = [
    "CACHE_SIZE",
    "DEFAULT_ENTITIES",
    "NER_ENTITIES",
    "NER_INSTALL_HINT",
    "OPTED_OUT",
    "PATTERN_ENTITIES",
    "PATH_FIELDS",
    "PAYLOAD_SECTIONS",
    "SECRET_ENTITIES",
    "Anonymizer",
    "OfflineEmailRecognizer",
    "Operator",
    "PrivacyConfig",
    "apply_privacy",
    "build_anonymizer",
    "find_secrets",
    "is_wellformed_id",
    "privacy_config",
    "strip_opted_out",
]
