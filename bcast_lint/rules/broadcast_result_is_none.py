from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.expressions import argument_value
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import SAFE, UNSAFE, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

_ASYNC_OP_POSITION = 3  # broadcast(tensor, src, group, async_op)
# Parents through which a discarded call's value stays discarded: `[dist.broadcast(t, 0) for t in ts]`.
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)


class BroadcastResultIsNone(Rule):
    """
    ## What it does
    Flags code that uses the value of `torch.distributed.broadcast(...)` or
    `torch.distributed.broadcast_object_list(...)` (or `deepspeed.comm`'s): assigns it, returns
    it, passes it on, or calls a method on it.

    ## Why is this bad?
    Both fill their argument in place and return `None` (a `Work` handle with `async_op=True`).
    `x = dist.broadcast(x, 0)` leaves `x = None` on every rank, and the next use fails with
    `AttributeError: 'NoneType' object has no attribute ...` or `TypeError`. The habit comes
    from Accelerate's `broadcast`/`broadcast_object_list` and from
    `torch.distributed.nn.functional.broadcast`, which do return their value; those are never
    flagged, nor is a `Work` handle kept from `async_op=True`.

    ## Example
    ```python
    weights = dist.broadcast(weights, src=0)
    ```

    ## Use instead
    ```python
    dist.broadcast(weights, src=0)
    ```

    ## Fix safety
    `x = dist.broadcast(x, src)` becomes `dist.broadcast(x, src)`: safe, `x` keeps the tensor it
    was filled into instead of becoming `None`. `y = dist.broadcast(x, src)` becomes
    `dist.broadcast(x, src)` followed by `y = x`: unsafe, `y` now aliases `x`, where the author
    may have expected a copy (as `torch.distributed.nn.functional.broadcast` returns). Other uses
    (returned, passed on, chained) have no fix.

    ## References
    - [torch.distributed.broadcast](https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast)
    - [accelerate.utils.broadcast](https://huggingface.co/docs/accelerate/package_reference/utilities#accelerate.utils.broadcast)
    """

    code = "BCL006"
    VALID = (
        Valid("x = torch.zeros(3)\ndist.broadcast(x, 0)"),
        Valid("x = torch.zeros(3)\nhandle = dist.broadcast(x, 0, async_op=True)\nhandle.wait()"),
        Valid("x = torch.zeros(3)\nx = broadcast(x)"),
        Valid("objs = [None]\nobjs = broadcast_object_list(objs)"),
        Valid("import torch.distributed.nn.functional as dnn\nx = torch.zeros(3)\ny = dnn.broadcast(x, 0)"),
        Valid("x = torch.zeros(3)\ny = torch.distributed.nn.functional.broadcast(x, 0)"),
        Valid("def f(dist, x):\n    return dist.broadcast(x, 0)"),
        Valid("def f(x, wait):\n    work = dist.broadcast(x, 0, async_op=not wait)\n    return work"),
        Valid("ts = [torch.zeros(3)]\n[dist.broadcast(t, 0) for t in ts]"),
        Valid("x = torch.zeros(3)\n_ = dist.broadcast(x, 0)"),
    )
    INVALID = (
        Invalid("x = torch.zeros(3)\nx = dist.broadcast(x, 0)",
                expected_message="'x' is None on every rank after this line: dist.broadcast() returns "
                "None and fills 'x' in place", range=(2, 5, 2, 25),
                expected_replacement="x = torch.zeros(3)\ndist.broadcast(x, 0)"),
        Invalid("objs = [None]\nobjs = dist.broadcast_object_list(objs, src=0)",
                expected_message="'objs' is None on every rank after this line: "
                "dist.broadcast_object_list() returns None and fills 'objs' in place", range=(2, 8, 2, 47),
                expected_replacement="objs = [None]\ndist.broadcast_object_list(objs, src=0)"),
        Invalid("x = torch.zeros(3)\ny = torch.distributed.broadcast(x, src=0)",
                expected_message="'y' is None on every rank: torch.distributed.broadcast() returns None "
                "and fills 'x' in place", range=(2, 5, 2, 42),
                expected_replacement="x = torch.zeros(3)\ntorch.distributed.broadcast(x, src=0)\ny = x"),
        Invalid("x = torch.zeros(3)\nv = dist.broadcast(x, 0).item()",
                expected_message="'.item' is looked up on None on every rank (AttributeError: 'NoneType' "
                "object has no attribute 'item'): dist.broadcast() returns None and fills 'x' in place",
                range=(2, 5, 2, 25)),
        Invalid("def share(x):\n    return dist.broadcast(x, 0)",
                expected_message="this returns None on every rank: dist.broadcast() returns None and "
                "fills 'x' in place", range=(2, 12, 2, 32)),
        Invalid("x = torch.zeros(3)\nprint(dist.broadcast(x, 0))",
                expected_message="the value of dist.broadcast() is used, but it is None on every rank: "
                "dist.broadcast() returns None and fills 'x' in place", range=(2, 7, 2, 27)),
        Invalid("from torch.distributed import broadcast as bc\nx = torch.zeros(3)\nx = bc(x, 0, async_op=False)",
                expected_message="'x' is None on every rank after this line: bc() returns None and fills "
                "'x' in place", range=(3, 5, 3, 29),
                expected_replacement="from torch.distributed import broadcast as bc\nx = torch.zeros(3)\n"
                "bc(x, 0, async_op=False)"),
        Invalid("import deepspeed.comm as ds\nx = torch.zeros(3)\nx = ds.broadcast(x, 0)",
                expected_message="'x' is None on every rank after this line: ds.broadcast() returns None "
                "and fills 'x' in place", range=(3, 5, 3, 23),
                expected_replacement="import deepspeed.comm as ds\nx = torch.zeros(3)\nds.broadcast(x, 0)"),
        Invalid("x = torch.zeros(3)\nif dist.broadcast(x, 0):\n    pass",
                expected_message="the value of dist.broadcast() is used, but it is None on every rank: "
                "dist.broadcast() returns None and fills 'x' in place", range=(2, 4, 2, 24)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        for site in analysis.calls:
            if not site.api.returns_none or _may_return_work(site):
                continue
            use = _use(site.call, analysis.ancestors(site))
            if use is not None:
                message, remedy = _message(analysis, site, use)
                yield Report(site.call, message, _fix(analysis, site, use), remedy)


def _may_return_work(site: CallSite) -> bool:
    """`async_op=True`, or an `async_op` (or `**kwargs`) the linter cannot read: a Work handle."""
    if any(arg.star for arg in site.call.args):
        return True
    if site.api.short_name != "broadcast":
        return False  # broadcast_object_list has no async_op
    async_op = argument_value(site.call, _ASYNC_OP_POSITION, "async_op")
    return async_op is not None and not (isinstance(async_op, cst.Name) and async_op.value == "False")


def _use(call: cst.Call, ancestors: tuple) -> Optional[cst.CSTNode]:
    """The node that uses the call's value, or None when the value is discarded. Through a
    comprehension the use is of the comprehension, reported as a plain use of the value."""
    value: cst.CSTNode = call
    for parent in reversed(ancestors):
        if isinstance(parent, _COMPREHENSIONS) and parent.elt is value:
            value = parent
            continue
        if isinstance(parent, (cst.Expr, cst.Lambda)):
            return None  # a lambda's result is often a discarded callback's
        if isinstance(parent, cst.Assign) and all(_is_underscore(t.target) for t in parent.targets):
            return None
        return parent if value is call else value
    return None


def _is_underscore(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Name) and target.value == "_"


def _message(analysis: ModuleAnalysis, site: CallSite, use: cst.CSTNode) -> tuple[str, str]:
    """What is wrong, and the remedy."""
    called = f"{analysis.code(site.call.func)}()"
    payload = analysis.code(site.payload) if site.payload is not None else "its argument"
    returns = f"{called} returns None and fills '{payload}' in place"
    target = _assigned_name(use)
    if target == payload:
        return f"'{target}' is None on every rank after this line: {returns}", "Drop the assignment"
    if target is not None:
        return f"'{target}' is None on every rank: {returns}", f"Call it as a statement and use '{payload}'"
    if isinstance(use, cst.Attribute):
        attribute = use.attr.value
        remedy = ("Pass async_op=True for a Work handle to wait on" if attribute == "wait"
                  else f"Call it as a statement and use '{payload}'")
        return (f"'.{attribute}' is looked up on None on every rank (AttributeError: 'NoneType' object "
                f"has no attribute '{attribute}'): {returns}"), remedy
    if isinstance(use, cst.Return):
        return (f"this returns None on every rank: {returns}",
                f"Call it as a statement and return '{payload}'")
    return f"the value of {called} is used, but it is None on every rank: {returns}", f"Use '{payload}' instead"


def _assigned_name(use: cst.CSTNode) -> Optional[str]:
    if isinstance(use, cst.Assign) and len(use.targets) == 1:
        target = use.targets[0].target
    elif isinstance(use, (cst.AnnAssign, cst.NamedExpr)):
        target = use.target
    else:
        return None
    return target.value if isinstance(target, cst.Name) else None


def _fix(analysis: ModuleAnalysis, site: CallSite, use: cst.CSTNode) -> Optional[Fix]:
    """Only a plain `name = call` line: the call stays, the assignment goes."""
    target = _assigned_name(use) if isinstance(use, cst.Assign) else None
    statement = site.statement
    if target is None or use.value is not site.call or analysis.ancestors(site)[-2] is not statement:
        return None
    call = analysis.code(site.call)
    if isinstance(site.payload, cst.Name) and target == site.payload.value:
        return Fix(SAFE, "Drop the assignment of the call's None result", (replace_node(analysis, use, call),))
    if not isinstance(site.payload, cst.Name) or not isinstance(statement, cst.SimpleStatementLine) \
            or len(statement.body) != 1:
        return None
    where = analysis.position(statement)
    indent = analysis.line_text(where.start.line)[: where.start.column]
    replacement = f"{call}\n{indent}{target} = {site.payload.value}"
    return Fix(UNSAFE, f"Call it as a statement and bind '{target}' to '{site.payload.value}'",
               (replace_node(analysis, use, replacement),))
