"""Secrets of every kind PRIVACY.md lists, in their vendors' published shapes.

Each token kind comes bare half the time and after a keyword ("token", "api key:") the
other half; the variant says which. Kinds that detect-secrets finds only by a keyword (IBM
Cloud, Cloudant, passwords) always have one.
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable

from benchmarks.recall.source import Source, Value

__all__ = [
    "TOKENS",
    "assignment",
    "aws_pair",
    "bare_entropy",
    "high_entropy",
    "keyword_secret",
    "private_key",
    "url_credentials",
]

_B64 = string.ascii_letters + string.digits + "+/"
_URLSAFE = string.ascii_letters + string.digits + "-_"
_LOWER = string.ascii_lowercase + string.digits
_HEX = "0123456789abcdef"
_KEYWORDS = ("token", "api key:", "key", "secret", "auth token", "credential")


def _b64url(obj: object) -> str:
    text = json.dumps(obj, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _jwt(src: Source) -> str:
    head = _b64url({"alg": src.rng.choice(("HS256", "RS256")), "typ": "JWT"})
    body = _b64url({"sub": src.digits(8), "iat": 1_760_000_000 + src.rng.randint(0, 10**7)})
    return f"{head}.{body}.{src.chars(_URLSAFE, 43)}"


#: Kind -> how its token is made (vendor prefixes and lengths as the vendors publish them).
_SHAPES: dict[str, Callable[[Source], str]] = {
    "openai_key": lambda s: (
        s.rng.choice(("sk-", "sk-proj-", "sk-svcacct-")) + s.alnum(20) + "T3BlbkFJ" + s.alnum(20)
    ),
    "github_token": lambda s: s.rng.choice(("ghp_", "gho_", "ghs_", "ghu_")) + s.alnum(36),
    "gitlab_token": lambda s: s.rng.choice(("glpat-", "gldt-", "glrt-")) + s.chars(_URLSAFE, 20),
    "slack_token": lambda s: (
        f"{s.rng.choice(('xoxb', 'xoxp', 'xoxa'))}-{s.digits(11)}-"
        f"{s.digits(12)}-{s.chars(_LOWER, 24)}"
    ),
    "stripe_key": lambda s: s.rng.choice(("sk_live_", "rk_live_")) + s.alnum(24),
    "sendgrid_key": lambda s: f"SG.{s.chars(_URLSAFE, 22)}.{s.chars(_URLSAFE, 43)}",
    "npm_token": lambda s: "npm_" + s.alnum(36),
    "pypi_token": lambda s: "pypi-AgEIcHlwaS5vcmc" + s.chars(_URLSAFE, 80),
    "twilio_key": lambda s: s.rng.choice(("AC", "SK")) + s.chars(_LOWER, 32),
    "mailchimp_key": lambda s: f"{s.chars(_HEX, 32)}-us{s.rng.randint(1, 21)}",
    "discord_token": lambda s: s.rng.choice("MNO") + f"{s.alnum(23)}.{s.alnum(6)}.{s.alnum(27)}",
    "telegram_token": lambda s: f"{s.digits(10)}:AA{s.chars(_URLSAFE, 33)}",
    "square_oauth_secret": lambda s: "sq0csp-" + s.chars(_URLSAFE, 43),
    "gcp_api_key": lambda s: "AIza" + s.chars(_URLSAFE, 35),
    "jwt": _jwt,
    "azure_storage_key": lambda s: "AccountKey=" + s.chars(_B64, 86) + "==",
}


def _token(kind: str) -> Callable[[Source], Value]:
    """Return the generator of a token kind, bare or after a keyword."""

    def make(src: Source) -> Value:
        token = _SHAPES[kind](src)
        secret = token.removeprefix("AccountKey=")
        if src.rng.random() < 0.5:
            return Value(token, (secret,), "bare")
        return Value(f"{src.rng.choice(_KEYWORDS)} {token}", (secret,), "keyword")

    make.__doc__ = f"Return a {kind} value."
    return make


TOKENS: dict[str, Callable[[Source], Value]] = {kind: _token(kind) for kind in _SHAPES}


def aws_pair(src: Source) -> Value:
    """Return an AWS access key id with its 40-character secret beside it."""
    key_id, secret = "AKIA" + src.chars(string.ascii_uppercase + "234567", 16), src.chars(_B64, 40)
    forms = {
        "bare pair": f"{key_id} {secret}",
        "slash pair": f"{key_id} / {secret}",
        "keyword": f'aws_access_key_id={key_id} aws_secret_access_key="{secret}"',
        "key id only": key_id,
    }
    form = src.rng.choice(tuple(forms))
    secrets = (key_id,) if form == "key id only" else (key_id, secret)
    return Value(forms[form], secrets, form)


_SERVICES = ("DB", "POSTGRES", "REDIS", "SMTP", "JENKINS", "GRAFANA_ADMIN", "KAFKA_SASL",
             "LDAP_BIND", "VAULT", "S3_BACKUP", "STRIPE", "SENTRY", "ORDERS_API")  # fmt: skip
_SUFFIXES = ("_PASSWORD", "_TOKEN", "_SECRET", "_KEY", "_PWD", "_API_KEY", "_PASS")
_WORDS = ("sunset", "falcon", "marble", "orchid", "harbor", "copper", "violet", "thunder")


def _password(src: Source) -> str:
    """Return a password as people pick them, or a generated one."""
    if src.rng.random() < 0.4:
        word = src.rng.choice(_WORDS).capitalize()
        return f"{word}{src.rng.choice('#!$%&*')}{src.digits(4)}"
    return src.alnum(src.rng.randint(14, 32))


def assignment(src: Source) -> Value:
    """Return a ``NAME_PASSWORD=...``-like assignment in env, YAML, JSON or code syntax."""
    name = src.rng.choice(_SERVICES) + src.rng.choice(_SUFFIXES)
    value = _password(src)
    syntaxes = {
        "env": f"{name}={value}",
        "export": f'export {name}="{value}"',
        "yaml": f"{name.lower()}: {value}",
        "json": f'"{name.lower()}": "{value}"',
        "python": f"{name.lower()} = '{value}'",
    }
    syntax = src.rng.choice(tuple(syntaxes))
    return Value(syntaxes[syntax], (value,), f"{name.rsplit('_', 1)[1]} {syntax}")


def keyword_secret(src: Source) -> Value:
    """Return an IBM Cloud, IBM COS, Softlayer or Cloudant key after its keyword."""
    forms = {
        "ibm cloud iam": lambda: ("ibm_cloud_iam_api_key=", src.chars(_URLSAFE, 44)),
        "ibm cos hmac": lambda: ("cos_hmac_secret_access_key = ", src.chars(_HEX, 48)),
        "softlayer": lambda: ("softlayer_api_key: ", src.chars(_LOWER, 64)),
        "cloudant": lambda: ("cloudant_password=", src.chars(_HEX, 64)),
    }
    form = src.rng.choice(tuple(forms))
    keyword, secret = forms[form]()
    return Value(keyword + secret, (secret,), form)


def url_credentials(src: Source) -> Value:
    """Return a URL with a user and password in it (only the password is scored)."""
    scheme = src.rng.choice(("https", "postgres", "mysql", "redis", "amqp", "mongodb", "ftp"))
    user = src.rng.choice(("deploy", "svc_orders", "admin", "ci-bot", "replicator", "backup"))
    host = src.rng.choice(("db01.corp.internal", "10.2.14.7", "mq.ops.acme.local", "example.com"))
    password = _password(src)
    return Value(f"{scheme}://{user}:{password}@{host}/app", (password,), scheme)


def private_key(src: Source) -> Value:
    """Return a PEM private key block (the base64 body lines are scored)."""
    label = src.rng.choice(
        ("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY")
    )
    lines = [src.chars(_B64, 64) for _ in range(src.rng.randint(2, 4))]
    block = "\n".join((f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"))
    return Value(block, tuple(lines), label)


def high_entropy(src: Source) -> Value:
    """Return a random base64 string quoted after a keyword (a key without a vendor shape)."""
    secret = src.chars(_B64, 40)
    keyword = src.rng.choice(("signing secret", "webhook secret", "session key", "the key is"))
    quote = src.rng.choice("\"'")
    return Value(f"{keyword} {quote}{secret}{quote}", (secret,), "quoted")


def bare_entropy(src: Source) -> Value:
    """Return a random base64 string with no keyword and no quotes."""
    secret = src.chars(_B64, src.rng.choice((32, 40, 64)))
    return Value(secret, (secret,), f"{len(secret)} chars")
