"""Privacy for LearningSamples: opt-out globs, then offline PII and secret anonymization.

Nothing here touches the network: recognizers are regex/phonenumbers based with check
digits and keywords, names and places come from spaCy's small English model (a package
dependency, loaded with its NER component only), and detect-secrets plugins are called
in-process without their verification step. PRIVACY.md lists every path.

The package imports nothing itself: import from its modules (``learnstream.streams.privacy.pii``,
``.config``, ...), so a command that only reads the configuration does not load Presidio
and spaCy (about 0.8 s of every CLI start).
"""
