"""Which names a piece of code binds, without looking into nested scopes."""

from __future__ import annotations

import libcst as cst

from bcast_lint.analysis.walk import Visitor

class _BindingCollector(Visitor):
    def __init__(self) -> None:
        self.names: list[str] = []
        self.declared_elsewhere: set[str] = set()  # `global` / `nonlocal`

    def _add_target(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.names.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._add_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._add_target(target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.append(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.append(node.name.value)
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ListComp(self, node) -> bool:
        return False

    def visit_SetComp(self, node) -> bool:
        return False

    def visit_DictComp(self, node) -> bool:
        return False

    def visit_GeneratorExp(self, node) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._add_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:  # `x: Tensor` alone binds nothing
            self._add_target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._add_target(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._add_target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._add_target(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._add_target(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._add_target(node.name.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None:
            self._add_target(node.asname.name)
        else:
            first = node.name
            while isinstance(first, cst.Attribute):
                first = first.value
            self._add_target(first)

    def visit_Del(self, node: cst.Del) -> None:
        self._add_target(node.target)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._add_target(node.name)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._add_target(node.name)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self._add_target(node.rest)

    def visit_Global(self, node: cst.Global) -> None:
        self.declared_elsewhere.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared_elsewhere.update(item.name.value for item in node.names)


def bound_names(node: cst.CSTNode) -> tuple[str, ...]:
    """Names bound by `node` itself (a statement or an expression), in order."""
    collector = _BindingCollector()
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return (node.name.value,)
    collector.walk(node)
    return tuple(collector.names)


def target_names(target: cst.CSTNode) -> list[str]:
    """Names an assignment target binds: `x`, `a, (b, *c)`; attributes and subscripts bind none."""
    collector = _BindingCollector()
    collector._add_target(target)
    return collector.names


def local_names(body: cst.CSTNode) -> frozenset[str]:
    """Names local to the scope whose body is `body`: bound in it and not declared global."""
    collector = _BindingCollector()
    collector.walk(body)
    return frozenset(collector.names) - collector.declared_elsewhere

class Bindings:
    """bound_names and local_names remembered for one tree.

    The data flow asks about the same statements once per world and loop pass. Nodes hash by
    identity and keep their tree alive, so the memo belongs to the ModuleAnalysis of that tree
    and goes with it.
    """

    def __init__(self) -> None:
        self._bound: dict[cst.CSTNode, tuple[str, ...]] = {}
        self._local: dict[cst.CSTNode, frozenset[str]] = {}

    def bound_names(self, node: cst.CSTNode) -> tuple[str, ...]:
        found = self._bound.get(node)
        if found is None:
            found = self._bound[node] = bound_names(node)
        return found

    def local_names(self, body: cst.CSTNode) -> frozenset[str]:
        found = self._local.get(body)
        if found is None:
            found = self._local[body] = local_names(body)
        return found


def parameter_names(params: cst.Parameters) -> list[str]:
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names
