"""Line breaks written as escapes (``\\n`` in a twice-serialised string) are read as breaks."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.escapes import line_view
from learnstream.streams.privacy.pii import Anonymizer


def test_the_view_keeps_the_length_and_reads_escaped_breaks_as_whitespace() -> None:
    text = "Dana Whitfield\\n\\n14 Harrowgate Lane\\n Apt. 3\\tLeeds"
    view = line_view(text)
    assert len(view) == len(text)
    assert "\\" not in view
    assert view.split() == ["Dana", "Whitfield", "14", "Harrowgate", "Lane", "Apt.", "3", "Leeds"]


@pytest.mark.parametrize(
    "text",
    [
        r"C:\new\temp\notes.txt",  # a path: a lower-case letter after the backslash
        r"re.compile(r'\\n')",  # an escaped backslash, then n: not a break
        "no escapes here",
    ],
)
def test_paths_and_escaped_backslashes_are_left_as_they_are(text: str) -> None:
    assert line_view(text) == text


def test_a_name_and_address_in_an_escaped_letter_are_masked(anonymizer: Anonymizer) -> None:
    text = "Contact: Drergir Fondlork\\n\\n14 Harrowgate Lane\\n Leeds"
    out, counts = anonymizer.anonymize_text(text)
    assert "Fondlork" not in out
    assert "Harrowgate" not in out
    assert counts["PERSON"] >= 1
    assert counts["STREET_ADDRESS"] >= 1
    assert out == "Contact: <PERSON>\\n\\n<STREET_ADDRESS>"  # the town line goes with it


def test_escapes_in_technical_text_change_nothing(anonymizer: Anonymizer) -> None:
    text = "Run pytest -q\\nThen push the branch\\n"
    assert anonymizer.anonymize_text(text)[0] == text
