"""What the anonymizer reads ahead for a record is exactly what the walk then asks it for."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from learnstream.streams.privacy.walk import read_strings, walk_sample

SAMPLE: dict[str, Any] = {
    "sample_id": "5b0e0a52-7d1c-4d7e-9a55-0f2d8a3c9e11",
    "sample_family": "confirm_decision",
    "created_at": "2026-11-30T16:03:33.053022Z",
    "input": {
        "objective": "Ask Dana Whitfield about the 500 errors",
        "plan_id": "plan-550e8400-e29b-41d4-a716-446655440000",
        "customer_id": "jane@corp.example",
        "steps": [{"id": "step-1", "description": "Collect deploy logs"}, ("a", "b")],
        "decided_by": "Dana Whitfield",
        "count": 3,
        "ratio": None,
    },
    "state": {"status": "pending", "owner_ids": ["u-1", "dana whitfield"]},
    "output": {"reasoning": "Approved by Priya", "tags": ["urgent"]},
    "feedback": {"source": "human", "details": {"user_feedback": "call Dana"}, "type": "edit"},
    "meta": {
        "id_refs": {"plan": "plan-123", "ticket": "TICKET 4711 of Dana"},
        "source_flow_id": "flow_7f3a",
        "ambiguity_flags": ["who is Dana?"],
        "producer": "learnstream 1.0",
    },
}


def test_read_strings_are_the_leaves_the_walk_hands_the_anonymizer_in_order() -> None:
    asked: list[str] = []

    def keep(text: str) -> tuple[str, Counter[str]]:
        asked.append(text)
        return text, Counter()

    walk_sample(SAMPLE, keep, keep)
    assert read_strings(SAMPLE) == asked
    assert "plan-550e8400-e29b-41d4-a716-446655440000" not in asked  # a well-formed id
    assert "jane@corp.example" in asked  # an id key's value of another shape is read
    assert "human" not in asked  # feedback's provenance is copied
    assert "learnstream 1.0" not in asked


def test_person_key_values_go_to_whole_name_and_are_read_ahead_in_place() -> None:
    asked: list[tuple[str, str]] = []

    def text(value: str) -> tuple[str, Counter[str]]:
        asked.append(("text", value))
        return value.upper(), Counter(TEXT=1)

    def person(value: str) -> tuple[str, Counter[str]]:
        asked.append(("person", value))
        return "<PERSON>", Counter(PERSON=1)

    clean, counts = walk_sample(SAMPLE, text, person)
    assert [kind for kind, value in asked if value == "Dana Whitfield"] == ["person"]
    assert clean["input"]["decided_by"] == "<PERSON>"
    assert clean["input"]["steps"][1] == ("A", "B")  # a tuple stays a tuple
    assert counts == Counter(TEXT=len(asked) - 1, PERSON=1)
    assert read_strings(SAMPLE) == [value for _, value in asked]


def test_the_walk_copies_what_it_does_not_read_and_reading_ahead_changes_nothing() -> None:
    before = copy.deepcopy(SAMPLE)
    assert read_strings(SAMPLE)
    assert before == SAMPLE
    clean, _ = walk_sample(SAMPLE, lambda t: (t, Counter()))
    assert clean == SAMPLE
    assert clean["meta"]["producer"] == "learnstream 1.0"
    assert clean["feedback"] is not SAMPLE["feedback"]
    assert clean["input"]["steps"][0] is not SAMPLE["input"]["steps"][0]


def test_the_texts_handed_ahead_are_those_then_asked_for_and_come_first() -> None:
    calls: list[tuple[str, Any]] = []

    def keep(text: str) -> tuple[str, Counter[str]]:
        calls.append(("asked", text))
        return text, Counter()

    walk_sample(SAMPLE, keep, keep, ahead=lambda texts: calls.append(("ahead", texts)))
    (first, texts), *asked = calls
    assert first == "ahead"
    assert texts == [text for _, text in asked] == read_strings(SAMPLE)
