"""Privacy for LearningSamples: opt-out globs, then offline PII and secret anonymization.

Nothing here touches the network: recognizers are regex/phonenumbers based with check
digits and keywords, names and places come from spaCy's small English model (a package
dependency, loaded with its NER component only), and detect-secrets plugins are called
in-process without their verification step. PRIVACY.md lists every path.
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
from streams.privacy.ner import NER_INSTALL_HINT
from streams.privacy.optout import OPTED_OUT, PATH_FIELDS, strip_opted_out
from streams.privacy.patterns import AnyDomainEmailRecognizer
from streams.privacy.pii import CACHE_SIZE, Anonymizer, build_anonymizer
from streams.privacy.pipeline import PAYLOAD_SECTIONS, apply_privacy
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
    "AnyDomainEmailRecognizer",
    "Operator",
    "PrivacyConfig",
    "apply_privacy",
    "build_anonymizer",
    "find_secrets",
    "is_wellformed_id",
    "privacy_config",
    "strip_opted_out",
]
