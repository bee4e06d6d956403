"""A clone on a user's machine tests alone: no ``../shared`` beside it, ``CI`` unset.

The project's tracked files are copied to a temporary folder (what a clone holds, with this
checkout's edits), and pytest runs there with the project's interpreter: collection succeeds
and the tests that read the official MPLP schemas pass without one skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# 8 minutes: each pytest run in the clone may take up to 300 s.
pytestmark = pytest.mark.timeout(480)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_TESTS = [
    "tests/unit/test_shipped_mplp.py",
    "tests/unit/test_official_learning_schemas.py",
    "tests/unit/test_a2e_samples.py",
    "tests/unit/test_mplp_inputs.py::test_the_inliner_leaves_no_reference",
    "tests/unit/test_mplp_inputs.py::test_samples_meet_the_official_learning_schemas",
]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a folder holding the project's tracked files, nothing beside it."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    target = tmp_path_factory.mktemp("user") / "learnstream"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # learnstream/'s links to streams/, agents/, schemas/
            (target / name).symlink_to(os.readlink(source))
        elif source.is_file():  # a tracked file deleted in this checkout is not in a clone
            shutil.copy2(source, target / name)
    assert not (target.parent / "shared").exists()
    return target


def pytest_in(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run pytest in ``clone`` as a user would: no CI, no schema override, no Kafka, its own
    code."""
    unset = ("CI", "LEARNSTREAM_MPLP_SCHEMAS", "LEARNSTREAM_TEST_BROKER", "KAFKA_BOOTSTRAP_SERVERS")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["PYTHONPATH"] = str(clone)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_clone_collects_every_test(clone: Path) -> None:
    done = pytest_in(clone, "--co", "-q", "tests")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "tests/unit/test_official_learning_schemas.py::" in done.stdout
    assert re.fullmatch(r"\d+ tests collected in .*", done.stdout.strip().splitlines()[-1])


def test_a_clone_passes_the_schema_tests_without_a_skip(clone: Path) -> None:
    done = pytest_in(clone, "-rs", "-q", *SCHEMA_TESTS)
    summary = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in summary
    assert "skipped" not in summary, summary
    assert "SKIPPED" not in done.stdout


def test_the_clone_reads_its_own_schemas(clone: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(clone)}
    code = (
        "from learnstream.streams.encoding.schemas import OFFICIAL_MPLP_DIR as d; "
        "print(d.resolve())"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=clone, env=env, capture_output=True, text=True, check=True
    )
    assert Path(found.stdout.strip()) == (clone / "schemas/json/mplp/official").resolve()
