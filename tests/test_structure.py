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
