"""Allocate the receiving ranks' placeholder on every rank, before the rank-conditional branch.

    ids = None                                   ids = torch.zeros((n,), dtype=torch.int64)
    if accelerator.is_main_process:      ->      if accelerator.is_main_process:
        ids = torch.randperm(n)                      ids = torch.randperm(n)
    ids = broadcast(ids)                         ids = broadcast(ids)

The placeholder copies the shape, dtype and device the source value's constructor states. Where
those cannot be read off the code, the broadcast is rewritten into the object-list form instead.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.expressions import is_none
from bcast_lint.analysis.flow import ASSIGNED, UNBOUND, Definition, Guard
from bcast_lint.analysis.module import CallSite, ModuleAnalysis, RankSplit
from bcast_lint.analysis.tensor_specs import TensorSpec, shape_text, tensor_spec
from bcast_lint.analysis.walk import children
from bcast_lint.fixes.edits import insert_before_statement, replace_node
from bcast_lint.fixes.object_list import object_list_fix
from bcast_lint.model import SAFE, UNSAFE, Fix


def placeholder_or_object_list_fix(analysis: ModuleAnalysis, site: CallSite, name: str,
                                   split: RankSplit) -> Optional[Fix]:
    source = _source_definition(split)
    if source is not None:
        fix = _placeholder_fix(analysis, site, name, source, split)
        if fix is not None:
            return fix
    return _object_list_with_binding(analysis, site, name, source)


def _source_definition(split: RankSplit) -> Optional[Definition]:
    """The one guarded assignment the fine ranks received their value from."""
    assigned = {d for d in split.fine_definitions if d.kind == ASSIGNED and d.guard is not None}
    return assigned.pop() if len(assigned) == 1 else None


def _placeholder_fix(analysis: ModuleAnalysis, site: CallSite, name: str, source: Definition,
                     split: RankSplit) -> Optional[Fix]:
    spec = tensor_spec(source.value, analysis.qualified_names)
    guard = source.guard
    if spec is None or not _starts_a_statement(analysis, guard.statement):
        return None
    allocation = _allocation_text(analysis, site, spec, guard)
    if allocation is None:
        return None
    text, known = allocation
    none_assignment = _none_assignment(split, guard)
    if none_assignment is not None:
        edit = replace_node(analysis, none_assignment, text)
    else:
        edit = insert_before_statement(analysis, guard.statement, f"{name} = {text}")
    applicability = SAFE if known else UNSAFE
    return Fix(applicability, f"Allocate `{name}` on every rank before the branch", (edit,))


def _allocation_text(analysis: ModuleAnalysis, site: CallSite, spec: TensorSpec,
                     guard: Guard) -> Optional[tuple[str, bool]]:
    """`torch.zeros(<shape>, dtype=..., device=...)` and whether dtype and device are both known."""
    func = spec.call.func
    if not isinstance(func, cst.Attribute) or not spec.constructor.startswith("torch."):
        return None  # `from torch import randperm`: no `torch.` prefix to reuse
    torch_module = analysis.code(func.value)
    if spec.constructor.endswith("_like"):
        template = spec.call.args[0].value if spec.call.args else None
        if template is None or not _bound_everywhere(analysis, site, template, guard):
            return None
        arguments = [analysis.code(template)]
        constructor = "zeros_like"
    else:
        shape = _shape_text(analysis, spec)
        if shape is None or not all(_bound_everywhere(analysis, site, a, guard) for a in spec.size_arguments):
            return None
        arguments = [shape]
        constructor = "zeros"
    if spec.dtype is not None:
        arguments.append(f"dtype={torch_module}.{spec.dtype}")
    device_known = spec.device is None or not isinstance(spec.device, cst.Call)
    if spec.device is not None and device_known:
        if not _bound_everywhere(analysis, site, spec.device, guard):
            return None
        arguments.append(f"device={analysis.code(spec.device)}")
    dtype_known = spec.dtype is not None or spec.constructor.endswith("_like")
    return f"{torch_module}.{constructor}({', '.join(arguments)})", dtype_known and device_known


def _shape_text(analysis: ModuleAnalysis, spec: TensorSpec) -> Optional[str]:
    if spec.size_arguments:
        return ", ".join(analysis.code(arg) for arg in spec.size_arguments)
    return shape_text(spec.shape) if spec.shape is not None else None


def _none_assignment(split: RankSplit, guard: Guard) -> Optional[cst.BaseExpression]:
    """The `None` of the `x = None` the broken ranks keep, if there is one: before the branch, or
    in the branch's other arm (`else: x = None`)."""
    for definition in split.broken_definitions:
        in_place = definition.guard is None or definition.guard.statement is guard.statement
        if (definition.kind == ASSIGNED and in_place
                and definition.value is not None and is_none(definition.value)):
            return definition.value
    return None


def _starts_a_statement(analysis: ModuleAnalysis, statement: cst.If) -> bool:
    """An `elif` cannot have a line inserted before it."""
    start = analysis.position(statement).start
    return analysis.line_text(start.line)[start.column:].startswith("if")


def _bound_everywhere(analysis: ModuleAnalysis, site: CallSite, expr: cst.CSTNode, guard: Guard) -> bool:
    """Every local name in `expr` is bound on every rank, and not by the guarded branch."""
    for name in _names(expr):
        for definitions in analysis.definitions(site, name).values():
            for definition in definitions:
                if definition.kind == UNBOUND or (definition.guard is not None
                                                  and definition.guard.statement is guard.statement):
                    return False
    return True


def _names(expr: cst.CSTNode) -> Iterator[str]:
    if isinstance(expr, cst.Name):
        yield expr.value
    for child in children(expr):
        if not (isinstance(expr, cst.Attribute) and child is expr.attr):
            yield from _names(child)


def _object_list_with_binding(analysis: ModuleAnalysis, site: CallSite, name: str,
                              source: Optional[Definition]) -> Optional[Fix]:
    """The object-list form; where the name is unbound on some ranks, bind it to None first."""
    fix = object_list_fix(analysis, site)
    if fix is None or not _unbound_somewhere(analysis, site, name):
        return fix
    if source is None or not _starts_a_statement(analysis, source.guard.statement):
        return None
    binding = insert_before_statement(analysis, source.guard.statement, f"{name} = None")
    return Fix(UNSAFE, fix.message, (binding, *fix.edits))


def _unbound_somewhere(analysis: ModuleAnalysis, site: CallSite, name: str) -> bool:
    return any(d.kind == UNBOUND for ds in analysis.definitions(site, name).values() for d in ds)

