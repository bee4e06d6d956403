"""A command that only reads its settings does not load Presidio or spaCy.

They cost about 0.8 s of CPU per start; ``--help``, ``config`` and every configuration
error a user makes should answer without them. Checked by what a fresh interpreter has
imported, not by a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("presidio_analyzer", "presidio_anonymizer", "spacy")

PROBE = """
import json, sys
from click.testing import CliRunner
from learnstream.agents.cli.main import main
result = CliRunner().invoke(main, sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(HEAVY)))
print(json.dumps({"code": result.exit_code, "output": result.output, "heavy": heavy}))
"""


def loaded(args: list[str], **env: str) -> dict[str, object]:
    """Run the CLI with args in a fresh interpreter; return its exit code, output and
    which of the heavy packages it imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.replace("HEAVY", repr(json.dumps(HEAVY))), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--help"], {}, "Turn MPLP agent feedback"),
        (["config"], {}, "LEARNSTREAM_BROKER_URL"),
        (["worker"], {"LEARNSTREAM_WEB_PORT": "abc"}, "LEARNSTREAM_WEB_PORT must be"),
        (["demo"], {"LEARNSTREAM_JOIN__GRACE": "soon"}, "LEARNSTREAM_JOIN__GRACE is not"),
    ],
)
def test_settings_only_commands_load_no_nlp(
    args: list[str], env: dict[str, str], says: str
) -> None:
    result = loaded(args, **env)
    assert says in str(result["output"])
    assert result["heavy"] == []
