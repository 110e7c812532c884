"""Dependencies point down (STYLE.md): each layer imports only the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "bcast_lint"

# What each layer of the package may import from bcast_lint (besides itself).
ALLOWED = {
    "analysis": {"analysis", "model", "source"},
    "fixes": {"analysis", "model", "source"},
    "rules": {"analysis", "fixes", "model", "source", "codes"},
    "codes": set(),
    "model": set(),
}


def _layer(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported_layers(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "bcast_lint" and len(parts) > 1:
                found.add(parts[1])
    return found


def _modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if _layer(path) in ALLOWED)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_module_imports_only_lower_layers(path):
    layer = _layer(path)
    imported = _imported_layers(ast.parse(path.read_text(encoding="utf-8"))) - {layer}
    assert imported <= ALLOWED[layer], f"{layer} may not import {sorted(imported - ALLOWED[layer])}"


def test_no_class_is_defined_inside_a_function():
    nested = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nested += [f"{path.name}:{inner.lineno}" for inner in ast.walk(node)
                           if isinstance(inner, ast.ClassDef)]
    assert nested == []


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_of(path: Path, known: set[str]) -> set[str]:
    """The bcast_lint modules a file imports anywhere in it: at the top, under TYPE_CHECKING,
    inside functions. `from package import module` names the module, not the package."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1], *filter(None, [base])])
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known
            found |= submodules or {base}
    return found & known


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_cycle():
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: _imports_of(path, set(paths)) - {name} for name, path in paths.items()}
    assert "bcast_lint.analysis.project" in graph["bcast_lint.analysis.context"]
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
