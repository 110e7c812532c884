"""Rewrite a tensor broadcast into the object-list form, for values that are not tensors or
have no placeholder to receive into.

accelerate: `x = broadcast(x, ...)` -> `x = broadcast_object_list([x], ...)[0]`
torch:      `dist.broadcast(x, src=0)` -> `x_objects = [x]`; `dist.broadcast_object_list(x_objects,
            src=0)`; `x = x_objects[0]`
The same module's `broadcast_object_list` is used, imported next to `broadcast` when needed.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.expressions import argument
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.names import dotted_parts
from bcast_lint.analysis.walk import Visitor
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import UNSAFE, Edit, Fix


def object_list_fix(analysis: ModuleAnalysis, site: CallSite) -> Optional[Fix]:
    """The rewrite as an unsafe fix, or None where the call cannot be rewritten cleanly."""
    small = _own_statement(site)
    if small is None or site.payload is None or site.api.via:
        return None  # a project's own wrapper (analysis.summaries) has no object-list form
    target = small.targets[0].target.value if isinstance(small, cst.Assign) else None
    function = _object_list_function(analysis, site)
    if function is None:
        return None
    name, import_edit = function
    if site.api.nested:
        edit = _accelerate_edit(analysis, site, small, name, target)
    else:
        edit = _torch_edit(analysis, site, small, name, target)
    if edit is None:
        return None
    edits = (import_edit, edit) if import_edit is not None else (edit,)
    return Fix(UNSAFE, f"Send it with `{name}` instead", edits)


def _own_statement(site: CallSite) -> Optional[cst.BaseSmallStatement]:
    """The `broadcast(...)` or `name = broadcast(...)` statement, alone on its line."""
    line = site.statement
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    small = line.body[0]
    if isinstance(small, cst.Expr) and small.value is site.call:
        return small
    if (isinstance(small, cst.Assign) and small.value is site.call and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)):
        return small
    return None


def _accelerate_edit(analysis, site, small, function: str, target: Optional[str]) -> Optional[Edit]:
    """`x = broadcast(x, ...)` / `broadcast(x)` -> `x = broadcast_object_list([x], ...)[0]`."""
    if target is None:
        if not isinstance(site.payload, cst.Name):
            return None
        target = site.payload.value
    arguments = ", ".join([f"[{analysis.code(site.payload)}]", *_other_arguments(analysis, site)])
    return replace_node(analysis, small, f"{target} = {function}({arguments})[0]")


def _torch_edit(analysis, site, small, function: str, target: Optional[str]) -> Optional[Edit]:
    """`dist.broadcast(x, src=0)` -> `objs = [x]`, `dist.broadcast_object_list(objs, src=0)`,
    `x = objs[0]`, at the statement's indentation."""
    payload = site.payload
    if not isinstance(payload, cst.Name) or target not in (None, payload.value):
        return None
    if argument(site.call, keyword="async_op") is not None:
        return None  # broadcast_object_list has no asynchronous form
    objects = _fresh_name(analysis, f"{payload.value}_objects")
    arguments = ", ".join([objects, *_other_arguments(analysis, site)])
    start = analysis.position(site.statement).start
    indent = analysis.line_text(start.line)[: start.column]
    lines = (f"{objects} = [{payload.value}]", f"{function}({arguments})", f"{payload.value} = {objects}[0]")
    return replace_node(analysis, small, f"\n{indent}".join(lines))


def _other_arguments(analysis: ModuleAnalysis, site: CallSite) -> list[str]:
    """Every argument but the payload, as written."""
    texts = []
    for arg in site.call.args:
        if arg.value is site.payload:
            continue
        prefix = f"{arg.keyword.value}=" if arg.keyword is not None else arg.star
        texts.append(prefix + analysis.code(arg.value))
    return texts


def _object_list_function(analysis: ModuleAnalysis, site: CallSite) -> Optional[tuple[str, Optional[Edit]]]:
    """How to call the same module's `broadcast_object_list` here, and the import to add, if any."""
    func = site.call.func
    module = site.api.qualified_name.rsplit(".", 1)[0]
    if f"{module}.broadcast_object_list" not in apis.CATALOG:
        return None  # torch.distributed.nn.functional and friends have no object form
    if isinstance(func, cst.Attribute):
        return f"{analysis.code(func.value)}.broadcast_object_list", None
    if not isinstance(func, cst.Name):
        return None
    imports = analysis.once(_imports)
    for node, alias in imports:
        if _imported_name(node, alias) == f"{module}.broadcast_object_list":
            return _bound_name(alias), None
    origin = next((alias for node, alias in imports
                   if _bound_name(alias) == func.value and _imported_name(node, alias) == site.api.qualified_name),
                  None)
    if origin is None or "broadcast_object_list" in analysis.once(_used_names):
        return None
    # `from m import broadcast` -> `from m import broadcast, broadcast_object_list`
    end = analysis.position(origin.asname if origin.asname is not None else origin.name).end
    return "broadcast_object_list", Edit(end.line, end.column + 1, end.line, end.column + 1,
                                         ", broadcast_object_list")


def _imports(analysis: ModuleAnalysis) -> list[tuple[cst.ImportFrom, cst.ImportAlias]]:
    """Every absolute `from m import a [as b]` in the module."""
    collector = _ImportFromCollector()
    collector.walk(analysis.module)
    return collector.found


class _ImportFromCollector(Visitor):
    def __init__(self) -> None:
        self.found: list[tuple[cst.ImportFrom, cst.ImportAlias]] = []

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not node.relative and node.module is not None and not isinstance(node.names, cst.ImportStar):
            self.found.extend((node, alias) for alias in node.names)


def _imported_name(node: cst.ImportFrom, alias: cst.ImportAlias) -> str:
    return f"{_dotted_text(node.module)}.{_dotted_text(alias.name)}"


def _bound_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return _dotted_text(alias.name)


def _used_names(analysis: ModuleAnalysis) -> set[str]:
    collector = _NameCollector()
    collector.walk(analysis.module)
    return collector.names


class _NameCollector(Visitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def _fresh_name(analysis: ModuleAnalysis, base: str) -> str:
    used = analysis.once(_used_names)
    name, number = base, 2
    while name in used:
        name, number = f"{base}{number}", number + 1
    return name


def _dotted_text(expr: cst.BaseExpression) -> str:
    return ".".join(dotted_parts(expr))
