"""The layers hold: ``streams/`` never imports ``agents``; outside ``streams/io/``, no Kafka client.

Read from the source (every import statement, function-local ones included), so a lazy
import cannot slip past the rule, and a pure module stays pure through what it imports.
Which modules are pure is not a list kept by hand: every module of ``streams/`` outside
``streams/io/`` is, the packages that exist today and any added later.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT / "streams"
AGENTS = ROOT / "agents"
IO = ("learnstream.streams.io",)  # the one room that talks to Kafka, Faust, HTTP or a child process

KAFKA_CLIENTS = ("faust", "mode", "aiokafka")  # mode: the service library under Faust
#: Networks and child processes: what else makes a module I/O.
OTHER_IO = ("socket", "subprocess", "aiohttp", "urllib.request", "http.client", "ssl")


def is_under(module: str, roots: tuple[str, ...]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in roots)


def module_name(path: Path) -> str:
    parts = ("learnstream", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(STREAMS.rglob("*.py"))}
PURE = sorted(name for name in MODULES if not is_under(name, IO))


@cache
def imports(name: str) -> frozenset[str]:
    """Return every module ``name`` imports (absolute names), wherever the import stands."""
    path = MODULES[name]
    return file_imports(path, name if path.name == "__init__.py" else name.rpartition(".")[0])


def file_imports(path: Path, package: str) -> frozenset[str]:
    """Return every module the file at ``path`` imports, relative ones resolved against
    ``package``, wherever the import stands."""
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


def test_the_module_list_is_the_source_tree() -> None:
    assert "learnstream.streams.observe.lag" in MODULES
    assert "learnstream.streams.sim.simulate" in MODULES  # walks sub-packages too
    assert {"faust"} <= imports("learnstream.streams.io.app")  # the walk sees a real import
    assert "learnstream.streams.samples.builders" in imports(
        "learnstream.streams.join.rules"
    )  # and resolves `from learnstream.streams import`


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_under_streams_imports_agents(name: str) -> None:
    bad = sorted(m for m in imports(name) if is_under(m, ("learnstream.agents",)))
    assert not bad, f"{name} imports {bad}: streams/ is the layer agents/ builds on"


@pytest.mark.parametrize("name", PURE)
def test_modules_outside_io_import_no_kafka_client(name: str) -> None:
    bad = sorted(
        f"{m} imports {i}"
        for m in closure(name)
        for i in imports(m)
        if is_under(i, KAFKA_CLIENTS + OTHER_IO)
    )
    assert not bad, f"{name} is outside streams/io/, so it must stay pure, but {bad}"


#: Every Python file the repository holds, wherever it is imported from.
EVERY_FILE = sorted(
    p for top in ("learnstream", "streams", "agents", "tests", "benchmarks", "ops")
    for p in (ROOT / top).rglob("*.py")
    if "learnstream" not in p.relative_to(ROOT).parts[1:]  # learnstream/'s links, once
)  # fmt: skip


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_import_of_the_project_is_under_learnstream(path: Path) -> None:
    """An installed learnstream has one top-level name: a bare ``streams.x`` or ``agents.x``
    would work from a checkout (the current directory is on sys.path) and fail from the wheel."""
    bare = ("streams", "agents", "learnstream_schemas")
    package = ".".join(path.relative_to(ROOT).parent.parts)
    bad = sorted(m for m in file_imports(path, package) if is_under(m, bare))
    assert not bad, f"{path.name} imports {bad}: import them as learnstream.<name>"


def test_the_walk_covers_the_repository() -> None:
    names = {str(p.relative_to(ROOT)) for p in EVERY_FILE}
    assert {"learnstream/__init__.py", "agents/cli/main.py", "tests/conftest.py"} <= names
    assert not any(n.startswith("learnstream/streams") for n in names)


def test_every_module_of_streams_sits_in_a_package() -> None:
    loose = sorted(p.name for p in STREAMS.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"streams/ holds packages by concern only; place {loose} in one"


def test_no_module_name_is_shared_across_layers() -> None:
    """``agents.quality`` beside ``streams.quality``: which one does a name mean? (Inside
    agents' own packages, ``agents.cli.audit``, a name is qualified by its concern.)"""
    streams_names = {name.rsplit(".", 1)[-1] for name in MODULES}
    agents_names = {p.stem for p in AGENTS.glob("*.py") if p.stem != "__init__"}
    agents_names |= {p.parent.name for p in AGENTS.glob("*/__init__.py")}
    assert agents_names, "agents/ was not found"
    shared = sorted(streams_names & agents_names)
    assert not shared, f"{shared} name a module in both streams/ and agents/"


def test_agents_are_grouped_by_concern() -> None:
    """agents/ adapts records: its command line, the Faust and Kafka seams, the join's and the
    learn capability's Kafka sides each in a package; only what every agent shares is loose."""
    packages = sorted(p.parent.name for p in AGENTS.glob("*/__init__.py"))
    assert packages == ["cli", "joins", "learning", "seams"]
    loose = sorted(p.stem for p in AGENTS.glob("*.py") if p.stem != "__init__")
    assert len(loose) <= 10, f"agents/ holds {loose} loose: place them by concern"


def test_pure_modules_and_the_core_never_import_the_simulation() -> None:
    # The demo (embedded broker, worker process, simulated runtime) is I/O and runs the simulation.
    demo = (
        "learnstream.streams.sim",
        "learnstream.streams.io.demo",
        "learnstream.streams.io.demo_runtime",
    )
    core = [m for m in MODULES if not is_under(m, demo)]
    bad = sorted(
        f"{m} imports {i}"
        for m in core
        for i in imports(m)
        if is_under(i, ("learnstream.streams.sim",))
    )
    assert not bad, f"the worker must not need the demo or simulation code: {bad}"


def _graph(names: dict[str, Path]) -> dict[str, set[str]]:
    """Return each module's imports among ``names`` (a package counts as its __init__)."""
    graph = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {m for m in file_imports(path, package) if m in names and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


ALL_MODULES = {
    module_name(path): path for folder in (STREAMS, AGENTS) for path in sorted(folder.rglob("*.py"))
}


def test_no_module_imports_itself_through_others() -> None:
    """A circle of imports (lazy or for type checking too) makes two modules one."""
    assert circles(_graph(ALL_MODULES)) == []


def test_the_circle_check_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_join_and_the_sample_builders_do_not_need_each_other() -> None:
    """streams/join/ builds samples; streams/samples/ reads the state it keeps
    (streams/state/), never the join itself."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:3])

    samples_reach = {
        package(m)
        for name in MODULES
        if package(name) == "learnstream.streams.samples"
        for m in imports(name)
    }
    assert "learnstream.streams.join" not in samples_reach
    assert "learnstream.streams.join" not in {
        package(m)
        for name in MODULES
        if package(name) == "learnstream.streams.state"
        for m in imports(name)
    }
