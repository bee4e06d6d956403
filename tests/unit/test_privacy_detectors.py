"""Each recognizer of the default entity set: what it finds in a sentence, and near misses.

Near misses are what agent text is full of and what must come out unchanged: UUIDs, git
hashes, versions, timestamps, Luhn-invalid numbers, dates without a birth keyword.
"""

from __future__ import annotations

from collections import Counter

import pytest

from learnstream.streams.privacy.pii import Anonymizer

FOUND = [
    ("Escalate to Dana Whitfield before the deploy window.", "Dana Whitfield", "PERSON"),
    ("Reply to dana.w@payments.corp.internal first", "dana.w@payments.corp.internal", None),
    ("Mail ops@hq.corp and wait", "ops@hq.corp", "EMAIL_ADDRESS"),
    ("Charge 2223-0031-2200-3222 again", "2223-0031-2200-3222", "CREDIT_CARD"),
    ("Charge 3530 1113 3330 0000 again", "3530 1113 3330 0000", "CREDIT_CARD"),
    ("Charge 6200000000000005 again", "6200000000000005", "CREDIT_CARD"),
    ("Charge 3056 930902 5904 again", "3056 930902 5904", "CREDIT_CARD"),
    ("NINO QQ 12 34 56 A is invalid but AB123456C is not", "AB123456C", "UK_NINO"),
    ("patient born on 8 July 1973 at noon", "8 July 1973", "DATE_OF_BIRTH"),
    ("D.O.B. 08/07/1973 per form", "08/07/1973", "DATE_OF_BIRTH"),
    ("geb. 08.07.1973 in Köln", "08.07.1973", "DATE_OF_BIRTH"),
    ("birthday March 3, 1990 noted", "March 3, 1990", "DATE_OF_BIRTH"),
    ("device 00-1A-2B-3C-4D-5E offline", "00-1A-2B-3C-4D-5E", "MAC_ADDRESS"),
    ("steuer-id 86 095 742 719 ok", "86 095 742 719", "DE_TAX_ID"),
    ("nir 255081416802538 ok", "255081416802538", "FR_NIR"),
    ("aadhaar 2345-6789-0124 ok", "2345-6789-0124", "IN_AADHAAR"),
    ("passport number 533380006 on file", "533380006", "PASSPORT"),
    ("the form shows passport no. HZXTKWNPC twice", "HZXTKWNPC", "PASSPORT"),  # German, no digit
    ("link fe80::1ff:fe23:4567:890a now", "fe80::1ff:fe23:4567:890a", "IP_ADDRESS"),
    ("ship to Drubinstraße 47, 06690 Groß-Gerau today", "Drubinstraße 47, 06690", None),
    ("ship to 87, rue de Barre, 29793 Samson today", "87, rue de Barre, 29793", None),
    ("ship to Flat 37, Bennett Mall, East Harrietport, N8 8HN", "Bennett Mall", None),
    ("use ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 now", "ghp_AbCdEfGh", "GITHUB_TOKEN"),
    ("use sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab", "sk-proj-AbCd", "OPENAI_KEY"),
    ("set REDIS_TOKEN=abc123def then", "abc123def", "PASSWORD"),
    ("set APP_KEY: 'zz9plural' then", "zz9plural", "PASSWORD"),
    ("SMTP_PWD=s3cr3t restart", "s3cr3t", "PASSWORD"),
    ("AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtn", None),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv x", "github_pat_11", None),
]


@pytest.mark.parametrize(("text", "value", "entity"), FOUND)
def test_a_value_in_a_sentence_is_found(
    anonymizer: Anonymizer, text: str, value: str, entity: str | None
) -> None:
    out, counts = anonymizer.anonymize_text(text)
    assert value not in out
    if entity is not None:
        assert counts[entity] >= 1, counts


CLEAN = [
    "plan 550e8400-e29b-41d4-a716-446655440000 failed at step 3",
    "revert 3f2a9c1d4e5b6a7980f1e2d3c4b5a69788796a5b and retry",
    "upgrade presidio to 2.2.366 and spacy to v3.8.0",
    "charge 4111 1111 1111 1112 failed: Luhn-invalid",
    "charge 180012345678906 failed: a JCB prefix, Luhn-invalid",
    "trace 180000000000002345 spans 18 digits, no 15-digit JCB",
    "order 1714567890123 shipped",
    "deploy on 2024-05-01 at 12:00:00Z",
    "created 2024-05-01T12:00:00+00:00 by the scheduler",
    "p99 120 ms after 3 retries, HTTP 500 from the gateway",
    "open src/streams/privacy/pii.py:42 and fix the gate",
    "GET https://api.example.com/v1/plans?limit=50 returned 200",
    "npm i left-pad@1.3.0",
    "def check(token: str) -> bool:",
    "cache_key = make_key(user_id)",
    "run 3 smoke tests then merge",
    "image nginx@sha256:0123456789abcdef",
    'traceback: File "app.py", line 12, in main',
    "the table has 10 000 000 rows and 250 000 columns",
    "released 2024-05-01, tagged 2024.10.15, due 01.05.2025",
    "phone home: build 2024-05-01 12:00 shipped",
    "call it with 2 4 8 16 32 as the widths",  # a cue, but single digits are no phone groups
    "the office moved 1234 5678 files",  # a label word, not beside the number
    "the passport strategy reads CALLBACKS first",  # nine capitals, but a vowel: a word
    "build HZXTKWNPC of the worker image",  # a German serial's shape, no passport word
]


@pytest.mark.parametrize("text", CLEAN)
def test_a_clean_sentence_comes_out_unchanged(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text) == (text, Counter())
