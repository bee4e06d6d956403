"""The package as a user installs it: one top-level name, beside whatever else they have.

The wheel and an editable install are built offline from a copy of the repository (the
build backend in this venv, no index) and installed into scratch venvs. The wheel goes in
beside a package that owns the top-level modules ``agents`` and ``streams`` (as OpenAI's
Agents SDK owns ``agents``) and registers a custom adapt strategy: both import, neither
shadows the other, and ``pip show -f`` lists only learnstream's own names.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

# Builds and venvs are heavy: 8 minutes, as pip alone may wait up to 300 s.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(480)]

ROOT = Path(__file__).resolve().parents[2]
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"

#: A neighbour package: top-level ``agents`` and ``streams``, and a learnstream strategy.
NEIGHBOUR = {
    "pyproject.toml": """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "neighbour"
version = "1.0"

[project.entry-points."learnstream.strategies"]
backwards = "agents:backwards"

[tool.hatch.build.targets.wheel]
packages = ["agents", "streams"]
""",
    "agents/__init__.py": """\
OWNER = "neighbour"


def backwards(records, params, rng):
    return sorted(records, key=lambda r: r.name, reverse=True)
""",
    "streams/__init__.py": 'OWNER = "neighbour"\n',
}

CHECK_WHEEL = """\
import agents, streams
from learnstream.agents.cli.main import main
from learnstream.streams.a2e.models import SkillPerformanceRecord
from learnstream.streams.a2e.strategies import rank
from learnstream.streams.encoding.avro import SCHEMA_DIR, load_schemas
from learnstream.streams.encoding.resources import schema_root
from learnstream.streams.privacy.dictionary import is_common_word

assert (agents.OWNER, streams.OWNER) == ("neighbour", "neighbour")
assert is_common_word("mode") and not is_common_word("grace")  # package data read
records = [SkillPerformanceRecord(name=n) for n in ("a", "c", "b")]
print([r.name for r in rank(records, "custom", custom="backwards")])
print(schema_root())
print(SCHEMA_DIR.parent, sorted(load_schemas(SCHEMA_DIR)))
"""


def documented_imports() -> list[str]:
    """Every ``from learnstream… import …`` line in the README and docs, as written."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *ROOT.glob("*.md")]
    found = {
        line.strip()
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if re.match(r"\s*(from learnstream[\w.]* import [\w, ]+|import learnstream[\w.]*)$", line)
    }
    return sorted(found)


def _ok(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run ``cmd``; assert it succeeded and return what it printed (stdout + stderr)."""
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _env() -> dict[str, str]:
    # pip's own notices (running as root in CI, a newer pip exists) are not the project's.
    env = os.environ | {"PIP_ROOT_USER_ACTION": "ignore", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else distutils warns that it cannot byte-compile
    env.pop("PYTHONPATH", None)
    return env


def _source(tmp_path: Path) -> Path:
    """Copy what the build reads: the links in learnstream/ stay links, as in a clone."""
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in ("learnstream", "streams", "agents", "schemas"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    assert (src / "learnstream" / "streams").is_symlink()
    return src


def _wheel(src: Path, out: Path, env: dict[str, str]) -> tuple[Path, str]:
    # -v shows what the build backend prints, which is where its warnings go.
    cmd = ["wheel", "-v", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)]
    printed = _ok([sys.executable, "-m", "pip", *cmd], src.parent, env)
    return next(out.glob("*.whl")), printed


def _venv(path: Path, env: dict[str, str]) -> Path:
    """Make a scratch venv that sees this venv's installed dependencies after its own
    packages (offline: nothing to download). A path line in a .pth file is appended to
    sys.path (before the editable hook's .pth runs: files run in name order); the .pth files in the
    lent directory, such as this venv's editable learnstream, are not run."""
    _ok([sys.executable, "-m", "venv", str(path)], path.parent, env)
    python = path / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(_ok([str(python), "-c", where], path.parent, env).strip())
    (site / "0_lent_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return python


INSTALL = ["-m", "pip", "install", "--no-deps", "--no-index"]


def _warnings(printed: str) -> list[str]:
    return [line for line in printed.splitlines() if "warn" in line.lower()]


def test_the_wheel_installs_one_name_beside_a_package_owning_agents(tmp_path: Path) -> None:
    env = _env()
    wheel, printed = _wheel(_source(tmp_path), tmp_path / "dist", env)
    other = tmp_path / "neighbour"
    for name, text in NEIGHBOUR.items():
        (other / name).parent.mkdir(parents=True, exist_ok=True)
        (other / name).write_text(text)
    other_wheel, _ = _wheel(other, tmp_path / "dist-neighbour", env)
    python = _venv(tmp_path / "venv", env)
    printed += _ok([str(python), *INSTALL, str(other_wheel), str(wheel)], tmp_path, env)
    assert _warnings(printed) == []

    out = _ok([str(python), "-c", CHECK_WHEEL], tmp_path, env).splitlines()
    shipped_schemas = python.parents[1] / "lib" / PY / "site-packages" / "learnstream" / "schemas"
    assert out == [
        "['c', 'b', 'a']",
        str(shipped_schemas),
        f"{shipped_schemas} ['learning_sample.avsc']",
    ]

    shown = _ok([str(python), "-m", "pip", "show", "-f", "learnstream"], tmp_path, env)
    files = shown.split("Files:\n", 1)[1].split()
    tops = {f.split("/", 1)[0] for f in files if not f.startswith("..")}
    assert len(files) > 300  # the whole package, not a stub
    assert tops == {"learnstream", "learnstream-0.1.0.dist-info"}
    assert [f for f in files if f.startswith("..")] == ["../../../bin/learnstream"]
    data = ("learnstream/streams/privacy/data/common_words.txt.gz",
            "learnstream/streams/privacy/data/SCOWL-COPYRIGHT",
            "learnstream/streams/privacy/data/tech_words.txt.gz",
            "learnstream/streams/privacy/data/TECH-WORDS-SOURCE",
            "learnstream/streams/privacy/data/regions.txt.gz",
            "learnstream/streams/privacy/data/REGIONS-SOURCE",
            "learnstream/streams/privacy/data/given_names.txt.gz",
            "learnstream/streams/privacy/data/surnames.txt.gz",
            "learnstream/streams/privacy/data/NAMES-SOURCE")  # fmt: skip
    for needed in ("learnstream/py.typed", "learnstream/streams/py.typed", *data):
        assert needed in files
    shipped = {f.removeprefix("learnstream/schemas/") for f in files if "/schemas/" in f}
    in_repo = {
        str(p.relative_to(ROOT / "schemas"))
        for p in (ROOT / "schemas").rglob("*.*")
        if p.suffix in (".avsc", ".json")
    }
    assert in_repo <= shipped

    imports = documented_imports()
    assert len(imports) >= 4, imports
    assert _ok([str(python), "-c", "\n".join([*imports, "print('ok')"])], tmp_path, env) == "ok\n"

    cli = tmp_path / "venv" / "bin" / "learnstream"
    assert _ok([str(cli), "--version"], tmp_path, env).strip() == "learnstream 0.1.0"
    assert "Usage: python -m learnstream" in _ok([str(python), "-m", "learnstream", "--help"],
                                                 tmp_path, env)  # fmt: skip


def test_an_editable_install_maps_learnstream_and_nothing_else(tmp_path: Path) -> None:
    """What `make venv` runs: an editable install, built by the backend directly (offline)
    and installed into a scratch venv (not this one: it would uninstall the project here)."""
    env = _env()
    src = _source(tmp_path)
    build = "import hatchling.build as b; print(b.build_editable('../editable'))"
    printed = _ok([sys.executable, "-W", "default", "-c", build], src, env)
    python = _venv(tmp_path / "dev", env)
    wheel = next((tmp_path / "editable").glob("learnstream-*.whl"))
    printed += _ok([str(python), *INSTALL, str(wheel)], tmp_path, env)
    assert _warnings(printed) == []
    check = (
        "import importlib.util as u, learnstream.streams.a2e as a; print(a.__file__); "
        "print([n for n in ('streams', 'agents', 'tests', 'benchmarks') if u.find_spec(n)])"
    )
    out = _ok([str(python), "-c", check], tmp_path, env)
    assert out.splitlines() == [str(src / "learnstream" / "streams" / "a2e" / "__init__.py"), "[]"]
