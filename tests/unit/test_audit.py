"""The audit walker: JSON paths and entity kinds, never the matched text; replacements pass."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from learnstream.streams.privacy.audit import (
    AuditReport,
    Finding,
    detectors,
    scan_input,
    scan_sample,
)
from learnstream.streams.privacy.config import PrivacyConfig

EMAIL = "dana.audit@example.org"
UUID = "550e8400-e29b-41d4-a716-446655440000"


def _fake(text: str) -> Iterable[str]:
    """Find an "email" wherever an @ is, a "secret" wherever 'pw=' is."""
    return [kind for mark, kind in (("@", "EMAIL_ADDRESS"), ("pw=", "PASSWORD")) if mark in text]


@pytest.fixture(scope="module")
def readings():
    """The worker's two readings (free text, a person key's value): one anonymizer built."""
    return detectors(PrivacyConfig())


@pytest.fixture(scope="module")
def real(readings):
    return readings[0]


def _sample(**parts):
    base = {
        "sample_id": "s-1",
        "sample_family": "intent_resolution",
        "created_at": "2026-11-24T07:42:23.123+00:00",
        "input": {},
        "output": {},
        "meta": {"plan_id": UUID},
    }
    return {**base, **parts}


def test_paths_name_keys_and_list_indexes():
    doc = {"plan": {"steps": [{"title": "ok"}, {"title": f"mail {EMAIL}", "note": "pw=x"}]}}
    found = scan_input("mplp.plans/2/17", doc, _fake)
    assert found == [
        Finding("mplp.plans/2/17", "$.plan.steps[1].title", "EMAIL_ADDRESS"),
        Finding("mplp.plans/2/17", "$.plan.steps[1].note", "PASSWORD"),
    ]
    assert scan_input("t/0/0", f"just {EMAIL}", _fake)[0].path == "$"


def test_wellformed_ids_under_id_keys_are_skipped_others_are_read():
    doc = {"plan_id": UUID, "owner_id": EMAIL, "ids": {"user_ids": [UUID, EMAIL]}, "id": "a@b"}
    paths = [f.path for f in scan_input("t/0/0", doc, _fake)]
    assert paths == ["$.owner_id", "$.ids.user_ids[1]", "$.id"]


def test_a_sample_is_read_where_the_anonymizer_writes():
    sample = _sample(
        sample_id=f"id {EMAIL}",  # built by us, not read (the anonymizer copies it too)
        input={"text": EMAIL},
        state={"s": [EMAIL]},
        output={"o": EMAIL},
        feedback={"source": EMAIL, "details": {"d": EMAIL}},
        meta={"project_name": EMAIL, "ambiguity_flags": [EMAIL], "id_refs": {"x": UUID}},
    )
    paths = [f.path for f in scan_sample(sample, _fake)]
    assert paths == [
        "$.input.text",
        "$.state.s[0]",
        "$.output.o",
        "$.feedback.details.d",
        "$.meta.ambiguity_flags[0]",
    ]
    assert {f.record for f in scan_sample(sample, _fake)} == {f"id {EMAIL}"}


def test_real_detector_finds_kinds_and_passes_replacements(real):
    sample = _sample(
        input={"text": "Fix the login error reported by <EMAIL_ADDRESS>, call <PHONE_NUMBER>"},
        output={"steps": ["Block <IP_ADDRESS>", "card <CREDIT_CARD>", "<IBAN_CODE> <US_SSN>"]},
    )
    assert scan_sample(sample, real) == []
    planted = {
        "a": f"mail {EMAIL}",
        "b": "call +1 415-555-0132",
        "c": "card 4111 1111 1111 1111",
        "d": "from 10.20.30.40",
        "e": "IBAN DE89 3704 0044 0532 0130 00",
        "f": "SSN 219-09-9999",
        "g": "key AKIA" + "QLEAKQLEAKQLEAK7",
    }
    found = {f.path: f.entity for f in scan_input("t/0/5", planted, real)}
    assert found == {
        "$.a": "EMAIL_ADDRESS",
        "$.b": "PHONE_NUMBER",
        "$.c": "CREDIT_CARD",
        "$.d": "IP_ADDRESS",
        "$.e": "IBAN_CODE",
        "$.f": "US_SSN",
        "$.g": "AWS_ACCESS_KEY",
    }


def test_a_lone_name_under_a_person_key_is_a_finding_as_the_worker_masks_it(readings):
    text, person = readings
    doc = {"decided_by": "Dana", "title": "Dana", "reviewers": ["Ines Okafor"], "by": "Deploy"}
    found = {f.path: f.entity for f in scan_input("mplp.plan_approved/0/1", doc, text, person)}
    # "Dana" alone is as often "Deploy" in free text: only the person key makes it a name
    assert found == {"$.decided_by": "PERSON", "$.reviewers[0]": "PERSON"}
    sample = _sample(input={"decided_by": "Dana", "note": "Dana"})
    assert [f.path for f in scan_sample(sample, text, person)] == ["$.input.decided_by"]
    plain = [f.path for f in scan_input("t/0/0", doc, text)]  # free text everywhere
    assert "$.decided_by" not in plain
    assert "$.reviewers[0]" in plain


def test_no_matched_text_in_findings_or_summary(real):
    doc = {"text": f"write to {EMAIL} or call +1 415-555-0132"}
    report = AuditReport("mplp.plans", records=3, findings=scan_input("mplp.plans/0/9", doc, real))
    shown = [report.summary(), *(f.line() for f in report.findings), repr(report.findings)]
    assert not any(EMAIL in text or "415-555" in text for text in shown)
    assert report.summary() == (
        "PII found: 2 findings (EMAIL_ADDRESS 1, PHONE_NUMBER 1) in 1 of 3 records of mplp.plans"
    )
    assert report.findings[0].line() == "EMAIL_ADDRESS at mplp.plans/0/9 $.text"


def test_summary_without_findings_counts_undecodable():
    assert AuditReport("s", records=5).summary() == "no PII found in 5 records of s"
    report = AuditReport("s", records=5, undecodable=2)
    assert report.summary() == "no PII found in 5 records of s; 2 undecodable"


def _record(value: bytes | None, offset: int = 0):
    from aiokafka import ConsumerRecord

    return ConsumerRecord("mplp.plans", 1, offset, 0, 0, b"k", value, None, 0, 0, [])


async def test_audit_topic_scans_inputs_and_fails_an_incomplete_read(monkeypatch):
    import learnstream.agents.cli.audit as cli_audit
    from learnstream.streams.config.usererrors import UserError

    records = [_record(b'{"a": {"b": "x@y"}}', 3), _record(b"\xff not json x@y", 4)]
    idle = False

    async def fake_range(bootstrap, topic, since, until, *, progress):
        for record in records:
            yield record
        progress.idle, progress.left, progress.partitions = idle, 7, 1

    monkeypatch.setattr(cli_audit, "read_range", fake_range)
    report = await cli_audit.audit_topic(
        "b:9092", "mplp.plans", None, None, cli_audit._inputs(_fake, _fake)
    )
    assert report.records == 2
    assert [f.line() for f in report.findings] == [
        "EMAIL_ADDRESS at mplp.plans/1/3 $.a.b",
        "EMAIL_ADDRESS at mplp.plans/1/4 $",
    ]
    idle = True
    with pytest.raises(UserError, match="7 offsets left.*the audit is incomplete"):
        await cli_audit.audit_topic(
            "b:9092", "mplp.plans", None, None, cli_audit._inputs(_fake, _fake)
        )


def test_sample_scanner_counts_undecodable_and_reads_each_sample_once():
    import json

    from learnstream.agents.cli.audit import _samples

    report = AuditReport("samples")
    scan = _samples(_fake, _fake)
    sample = json.dumps(_sample(input={"t": EMAIL})).encode()
    found = [scan(_record(data), report) for data in (sample, sample, b"\xc3\x01garbage", None)]
    assert [len(f) for f in found] == [1, 0, 0, 0]
    assert report.undecodable == 2


#: A made-up name (no list holds it): only the NER model can find it.
NAMED = "Refund the duplicate charge for Quillon Brevatt before the deploy window."


@pytest.mark.parametrize(
    ("setting", "flag", "finds"),
    [
        (None, None, True),  # NER is on by default, in the worker and so in the audit
        ("false", None, False),  # the audit follows the worker's opt-out
        ("false", True, True),  # --ner
        (None, False, False),  # --no-ner
    ],
)
def test_the_audit_finds_names_as_the_worker_does_unless_told(monkeypatch, setting, flag, finds):
    from learnstream.agents.cli.audit import _detectors
    from learnstream.streams.config.settings import Settings

    monkeypatch.delenv("LEARNSTREAM_PRIVACY__NER", raising=False)
    if setting is not None:
        monkeypatch.setenv("LEARNSTREAM_PRIVACY__NER", setting)
    found = list(_detectors(Settings(), flag)[0](NAMED))
    assert ("PERSON" in found) is finds, found


def test_audit_help_says_where_the_ner_default_comes_from():
    from click.testing import CliRunner

    from learnstream.agents.cli.audit import audit

    shown = CliRunner().invoke(audit, ["--help"])
    assert shown.exit_code == 0
    assert "--ner / --no-ner" in shown.output
    assert "LEARNSTREAM_PRIVACY__NER" in shown.output
