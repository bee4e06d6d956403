"""Find secrets (cloud keys, tokens, private keys, passwords) in text with detect-secrets.

The library's plugin classes are instantiated here and their ``analyze_string`` called
directly, line by line: no baseline, no files, no ``transient_settings`` (global state), and
never ``verify`` (the only method that goes to the network). ``analyze_string`` yields the
secret *values*; their spans are every place each value occurs in its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    DENYLIST,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    KeywordDetector,
)
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from learnstream.streams.privacy.credentials import (
    CREDENTIAL_ENTITIES,
    CREDENTIAL_GATE,
    credential_spans,
)
from learnstream.streams.privacy.tokens import GATE_WORDS, token_spans

__all__ = ["SECRET_ENTITIES", "Span", "find_secrets", "may_hold_secret"]

Span = tuple[str, int, int]  # (entity, start, end)


class GcpApiKeyDetector(RegexBasedDetector):
    """Scan for Google Cloud API keys (detect-secrets 1.5 has no GCP plugin)."""

    secret_type = "GCP API Key"  # noqa: S105 - a label, not a password
    denylist = (re.compile(r"AIza[0-9A-Za-z_\-]{35}"),)


#: Plugin -> entity name (the metric label and the ``<ENTITY>`` of the replace operator).
#: Left out on purpose: HexHighEntropyString (flags every quoted commit hash), IPPublic
#: (Presidio's IP_ADDRESS), Artifactory (its password shape is any "APx..." CamelCase word).
_PLUGINS: tuple[tuple[BasePlugin, str], ...] = (
    (AWSKeyDetector(), "AWS_ACCESS_KEY"),
    (AzureStorageKeyDetector(), "AZURE_STORAGE_KEY"),
    (GcpApiKeyDetector(), "GCP_API_KEY"),
    (IbmCloudIamDetector(), "IBM_CLOUD_KEY"),
    (IbmCosHmacDetector(), "IBM_CLOUD_KEY"),
    (SoftlayerDetector(), "IBM_CLOUD_KEY"),
    (CloudantDetector(), "CLOUDANT_KEY"),
    (GitHubTokenDetector(), "GITHUB_TOKEN"),
    (GitLabTokenDetector(), "GITLAB_TOKEN"),
    (SlackDetector(), "SLACK_TOKEN"),
    (StripeDetector(), "STRIPE_KEY"),
    (TwilioKeyDetector(), "TWILIO_KEY"),
    (SendGridDetector(), "SENDGRID_KEY"),
    (NpmDetector(), "NPM_TOKEN"),
    (OpenAIDetector(), "OPENAI_KEY"),
    (PypiTokenDetector(), "PYPI_TOKEN"),
    (MailchimpDetector(), "MAILCHIMP_KEY"),
    (DiscordBotTokenDetector(), "DISCORD_TOKEN"),
    (TelegramBotTokenDetector(), "TELEGRAM_TOKEN"),
    (SquareOAuthDetector(), "SQUARE_OAUTH_SECRET"),
    (JwtTokenDetector(), "JWT"),
    (BasicAuthDetector(), "BASIC_AUTH_PASSWORD"),
)
#: Entities only streams/privacy/tokens.py finds.
_TOKEN_ENTITIES = ("HUGGINGFACE_TOKEN",)
_KEYWORD = KeywordDetector()
_KEYWORD_GROUPS = (CONFIG_DENYLIST_REGEX_TO_GROUP, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
_ENTROPY = Base64HighEntropyString()
#: A private key block: from its header line to its footer, or to the end of the text.
_KEY_BLOCK = re.compile(
    r"(?:-----)?BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?.*?(?:END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?"
    r"(?:-----)?|\Z)|PuTTY-User-Key-File-\d.*\Z",
    re.DOTALL,
)
#: A line as ``str.splitlines`` cuts them (keyword values run to the end of their line).
_LINE = re.compile(r"[^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]+")
#: Long lines are scanned in windows of this many characters, overlapping by _OVERLAP.
_WINDOW, _OVERLAP = 8192, 2048
#: A group shorter than this, or at the start of its match, is a prefix (see _secret_span).
_MIN_VALUE = 8
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-+/=.]+")
SECRET_ENTITIES: tuple[str, ...] = (
    *dict.fromkeys(entity for _, entity in _PLUGINS),
    *_TOKEN_ENTITIES,
    *CREDENTIAL_ENTITIES,
    "PRIVATE_KEY",
    "PASSWORD",
    "HIGH_ENTROPY_SECRET",
)

#: What every plugin needs to see first (a necessary condition; tests/unit/test_secrets.py
#: checks gated results equal ungated ones): a long token (cloud keys, vendor tokens, the 44+
#: character IBM keys, high-entropy strings), a JWT header, a Slack prefix, a key block, a
#: credential URL, npm's ``_authToken``, a password keyword, or what streams/privacy/tokens.py
#: needs (a token prefix or a credential word in an assignment's name) and credentials.py (a
#: header, a curl command, "pw").
_GATE = re.compile(
    r"[a-z0-9+/=_\-]{16}|eyj|xox[a-z]-|private key|putty|://\S*@|_authtoken|"
    + "|".join(DENYLIST)
    + "|"
    + GATE_WORDS
    + "|"
    + CREDENTIAL_GATE
)


def may_hold_secret(text: str) -> bool:
    """Tell cheaply whether any plugin could find a secret in text.

    The gate reads lower-cased text (one case-sensitive pass is ~8x faster than IGNORECASE),
    with the two letters IGNORECASE also equates to ASCII ones that ``lower`` keeps apart.
    """
    return _GATE.search(text.lower().replace("ı", "i").replace("ſ", "s")) is not None


def find_secrets(text: str) -> list[Span]:
    """Return the spans of the secrets in text: sorted, overlaps merged."""
    if not may_hold_secret(text):
        return []
    spans = [("PRIVATE_KEY", m.start(), m.end()) for m in _KEY_BLOCK.finditer(text)]
    for at, piece in _pieces(text):
        spans.extend((entity, at + s, at + e) for entity, s, e in _in_line(piece))
    return _merged([(entity, start, _token_end(text, end)) for entity, start, end in spans])


def _pieces(text: str) -> Iterator[tuple[int, str]]:
    """Yield (offset, piece): each line, long lines in overlapping windows.

    Some plugin patterns backtrack quadratically on long runs ("eyJeyJ...", a 1 MB line);
    a window bounds that cost. A secret cut by a window's end is found whole in the next
    window (they overlap by more than any token's prefix) and widened to its token's end.
    """
    for line in _LINE.finditer(text):
        start, end = line.span()
        for at in range(start, max(end - _OVERLAP, start + 1), _WINDOW - _OVERLAP):
            yield at, text[at : min(at + _WINDOW, end)]


def _token_end(text: str, end: int) -> int:
    """Return where the token that a span ends in ends (a window may have cut it)."""
    tail = _TOKEN_TAIL.match(text, end) if end and _TOKEN_TAIL.match(text, end - 1) else None
    return tail.end() if tail else end


def _in_line(line: str) -> Iterator[Span]:
    """Yield the spans of every plugin hit in one line."""
    if not may_hold_secret(line):
        return
    for plugin, entity in _PLUGINS:
        for start, end in _guarded(line, _regex_hits, plugin, line):
            yield entity, start, end
    for group in _KEYWORD_GROUPS:
        for start, end in _guarded(line, _keyword_hits, group, line):
            yield "PASSWORD", start, end
    for start, end in _guarded(line, _entropy_hits, line):
        yield "HIGH_ENTROPY_SECRET", start, end
    yield from token_spans(line)
    yield from credential_spans(line)


def _guarded(
    line: str, hits: Callable[..., Iterable[tuple[int, int]]], *args: Any
) -> list[tuple[int, int]]:
    """Return hits(*args); the whole line if the plugin fails on it.

    The JWT plugin parses what it finds as JSON, which can raise (RecursionError on a deep
    crafted header): failing closed keeps a malformed token from passing.
    """
    try:
        return list(hits(*args))
    except Exception:  # noqa: BLE001 - a plugin failure must redact, not crash the worker
        return [(0, len(line))]


def _regex_hits(plugin: RegexBasedDetector, line: str) -> Iterator[tuple[int, int]]:
    """Yield the spans of the plugin's regex matches that its own filters accept."""
    accepted = set(plugin.analyze_string(line))
    if not accepted:
        return
    for regex in plugin.denylist:
        for match in regex.finditer(line):
            if accepted.intersection((match.group(), *match.groups())):
                yield _secret_span(match, line)


def _secret_span(match: re.Match[str], line: str) -> tuple[int, int]:
    """Return where the secret of a match is: its value group, or the whole token.

    A plugin's group is its secret value (a password after ``user:``, a 40-character AWS
    secret after ``aws_key=``) unless it opens the match or is short (GitHub's ``ghp``,
    GitLab's ``glsoat`` prefixes): then the whole match, widened to the end of its token
    (the JWT pattern stops before the signature), is taken.
    """
    values = [
        i
        for i in range(1, match.re.groups + 1)
        if len(match.group(i) or "") >= _MIN_VALUE and match.start(i) > match.start()
    ]
    if values:
        return match.span(max(values, key=lambda i: len(match.group(i))))
    tail = _TOKEN_TAIL.match(line, match.end())
    return match.start(), tail.end() if tail else match.end()


def _keyword_hits(group: dict[re.Pattern[str], int], line: str) -> Iterator[tuple[int, int]]:
    """Yield where the values of ``password=...``-like assignments are."""
    for regex, number in group.items():
        for match in regex.finditer(line):
            if match.group(number):
                yield match.span(number)


def _entropy_hits(line: str) -> Iterator[tuple[int, int]]:
    """Yield the quoted strings random enough to be keys (detect-secrets' limit 4.5)."""
    for match in _ENTROPY.regex.finditer(line):
        if _ENTROPY.calculate_shannon_entropy(match.group(2)) > _ENTROPY.entropy_limit:
            yield match.span(2)


def _merged(spans: list[Span]) -> list[Span]:
    """Merge overlapping spans; the earliest (then longest, then first found) names the union."""
    out: list[Span] = []
    for entity, start, end in sorted(spans, key=lambda span: (span[1], -span[2])):
        if out and start < out[-1][2]:
            out[-1] = (out[-1][0], out[-1][1], max(end, out[-1][2]))
        else:
            out.append((entity, start, end))
    return out
