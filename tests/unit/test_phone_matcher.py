"""The phone recognizer remembers the candidates phonenumbers read as no phone, and finds
what Presidio's own phone recognizer finds (streams/privacy/numbers.py)."""

from __future__ import annotations

from presidio_analyzer.predefined_recognizers import PhoneRecognizer

from learnstream.streams.privacy.numbers import DialablePhoneRecognizer

REGIONS = ("US", "GB", "DE", "FR", "IN")

#: The same candidates in different surroundings: phonenumbers refuses a number glued to
#: letters ("abc8005001234") and reads it beside a space, so a refusal must not carry over.
TEXTS = [
    "card 4111 1111 1111 1111 on file, host 10.20.30.40",
    "abc8005001234 is a build id",
    "call 8005001234 about the outage",
    "call (800) 500-1234 or +44 20 7946 0000, not 4111 1111 1111 1111",
    "Ring 020 7946 0000 for the desk, 020 7946 0000 again for the night shift",
    "Version 2.31.0 shipped on 2024-05-01; PR 48213 reverted it",
    "ruf +49 30 901820 an",
    "abc8005001234 is a build id",
    "call 8005001234 about the outage",
]


def _spans(results: list) -> list[tuple[int, int, str]]:
    return sorted((r.start, r.end, r.analysis_explanation.textual_explanation) for r in results)


def test_it_finds_what_presidio_finds_and_keeps_finding_it_once_refusals_are_remembered() -> None:
    ours, stock = DialablePhoneRecognizer(REGIONS), PhoneRecognizer(supported_regions=REGIONS)
    for _ in range(2):  # the second round reads every text with the refusals remembered
        for text in TEXTS:
            expected = _spans(stock.analyze(text, ["PHONE_NUMBER"], None))
            assert _spans(ours._matched(text, None)) == expected, text
    assert any(_spans(ours._matched(t, None)) for t in TEXTS)
    assert ours._refused.hits > 0  # the second round was told its refusals


def test_only_refusals_are_remembered_never_a_number_found() -> None:
    ours = DialablePhoneRecognizer(("US",))
    ours._matched("call (800) 500-1234", None)
    found_only = len(ours._refused)
    ours._matched("card 4111 1111 1111 1111", None)
    assert len(ours._refused) > found_only
    assert ours._matched("call (800) 500-1234", None)
