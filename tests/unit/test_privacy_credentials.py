"""Credentials and account names in the shapes real text carries them, and their near misses.

Headers, curl commands, "the db pw is …", PEM blocks, P.O. boxes, @handles and values under
user-like keys are found; prose about passwords, code at-words and type hints are kept.
"""

from __future__ import annotations

from collections import Counter

import pytest

from learnstream.streams.privacy.config import DEFAULT_ENTITIES, PrivacyConfig
from learnstream.streams.privacy.pii import Anonymizer
from learnstream.streams.privacy.secrets import SECRET_ENTITIES

FOUND = [
    (
        "Authorization: Bearer 3f2a9c1d4e5b6a7980f1e2d3c4b5a697",
        "Authorization: Bearer <BEARER_TOKEN>",
        "BEARER_TOKEN",
    ),
    (
        "-H 'authorization: bearer ya29.a0AfH6SMBx1Ab'",
        "-H 'authorization: bearer <BEARER_TOKEN>'",
        "BEARER_TOKEN",
    ),
    (
        "authorization: basic dXNlcjpwYXNzd29yZA==",
        "authorization: basic <BASIC_AUTH_PASSWORD>",
        "BASIC_AUTH_PASSWORD",
    ),
    (
        "curl -u admin:hunter2 https://api.example.com/v1",
        "curl -u <BASIC_AUTH_PASSWORD> https://api.example.com/v1",
        "BASIC_AUTH_PASSWORD",
    ),
    (
        "curl -s --user=deploy:S3cret! https://x.io",
        "curl -s --user=<BASIC_AUTH_PASSWORD> https://x.io",
        "BASIC_AUTH_PASSWORD",
    ),
    ("the db pw is hunter2 for now", "the db pw is <PASSWORD> for now", "PASSWORD"),
    ("my passwd is swordfish ok", "my passwd is <PASSWORD> ok", "PASSWORD"),
    ("the password is dragonfly", "the password is <PASSWORD>", "PASSWORD"),
    ("wifi password is butterfly for guests", "wifi password is <PASSWORD> for guests", "PASSWORD"),
    ("The PASSWORD IS Hunter2 ok", "The PASSWORD IS <PASSWORD> ok", "PASSWORD"),
    ("Password: Tr0ub4dor&3", "Password: <PASSWORD>", "PASSWORD"),
    ("mail ops@hq.corp and wait", "mail <EMAIL_ADDRESS> and wait", "EMAIL_ADDRESS"),
    ("pw: letmein ok", "pw: <PASSWORD> ok", "PASSWORD"),
    (
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKC\n-----END RSA PRIVATE KEY-----\nok",
        "key:\n<PRIVATE_KEY>\nok",
        "PRIVATE_KEY",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt\n-----END OPENSSH PRIVATE KEY-----",
        "<PRIVATE_KEY>",
        "PRIVATE_KEY",
    ),
    ("write to P.O. Box 1234 today", "write to <STREET_ADDRESS> today", "STREET_ADDRESS"),
    ("write to po box 12 today", "write to <STREET_ADDRESS> today", "STREET_ADDRESS"),
    ("ping @jdoe on the thread", "ping <USERNAME> on the thread", "USERNAME"),
    ("thanks @eric.durr for the fix.", "thanks <USERNAME> for the fix.", "USERNAME"),
    ("from @aleah.docherty's talk", "from <USERNAME>'s talk", "USERNAME"),
    ("}}@stephan_o\n}}Rite Aid", "}}<USERNAME>\n}}Rite Aid", "USERNAME"),
    ("mysql --user dana_w -p", "mysql --user <USERNAME> -p", "USERNAME"),
    ("git log --author=gina_m", "git log --author=<USERNAME>", "USERNAME"),
    ("owner=tommy.walter group=staff", "owner=<USERNAME> group=staff", "USERNAME"),
    ("User mark.perez logged in", "User <USERNAME> logged in", "USERNAME"),
    ("user anna_h was locked", "user <USERNAME> was locked", "USERNAME"),
    ("User diana72 logged out", "User <USERNAME> logged out", "USERNAME"),
    ("@dana_w please review", "<USERNAME> please review", "USERNAME"),
    ("retry with user=jdoe42 now", "retry with user=<USERNAME> now", "USERNAME"),
    ("set username: 'alice.w' now", "set username: '<USERNAME>' now", "USERNAME"),
    ("LOGIN=jsmith now", "LOGIN=<USERNAME> now", "USERNAME"),
    ("{user: jdoe, role: viewer}", "{user: <USERNAME>, role: viewer}", "USERNAME"),
    ("connect(user=j.doe)", "connect(user=<USERNAME>)", "USERNAME"),
    ("run --username j.smith now", "run --username <USERNAME> now", "USERNAME"),
    ("sudo -i -u pgadmin psql", "sudo -i -u <USERNAME> psql", "USERNAME"),
    ("ssh jdoe@build-01 'uptime'", "ssh <USERNAME>@build-01 'uptime'", "USERNAME"),
    (
        "Failed password for invalid user bob from host-7 port 22",
        "Failed password for invalid user <USERNAME> from host-7 port 22",
        "USERNAME",
    ),
    (
        "Accepted publickey for dana from host-7 port 22",
        "Accepted publickey for <USERNAME> from host-7 port 22",
        "USERNAME",
    ),
]


@pytest.mark.parametrize(("text", "expected", "entity"), FOUND)
def test_a_credential_or_account_is_replaced(
    anonymizer: Anonymizer, text: str, expected: str, entity: str
) -> None:
    assert anonymizer.anonymize_text(text) == (expected, Counter({entity: 1}))


KEPT = [
    "The password is required.",
    "the master password is derived using PBKDF2",
    "password was changed by the rotation job",
    "the password is currently stored in the vault",
    "the admin password is usually rotated weekly",
    "prepared for an 'authorization: basic ...' header.",
    "use bearer authentication for every call",
    "Amazon MSK Library in Python for SASL/OAUTHBEARER Auth",
    "docker run -u 1000:1000 image",
    "git push -u origin main",
    "npm i @types/node and @babel/core",
    "a container for `@model_validator` data",
    "mark it @property or use @pytest.fixture",
    "@dataclass(frozen=True)",
    "@my_decorator\ndef handler(event):",
    "user: str = field()",
    "user = get_user(request)",
    "user_id=42 failed",
    "the user is alice",
    "create(user=user, login=request.user)",
    "def f(user: User) -> None:",
    "user: Optional[User] = None",
    "login=root and user=admin",
    "pw = getpass()",
    'pw = input("Password: ")',
    "pw: str",
    "pip install --user requests",
    "systemctl --user restart app",
    "python -m pip install --user -r requirements.txt",
    "journalctl --user -u app.service",
    "docker run --user 1000 image",
    "use @app.route to add it",
    "see |@given| in the docs",
    "@pytest.mark.slow\ndef test_x():",
    "add @functools.lru_cache here",
    "@app.route('/health')",
    "the user config.yaml holds it",
    "User data_dir is set",
    "user data and User Guide",
    "sort -u names.txt",
    "launch --user-data-dir=/tmp/x",
]


@pytest.mark.parametrize("text", KEPT)
def test_prose_and_code_are_kept(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text) == (text, Counter())


def test_new_entities_are_metric_labels() -> None:
    """Bearer tokens count as a secret; usernames are a default pattern entity."""
    assert "BEARER_TOKEN" in SECRET_ENTITIES
    assert "USERNAME" in DEFAULT_ENTITIES
    assert {"BEARER_TOKEN", "USERNAME"} <= set(PrivacyConfig().reported_entities)
