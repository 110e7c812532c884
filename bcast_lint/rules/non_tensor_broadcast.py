from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.walk import every_node
from bcast_lint.fixes.object_list import object_list_fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

# Builtins whose result is never a tensor, and the class of that result.
_BUILTIN_RESULTS = {"builtins.str": "str", "builtins.repr": "str", "builtins.len": "int",
                    "builtins.int": "int", "builtins.float": "float", "builtins.bool": "bool"}
# Tensor methods that return Python objects.
_METHOD_RESULTS = {"item": "number", "tolist": "list"}
_CONTAINERS = {cst.List: "list", cst.Tuple: "tuple", cst.Dict: "dict"}
_MAX_DEPTH = 3  # name -> value -> name ...: enough for real code, and cycles end


@dataclass(frozen=True)
class _NonTensor:
    kind: str  # "str", "int", "list", "number" (from .item()), ...
    value: cst.BaseExpression  # the expression that is not a tensor
    name: Optional[str] = None  # the local name it reaches the call through
    nested: bool = False  # a leaf of a list/tuple/dict that accelerate walks


class NonTensorBroadcast(Rule):
    """
    ## What it does
    Flags a tensor broadcast (`accelerate.utils.broadcast`, `torch.distributed.broadcast`) given a
    value that is plainly not a tensor: a str, int, float or bool literal or f-string, the result
    of `str(...)`, `len(...)`, `int(...)`, `.item()` or `.tolist()`, or a local name assigned one
    of those. Accelerate walks lists, tuples and dicts, so a container is flagged only for such a
    leaf (`broadcast([a, b])` of tensors is fine); `torch.distributed.broadcast` takes a single
    tensor, so any list, tuple or dict is flagged.

    It also flags `torch.distributed.all_reduce`/`reduce` of a local name that starts as a number
    (`eval_loss = 0.0`) and becomes a tensor only in a loop over the rank's data
    (`for x, y in loader: eval_loss += loss.detach()`): on a rank whose shard yields no batch it is
    still the number when the reduction runs (llama-cookbook#297).

    ## Why is this bad?
    Only tensors can be broadcast. Once distributed, accelerate raises on each rank that passes one
    ``TypeError: Unsupported types (<class 'str'>) passed to `_gpu_broadcast_one`. Only nested
    list/tuple/dicts of objects that are valid for `is_torch_tensor` should be passed.``, and
    `torch.distributed.broadcast` raises ``TypeError: Invalid function argument. Expected parameter
    `tensor` of type torch.Tensor but got <class 'str'> instead.``. In a single process accelerate
    returns the value untouched, so single-process tests never see it.

    ## Example
    ```python
    run_name = f"run-{time.time():.0f}"
    run_name = broadcast(run_name)
    ```

    ## Use instead
    ```python
    run_name = f"run-{time.time():.0f}"
    run_name = broadcast_object_list([run_name])[0]
    ```
    With `torch.distributed`: `obj = [run_name]; dist.broadcast_object_list(obj, src=0); run_name = obj[0]`.

    ## Fix safety
    Unsafe: the fix rewrites the call into the object-list form (`x = broadcast(x)` becomes
    `x = broadcast_object_list([x])[0]`; `dist.broadcast(x, src=0)` becomes three lines through a
    one-element list), importing `broadcast_object_list` where needed. That pickles the value and
    changes the transport, and the receiving ranks' own value is discarded. It is offered only when
    the call is a statement of its own, bare or assigned to one name.

    ## References
    - [accelerate.utils.broadcast_object_list](https://huggingface.co/docs/accelerate/package_reference/utilities#accelerate.utils.broadcast_object_list)
    - [torch.distributed.broadcast_object_list](https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast_object_list)
    """

    code = "BCL008"
    VALID = (
        # A tensor from the start: a rank without batches reduces its zero.
        Valid("def evaluate(model, loader):\n    eval_loss = torch.zeros(())\n    for x, y in loader:\n"
              "        eval_loss += F.mse_loss(model(x), y).detach()\n    dist.all_reduce(eval_loss)"),
        # Made a tensor after the loop, whatever it holds.
        Valid("def evaluate(model, loader):\n    eval_loss = 0.0\n    for x, y in loader:\n"
              "        eval_loss += F.mse_loss(model(x), y).item()\n    eval_loss = torch.tensor(eval_loss)\n"
              "    dist.all_reduce(eval_loss)"),
        Valid("name = 'abc'\nobj = broadcast_object_list([name])"),
        Valid("a = torch.zeros(2)\nb = torch.ones(3)\na, b = broadcast([a, b])"),
        Valid("x = ['a', 'b']\nn = broadcast(torch.tensor(len(x)))"),
        Valid("loss = torch.zeros(1)\nloss = broadcast(loss)\nvalue = loss.item()"),
        Valid("t = torch.tensor([1.0])\ndist.broadcast(t, src=0)\nlr = t.tolist()"),
        Valid("def f(step):\n    broadcast(step)"),
        Valid("def len(x):\n    return torch.zeros(x)\nbroadcast(len('abc'))"),
        Valid("n = len(data)\ncount = torch.tensor([n])\ndist.broadcast(count, 0)"),
    )
    INVALID = (
        Invalid("def evaluate(model, loader):\n    eval_loss = 0.0\n    with torch.no_grad():\n"
                "        for x, y in loader:\n            eval_loss += F.mse_loss(model(x), y).detach()\n"
                "    dist.all_reduce(eval_loss)\n    return eval_loss",
                expected_message="all_reduce() is handed 'eval_loss', the number 0.0 until the loop at line 12 "
                "adds a tensor to it: on a rank whose 'loader' yields nothing it is still a number, and the call "
                "raises TypeError there (\"Invalid function argument. Expected parameter `tensor` of type "
                "torch.Tensor\") while the other ranks wait",
                range=(6, 5, 6, 31)),
        Invalid("run = f'run-{rank}'\nrun = broadcast(run)",
                expected_message="broadcast() is given 'run' (f'run-{rank}'), a str, not a tensor: "
                "accelerate raises TypeError for <class 'str'> once distributed, while a single process "
                "returns it untouched", range=(2, 7, 2, 21),
                expected_replacement="run = f'run-{rank}'\nrun = broadcast_object_list([run])[0]"),
        Invalid("n = len(data)\nbroadcast(n)",
                expected_message="broadcast() is given 'n' (len(data)), an int, not a tensor: accelerate "
                "raises TypeError for <class 'int'> once distributed, while a single process returns it "
                "untouched", range=(2, 1, 2, 13),
                expected_replacement="n = len(data)\nn = broadcast_object_list([n])[0]"),
        Invalid("lr = torch.tensor(0.1).item()\ndist.broadcast(lr, src=0)",
                expected_message="broadcast() is given 'lr' (torch.tensor(0.1).item()), a Python number, "
                "not a tensor: torch.distributed raises TypeError (expected torch.Tensor, got <class "
                "'int'> or <class 'float'>)", range=(2, 1, 2, 26),
                expected_replacement="lr = torch.tensor(0.1).item()\nlr_objects = [lr]\n"
                "dist.broadcast_object_list(lr_objects, src=0)\nlr = lr_objects[0]"),
        Invalid("ids = torch.zeros(2)\nbatch = broadcast({'ids': ids, 'epoch': 3})",
                expected_message="broadcast() is given a structure holding 3, an int, not a tensor: "
                "accelerate raises TypeError for <class 'int'> once distributed, while a single process "
                "returns it untouched", range=(2, 9, 2, 44),
                expected_replacement="ids = torch.zeros(2)\nbatch = broadcast_object_list([{'ids': ids, 'epoch': 3}])[0]"),
        Invalid("a = torch.zeros(2)\ndist.broadcast([a], 0)",
                expected_message="broadcast() is given [a], a list, not a tensor: torch.distributed "
                "raises TypeError (expected torch.Tensor, got <class 'list'>)", range=(2, 1, 2, 23)),
        Invalid("if accelerator.is_main_process:\n    tag = str(rank)\nelse:\n    tag = torch.zeros(1)\n"
                "tag = broadcast(tag, from_process=0)",
                expected_message="broadcast() is given 'tag' (str(rank)), a str, not a tensor: accelerate "
                "raises TypeError for <class 'str'> once distributed, while a single process returns it "
                "untouched", range=(5, 7, 5, 37),
                expected_replacement="if accelerator.is_main_process:\n    tag = str(rank)\nelse:\n"
                "    tag = torch.zeros(1)\ntag = broadcast_object_list([tag], from_process=0)[0]"),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        yield from _numbers_until_a_loop_runs(analysis)
        for site in analysis.broadcasts():
            if site.api.payload != apis.TENSOR or site.payload is None:
                continue
            found = _non_tensor(analysis, site, site.payload, 0)
            if found is not None:
                message, remedy = _message(analysis, site, found)
                yield Report(site.call, message, object_list_fix(analysis, site), remedy)


# torch.distributed's reductions, which take the tensor they reduce into.
_REDUCTIONS = frozenset({"all_reduce", "reduce"})


def _numbers_until_a_loop_runs(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`eval_loss = 0.0`, then `eval_loss += loss` over the rank's loader, then
    `dist.all_reduce(eval_loss)`: a tensor only once the loop ran, still the float on a rank whose
    shard has no batch, where the reduction raises TypeError (llama-cookbook#297)."""
    for site in analysis.calls:
        call = site.call if isinstance(site.call, cst.Call) else None  # (not a property read)
        payload = call.args[0].value if call is not None and call.args else None
        if not (site.api.qualified_name.startswith("torch.distributed.") and site.api.short_name in _REDUCTIONS
                and isinstance(payload, cst.Name) and isinstance(site.scope, cst.FunctionDef)):
            continue
        found = _started_as_number(analysis, site.scope, site.statement, payload.value)
        if found is not None:
            number, loop = found
            yield Report(site.call, f"{site.api.short_name}() is handed '{payload.value}', the number "
                         f"{analysis.code(number)} until the loop at line {analysis.position(loop).start.line} adds "
                         f"a tensor to it: on a rank whose '{analysis.code(loop.iter)}' yields nothing it is still a "
                         f"number, and the call raises TypeError there (\"Invalid function argument. Expected "
                         f"parameter `tensor` of type torch.Tensor\") while the other ranks wait",
                         help=f"Start it as a tensor: {payload.value} = torch.zeros(())")


def _started_as_number(analysis: ModuleAnalysis, scope: cst.FunctionDef, statement: cst.CSTNode,
                       name: str) -> Optional[tuple[cst.BaseExpression, cst.For]]:
    """(the number, the loop) where, among the statements of `scope`'s body before `statement`, the
    last two that bind `name` are `name = <number>` and a `for` over the rank's data whose body
    adds to it (`name += ...`)."""
    body = list(scope.body.body)
    if statement not in body:
        return None
    binding = [s for s in body[:body.index(statement)] if name in _bound_in(s)]
    loop = binding[-1] if binding else None
    while isinstance(loop, cst.With):  # `with torch.no_grad(): for x, y in loader: ...`
        loop = next((s for s in reversed(loop.body.body) if name in _bound_in(s)), None)
    if len(binding) < 2 or not isinstance(loop, cst.For) or _bound_in(loop).get(name) != "+=" \
            or not all(_adds_a_tensor(node) for node in every_node(loop, cst.AugAssign)
                       if isinstance(node.target, cst.Name) and node.target.value == name):
        return None
    start = binding[-2]
    value = start.body[0].value if isinstance(start, cst.SimpleStatementLine) \
        and isinstance(start.body[0], cst.Assign) and len(start.body[0].targets) == 1 else None
    words = analysis.code(loop.iter)
    if not isinstance(value, (cst.Integer, cst.Float)) or not any(word in words for word in apis.DATA_LOOP_WORDS):
        return None
    return value, loop


def _adds_a_tensor(augment: cst.AugAssign) -> bool:
    """`+= F.mse_loss(...).detach()`: a call's result, not a number (`loss.item()`, `len(y)`)."""
    value = augment.value
    return isinstance(value, cst.Call) and not (isinstance(value.func, cst.Attribute) and value.func.attr.value
                                                in _METHOD_RESULTS) \
        and not (isinstance(value.func, cst.Name) and value.func.value in ("len", "float", "int", "sum"))


def _bound_in(statement: cst.CSTNode) -> dict[str, str]:
    """The names a statement binds (its loop targets aside): name -> "=" or "+=" (how, the last time)."""
    bound: dict[str, str] = {}
    nodes = [node for kind in (cst.Assign, cst.AugAssign, cst.AnnAssign) for node in every_node(statement, kind)]
    for node in sorted(nodes, key=lambda node: isinstance(node, cst.AugAssign)):  # (order within is not kept)
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if isinstance(target, cst.Name):
                bound[target.value] = "+=" if isinstance(node, cst.AugAssign) else "="
    return bound


def _non_tensor(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression,
                depth: int) -> Optional[_NonTensor]:
    """The first value in `expr` (or reaching it, for a local name) that is certainly not a tensor."""
    kind = _scalar_kind(analysis, expr)
    if kind is not None:
        return _NonTensor(kind, expr)
    container = _CONTAINERS.get(type(expr))
    if container is not None:
        if not site.api.nested:
            return _NonTensor(container, expr)
        for element in expr.elements:
            found = _non_tensor(analysis, site, element.value, depth)
            if found is not None:
                return replace(found, nested=True)
        return None
    if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
        for value in _shown_first(analysis, site, set(analysis.reaching_values(site, expr))):
            found = _non_tensor(analysis, site, value, depth + 1)
            if found is not None:
                return replace(found, name=found.name or expr.value)
    return None


def _shown_first(analysis: ModuleAnalysis, site: CallSite, values: set) -> list:
    """Computed values (`f"..."`, `len(x)`) before plain literals, which are usually the
    receiving ranks' initial values; then in source order."""
    values = list(values)
    places = dict(zip(values, analysis.positions_within(site.scope, values)))
    return sorted(values, key=lambda value: (isinstance(value, _LITERALS), places[value].start.line,
                                             places[value].start.column))


_LITERALS = (cst.SimpleString, cst.Integer, cst.Float, cst.Name, cst.UnaryOperation)


def _scalar_kind(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> Optional[str]:
    """The Python class of a value that is certainly a scalar or a string, else None."""
    if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString)):
        return "str"
    if isinstance(expr, cst.SimpleString):
        return type(expr.evaluated_value).__name__
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
        return {cst.Integer: "int", cst.Float: "float", cst.Imaginary: "complex"}[type(expr)]
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool"
    if isinstance(expr, cst.UnaryOperation):
        if isinstance(expr.operator, cst.Not):
            return "bool"
        return _scalar_kind(analysis, expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        left, right = _scalar_kind(analysis, expr.left), _scalar_kind(analysis, expr.right)
        if left is None or right is None:
            return None
        return "str" if "str" in (left, right) else "float" if "float" in (left, right) else left
    if isinstance(expr, cst.Call):
        return _call_kind(analysis, expr)
    return None


def _call_kind(analysis: ModuleAnalysis, call: cst.Call) -> Optional[str]:
    if isinstance(call.func, cst.Attribute) and not call.args:
        return _METHOD_RESULTS.get(call.func.attr.value)
    return next((_BUILTIN_RESULTS[q] for q in analysis.qualified_names(call) if q in _BUILTIN_RESULTS), None)


def _message(analysis: ModuleAnalysis, site: CallSite, found: _NonTensor) -> tuple[str, str]:
    """What is wrong, and the remedy."""
    value = " ".join(analysis.code(found.value).split())
    if len(value) > 40:
        value = value[:37] + "..."
    given = f"'{found.name}' ({value})" if found.name else value
    if found.nested:
        given = f"a structure holding {given}"
    kind = {"number": "a Python number", "list": "a list", "int": "an int"}.get(found.kind, f"a {found.kind}")
    python_class = "<class 'int'> or <class 'float'>" if found.kind == "number" else f"<class '{found.kind}'>"
    if site.api.nested:
        failure = (f"accelerate raises TypeError for {python_class} once distributed, while a single "
                   "process returns it untouched")
        remedy = "broadcast_object_list([value])[0]"
    elif site.api.returns_none:
        failure = f"torch.distributed raises TypeError (expected torch.Tensor, got {python_class})"
        remedy = "broadcast_object_list() on a one-element list"
    else:
        failure = "it accepts only tensors"
        remedy = "a tensor (torch.tensor(value)) or broadcast_object_list()"
    return f"{site.api.short_name}() is given {given}, {kind}, not a tensor: {failure}", f"Use {remedy}"
