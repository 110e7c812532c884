"""Qualified names from the module's own imports.

LibCST's QualifiedNameProvider answers the same question but first builds the scope of every
name in the module, which costs several times the parse itself; bcast-lint only needs to know
what a handful of calls refer to. Resolution here follows `import a.b as x`, `from a.b import c as
d`, imports inside the calling function, local names that shadow an import (a variable called
`dist` is not the module), and builtins that nothing in the module redefines.
"""

from __future__ import annotations

import builtins
from typing import Optional

import libcst as cst

from bcast_lint.analysis.bindings import Bindings, parameter_names
from bcast_lint.analysis.project import absolute_module

_BUILTINS = frozenset(dir(builtins))


class ImportResolver:
    def __init__(self, module: cst.Module, imports: list[tuple[cst.CSTNode, str, str]],
                 bindings: Bindings):
        """`imports`: (scope, bound name, what it refers to) for every absolute import."""
        self._module = module
        self._bindings = bindings
        self._imports: dict[cst.CSTNode, dict[str, str]] = {}
        for scope, name, target in imports:
            self._imports.setdefault(scope, {})[name] = target
        self._shadowing: dict[cst.CSTNode, set[str]] = {}

    def qualified_names(self, node: cst.CSTNode, scope: Optional[cst.CSTNode] = None) -> set[str]:
        """`{"torch.distributed.broadcast"}` for `dist.broadcast` after `import torch.distributed
        as dist`; `{"builtins.len"}` for `len`; an empty set when nothing is known."""
        target = node.func if isinstance(node, cst.Call) else node
        parts = dotted_parts(target)
        if not parts:
            return set()
        root = self._resolve_root(parts[0], scope if scope is not None else self._module)
        return {".".join((root, *parts[1:]))} if root else set()

    def _resolve_root(self, name: str, scope: cst.CSTNode) -> Optional[str]:
        for candidate in (scope, self._module):
            imported = self._imports.get(candidate, {}).get(name)
            if imported is not None:
                return imported
            if name in self._non_import_names(candidate):
                return None  # a local variable, parameter, function or class of that name
        return f"builtins.{name}" if name in _BUILTINS else None

    def binds_locally(self, name: str, scope: cst.CSTNode) -> bool:
        """Whether a function scope binds `name` itself (a parameter or local variable)."""
        return scope is not self._module and name in self._non_import_names(scope)

    def _non_import_names(self, scope: cst.CSTNode) -> set[str]:
        if scope not in self._shadowing:
            body = scope if isinstance(scope, cst.Module) else scope.body
            names = self._bindings.local_names(body) - set(self._imports.get(scope, {}))
            if isinstance(scope, cst.FunctionDef):
                names |= set(parameter_names(scope.params))
            self._shadowing[scope] = names
        return self._shadowing[scope]


def import_bindings(node: cst.CSTNode, package: Optional[str] = None) -> list[tuple[str, str]]:
    """(bound name, qualified target) for each name an import statement binds; relative imports
    only when the importing module's `package` is known."""
    if isinstance(node, cst.Import):
        return [_plain_import(alias) for alias in node.names]
    if isinstance(node.names, cst.ImportStar):
        return []
    named = ".".join(dotted_parts(node.module)) if node.module is not None else None
    if node.relative and package is None:
        return []
    module = absolute_module(named, len(node.relative), package or "")
    if module is None:
        return []
    bindings = []
    for alias in node.names:
        imported = ".".join(dotted_parts(alias.name))
        bound = _asname(alias) or imported
        bindings.append((bound, f"{module}.{imported}"))
    return bindings


def _plain_import(alias: cst.ImportAlias) -> tuple[str, str]:
    dotted = ".".join(dotted_parts(alias.name))
    asname = _asname(alias)
    # `import torch.distributed` binds `torch`; `import torch.distributed as dist` binds `dist`.
    return (asname, dotted) if asname else (dotted.split(".")[0], dotted.split(".")[0])


def _asname(alias: cst.ImportAlias) -> Optional[str]:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return None


def root_name(expr: cst.BaseExpression) -> Optional[str]:
    """`torch` for `torch.distributed.broadcast`."""
    parts = dotted_parts(expr)
    return parts[0] if parts else None


def dotted_parts(expr: cst.BaseExpression) -> list[str]:
    """["torch", "distributed", "broadcast"] for `torch.distributed.broadcast`; [] otherwise."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return []
    return [expr.value, *reversed(parts)]

