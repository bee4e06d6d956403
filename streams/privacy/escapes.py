"""Line breaks written as escapes: read ``\\n`` in a serialised string as the break it stands for.

Agent payloads often carry text serialised twice (a JSON string inside a JSON string, a log
line holding a message): a letter's lines then arrive as ``Dana Whitfield\\n\\n14 Harrowgate
Lane\\n Apt. 3``, one run of characters with no whitespace between the name, the house number
and the street. Every word rule reads whitespace, so the name and the address would be one
code-shaped token. The detectors read a view of the text in which each escape ``\\n``,
``\\r`` or ``\\t`` that is not followed by a lower-case letter (``C:\\new\\temp`` is a path)
is two characters of whitespace: the view has the text's length, so spans found in it mask
the text itself.
"""

from __future__ import annotations

import re

__all__ = ["line_view"]

_ESCAPED_BREAK = re.compile(r"(?<!\\)\\[nrt](?![a-z])")


def line_view(text: str) -> str:
    """Return text with its escaped line breaks and tabs read as whitespace (same length)."""
    if "\\" not in text:
        return text
    return _ESCAPED_BREAK.sub("\n ", text)
