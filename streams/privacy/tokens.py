"""Find vendor tokens by their prefixes and credentials by the names they are assigned to.

detect-secrets knows many vendors but misses project-scoped and newer formats (``sk-proj-``,
``github_pat_``), and its keyword plugin reads a fixed list of names: ``REDIS_TOKEN=…`` and
``APP_KEY: …`` pass it. The patterns here close those gaps; ``secrets.find_secrets`` merges
their spans with the plugins'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["GATE_WORDS", "token_spans"]

#: (entity, pattern); the span is the ``value`` group when the pattern has one.
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (entity, re.compile(rx))
    for entity, rx in (
        ("OPENAI_KEY", r"(?<![\w-])sk-(?:[a-z]+-)?(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}"),
        ("GITHUB_TOKEN", r"(?<![\w])(?:gh[oprsu]_[A-Za-z0-9]{30,}|github_pat_\w{22,})"),
        ("GITLAB_TOKEN", r"(?<![\w-])gl(?:pat|dt|rt|ptt|cbt)-[\w-]{20,}"),
        ("SLACK_TOKEN", r"(?<![\w-])xox[abeoprs]-[A-Za-z0-9-]{10,}"),
        ("STRIPE_KEY", r"(?<![\w])(?:[spr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_\w{16,})"),
        ("GCP_API_KEY", r"(?<![\w-])AIza[\w-]{35}"),
        ("HUGGINGFACE_TOKEN", r"(?<![\w-])hf_[A-Za-z0-9]{30,}"),
        ("NPM_TOKEN", r"(?<![\w-])npm_[A-Za-z0-9]{36}"),
        ("JWT", r"(?<![\w-])eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*"),
        ("AWS_ACCESS_KEY", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
        # the 40-character secret written beside its key id, on the same line
        (
            "AWS_ACCESS_KEY",
            r"(?:AKIA|ASIA)[A-Z0-9]{16}[^\n]{1,60}?(?<![A-Za-z0-9/+])"
            r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        ),
        # scheme://user:password@host, whatever characters the password holds
        ("BASIC_AUTH_PASSWORD", r"://[^\s:/@]+:(?P<value>[^\s@/]+)@"),
        # NAME_PASSWORD=…, api_key: "…", --db-password=…: any name ending in a credential
        # word; an upper-case name ending in _KEY too. Type hints and calls are not values.
        (
            "PASSWORD",
            r"(?<![\w-])(?:[\w.-]*?(?i:pass(?:word|wd)?|pwd|secret|token|credentials?|"
            r"(?:api|secret|access|private|auth|client|signing|encryption|master)[_-]?key)"
            r"|[A-Z][A-Z0-9_]*_KEY)[\"']?\s*[:=]\s*"
            r"(?!(?:str|int|bytes|bool|None|Optional|SecretStr)\b)(?![\w.]*\()"
            r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s,;'\"]+)",
        ),
        # signing secret 'rtHVY+0tm…': a quoted run of key characters, both cases and digits
        # mixed, right after a credential word, whatever its entropy score.
        (
            "HIGH_ENTROPY_SECRET",
            r"(?i:secret|token|password|passwd|pwd|key|credentials?)(?:\s+(?:is|was|of))?\s*"
            r"[\"'](?P<value>(?=[^\"'\s]*\d)(?=[^\"'\s]*[a-z])(?=[^\"'\s]*[A-Z])"
            r"[A-Za-z0-9+/=_.~-]{16,})[\"']",
        ),
        # smtp_key = '…', "vault_key": "…": a lower-case *_key names a cache or sort key as
        # often as a credential, so its value must look like one (a symbol, or mixed case
        # and digits, 8+ characters).
        (
            "PASSWORD",
            r"(?<![\w-])[A-Za-z][\w.-]*_key[\"']?\s*[:=]\s*[\"']?"
            r"(?P<value>(?=[^\s,;'\"]*[!#$%&*+=?@^~]|(?=[^\s,;'\"]*[a-z])(?=[^\s,;'\"]*[A-Z])"
            r"[^\s,;'\"]*\d)[^\s,;'\"]{8,})",
        ),
    )
)
#: Words the secret gate must let through for the patterns above (lower-cased text).
GATE_WORDS = (
    r"sk-|gh[oprsu]_|github_pat_|gl[a-z]+-|xox|_live_|_test_|whsec_|aiza|hf_|npm_|eyj|"
    r"pass|pwd|secret|token|key|credential"
)


def token_spans(line: str) -> Iterator[tuple[str, int, int]]:
    """Yield (entity, start, end) of every prefixed token and credential value in a line."""
    for entity, regex in _TOKENS:
        for match in regex.finditer(line):
            if "value" not in regex.groupindex:
                yield entity, *match.span()
                continue
            start, end = match.span("value")
            if match.group("value")[0] in "\"'":  # the quotes stay: only the value goes
                start, end = start + 1, end - 1
            if line[start:end].strip("*"):  # an already masked value is not a secret
                yield entity, start, end
