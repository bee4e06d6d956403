"""Read the first sentence of each docstring of widely used installed libraries.

Docstrings read like the steps of a coding agent's plan ("Return the indices of the
maximum values along an axis."). The files are parsed, never imported. Libraries whose
docstrings hold personal data or secrets on purpose (Faker, Presidio, detect-secrets,
phonenumbers) are left out, as is this project.
"""

from __future__ import annotations

import ast
import importlib.metadata
from collections.abc import Iterator

from benchmarks.independent.sources import Candidate, sentences

__all__ = ["DISTRIBUTIONS", "docstrings"]

#: Libraries a Python agent's plan talks about; those not installed are skipped.
DISTRIBUTIONS: tuple[str, ...] = (
    "aiohttp", "aiokafka", "anyio", "attrs", "click", "cryptography", "datasets",
    "faust-streaming", "fsspec", "httpx", "huggingface_hub", "hypothesis", "jsonschema",
    "matplotlib", "mypy", "numpy", "pandas", "pyarrow", "pydantic", "pytest", "requests",
    "rich", "scikit-learn", "scipy", "setuptools", "spacy", "urllib3",
)  # fmt: skip
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _first_sentence(doc: str) -> str:
    """Return the first sentence of a docstring's first paragraph ('' if none)."""
    paragraph = doc.strip().split("\n\n", 1)[0]
    found = sentences(paragraph)
    return found[0] if found else ""


def _module_docs(tree: ast.Module, module: str) -> Iterator[tuple[str, str]]:
    """Yield (qualified name, first sentence) of every docstring in a module."""
    stack: list[tuple[ast.AST, str]] = [(tree, module)]
    while stack:
        node, name = stack.pop()
        doc = ast.get_docstring(node) if isinstance(node, _DOCUMENTED) else None
        if doc and (sentence := _first_sentence(doc)):
            yield name, sentence
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                stack.append((child, f"{name}.{child.name}"))


def _distribution_docs(dist: importlib.metadata.Distribution) -> Iterator[Candidate]:
    """Yield the docstring sentences of one installed distribution, tests left out."""
    label = f"{dist.metadata['Name']} {dist.version}"
    for file in sorted(dist.files or (), key=str):
        parts = file.parts
        if file.suffix != ".py" or {"tests", "test", "testing"} & set(parts):
            continue
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue  # a file pip lists but did not write, or a template with a .py name
        module = ".".join((*parts[:-1], file.stem)).removesuffix(".__init__")
        for name, sentence in _module_docs(tree, module):
            yield Candidate("python-docstrings", f"{label}: {name}", sentence)


def docstrings(names: tuple[str, ...] = DISTRIBUTIONS) -> Iterator[Candidate]:
    """Yield the docstring sentences of the installed distributions among ``names``."""
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        yield from _distribution_docs(dist)
