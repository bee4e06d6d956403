"""The layers hold: ``streams/`` never imports ``agents``, and the pure core no Kafka client.

Read from the source (every import statement, function-local ones included), so a lazy
import cannot slip past the rule, and a pure module stays pure through what it imports.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT / "streams"

# Logic that runs without Faust or a Kafka client: builders, the join, codecs, privacy...
PURE = {
    "streams.a2e",
    "streams.builders",
    "streams.codecs",
    "streams.confirm_fill",
    "streams.consent",
    "streams.decode",
    "streams.erasure",
    "streams.errors",
    "streams.expiry",
    "streams.export",
    "streams.export_files",
    "streams.fence",
    "streams.fields",
    "streams.formatters",
    "streams.ids",
    "streams.join",
    "streams.lag",
    "streams.models",
    "streams.outbox",
    "streams.pairs",
    "streams.partitioner",
    "streams.plan_state",
    "streams.privacy",
    "streams.quality",
    "streams.replans",
    "streams.sample_parts",
    "streams.samples",
}
KAFKA_CLIENTS = ("faust", "mode", "aiokafka")  # mode: the service library under Faust


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(STREAMS.rglob("*.py"))}


@cache
def imports(name: str) -> frozenset[str]:
    """Return every module ``name`` imports (absolute names), wherever the import stands."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # submodules
    return frozenset(found)


def closure(name: str) -> set[str]:
    """Return ``name`` and every module of streams/ it reaches through its imports."""
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current in seen or current not in MODULES:
            continue
        seen.add(current)
        todo.extend(imports(current))
    return seen


def is_under(module: str, roots: tuple[str, ...]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in roots)


def test_the_module_list_is_the_source_tree() -> None:
    assert "streams.lag" in MODULES
    assert "streams.sim.simulate" in MODULES  # walks sub-packages too
    assert {"faust"} <= imports("streams.app")  # the walk sees a real import
    assert "streams.builders" in imports("streams.join")  # and resolves `from streams import`


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_under_streams_imports_agents(name: str) -> None:
    bad = sorted(m for m in imports(name) if is_under(m, ("agents",)))
    assert not bad, f"{name} imports {bad}: streams/ is the layer agents/ builds on"


def test_every_pure_module_exists() -> None:
    assert not PURE - set(MODULES), "a pure module was renamed or removed"


@pytest.mark.parametrize("name", sorted(PURE))
def test_pure_modules_import_no_kafka_client(name: str) -> None:
    package = [m for m in MODULES if is_under(m, (name,))]  # a package: all its modules
    reached = set().union(*(closure(m) for m in package))
    bad = sorted(
        f"{m} imports {i}" for m in reached for i in imports(m) if is_under(i, KAFKA_CLIENTS)
    )
    assert not bad, f"{name} must stay pure, but {bad}"


def test_pure_modules_and_the_core_never_import_the_simulation() -> None:
    core = [m for m in MODULES if not is_under(m, ("streams.sim",))]
    bad = sorted(
        f"{m} imports {i}" for m in core for i in imports(m) if is_under(i, ("streams.sim",))
    )
    assert not bad, f"the worker must not need the demo or simulation code: {bad}"
