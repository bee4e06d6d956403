"""The privacy recall benchmark's corpus is sound and its scorer counts what survives."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.recall.corpus import Corpus, Planted, build
from benchmarks.recall.kinds import KINDS
from benchmarks.recall.numbers import luhn_ok, verhoeff_ok
from benchmarks.recall.run import FIELDS, configurations, setting, worker_anonymizer
from benchmarks.recall.score import fragments, score, survivors
from benchmarks.recall.source import plain

SEED, PER_KIND, CLEAN = 11, 20, 120


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return build(SEED, PER_KIND, CLEAN)


def test_the_corpus_is_the_same_for_a_seed_and_differs_across_seeds(corpus: Corpus) -> None:
    assert build(SEED, PER_KIND, CLEAN) == corpus
    other = build(SEED + 1, PER_KIND, CLEAN)
    assert [p.text for p in other.planted] != [p.text for p in corpus.planted]


def test_every_kind_has_distinct_values(corpus: Corpus) -> None:
    counts = Counter(p.kind for p in corpus.planted)
    assert counts == dict.fromkeys(KINDS, PER_KIND)
    for kind in KINDS:
        values = {p.value.text for p in corpus.planted if p.kind == kind}
        assert len(values) == PER_KIND, kind


def test_every_planted_value_is_in_its_sentence(corpus: Corpus) -> None:
    for planted in corpus.planted:
        assert planted.text == planted.template.format(v=planted.value.text)
        assert planted.field in FIELDS
        for secret in (*planted.value.secrets, *planted.value.parts):
            assert secret, planted.kind
            assert secret in planted.text, planted.kind


def test_checksummed_numbers_are_valid(corpus: Corpus) -> None:
    def values(kind: str) -> list[str]:
        return [p.value.secrets[0] for p in corpus.planted if p.kind == kind]

    assert all(luhn_ok(card) for card in values("credit_card"))
    assert all(verhoeff_ok(number) for number in values("in_aadhaar"))
    for iban in values("iban"):
        compact = iban.replace(" ", "")
        digits = "".join(str(int(c, 36)) for c in compact[4:] + compact[:4])
        assert int(digits) % 97 == 1, iban
    cards = build(SEED, 200, 0, ("credit_card",)).planted
    assert len({p.value.variant for p in cards}) == 9  # every network, 2-series Mastercard too
    assert all(luhn_ok(p.value.secrets[0]) for p in cards)


def test_clean_sentences_hold_no_planted_value(corpus: Corpus) -> None:
    secrets = {s for p in corpus.planted for s in p.value.secrets}
    assert len(corpus.clean) == CLEAN
    for clean in corpus.clean:
        assert not [s for s in secrets if s in clean.text], clean.text


def _planted(text: str, secret: str) -> Planted:
    return Planted("credit_card", "step", "Refund {v} today", text, plain(secret, "visa"))


def test_a_value_survives_whole_or_by_an_identifying_token() -> None:
    planted = _planted("Refund 4111 1111 1111 1111 today", "4111 1111 1111 1111")
    assert survivors(planted, "Refund <CREDIT_CARD> today") == []
    assert survivors(planted, planted.text)
    assert survivors(planted, "Refund <CREDIT_CARD> 1111 today") == ["1111"]
    assert "1111" in fragments(planted.value)


def test_the_scorer_counts_leaked_and_masked_values(corpus: Corpus) -> None:
    masked_kinds = {"email_public", "credit_card"}

    def fake(planted: Planted) -> str:
        if planted.kind not in masked_kinds:
            return planted.text
        text = planted.text
        for secret in planted.value.secrets:
            text = text.replace(secret, "<X>")
        return text

    clean_out = [c.text for c in corpus.clean]
    clean_out[0] = clean_out[0][:5] + "<X>"
    result = score(corpus, [fake(p) for p in corpus.planted], clean_out)
    for kind, row in result["kinds"].items():
        assert row["found"] == (PER_KIND if kind in masked_kinds else 0), kind
        assert row["total"] == PER_KIND
    leak = result["kinds"]["person_name"]["leaked"][0]
    assert "{person_name}" in leak["output"]
    assert result["precision"]["unchanged"] == CLEAN - 1
    assert result["precision"]["chars_masked"] > 0


def test_settings_options_map_to_the_workers_variables() -> None:
    assert setting("ner=true") == ("LEARNSTREAM_PRIVACY__NER", "true")
    assert setting("learning.anonymize_pii=false") == (
        "LEARNSTREAM_LEARNING__ANONYMIZE_PII",
        "false",
    )
    both = configurations("both", [setting("detect_secrets=false")])
    assert [c.env["LEARNSTREAM_PRIVACY__NER"] for c in both] == ["false", "true"]
    assert all(c.env["LEARNSTREAM_PRIVACY__DETECT_SECRETS"] == "false" for c in both)


def test_every_field_is_one_the_workers_anonymizer_reads() -> None:
    (config,) = configurations("off", [])
    anonymize, settings = worker_anonymizer(config)
    assert settings["ner"] is False
    for field in FIELDS:
        out = anonymize(field, "Mail dana.whitfield@example.org about it")
        assert "dana.whitfield" not in out, field
        assert out.startswith("Mail "), field
