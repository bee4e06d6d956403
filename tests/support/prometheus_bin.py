"""Find ``promtool`` / ``prometheus``: the project-local copy first, then PATH."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

__all__ = ["LOCAL_BIN", "prometheus_tool"]

#: Where ops/prometheus/ensure-promtool.sh (run by `make test`) unpacks Debian's package.
LOCAL_BIN = Path(sys.prefix) / "tools" / "prometheus" / "bin"
HOW = "run ops/prometheus/ensure-promtool.sh (`make test` does): it installs nothing"


def prometheus_tool(name: str) -> str | None:
    """Return the path of ``name`` (promtool or prometheus), or None if there is none."""
    local = LOCAL_BIN / name
    return str(local) if local.is_file() else shutil.which(name)
