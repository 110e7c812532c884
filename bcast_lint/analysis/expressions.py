"""Small questions about expressions, shared by several rules."""

from __future__ import annotations

import re
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.positions import node_code

# Methods that return a (converted or moved) copy: the allocation underneath still decides
# what the value holds and where it lives.
_PASS_THROUGH_METHODS = {"to", "cuda", "cpu", "contiguous", "pin_memory", "float", "half", "double",
                         "long", "int", "bool", "bfloat16", "byte", "type", "requires_grad_"}
_INDEXED_DEVICE = re.compile(r"^(cuda|xpu|npu|hpu):\d+$")


def call_chain(expr: cst.BaseExpression) -> Iterator[cst.Call]:
    """`torch.zeros(3).cuda(0)` yields the `.cuda(0)` call, then `torch.zeros(3)`."""
    while isinstance(expr, cst.Call):
        yield expr
        func = expr.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _PASS_THROUGH_METHODS):
            return
        expr = func.value


def allocation(expr: cst.BaseExpression) -> Optional[cst.Call]:
    """The innermost call of a pass-through chain: the constructor that made the value."""
    innermost = None
    for call in call_chain(expr):
        innermost = call
    return innermost


def method_name(call: cst.Call) -> Optional[str]:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def argument(call: cst.Call, position: Optional[int] = None, keyword: Optional[str] = None) -> Optional[cst.Arg]:
    """The argument passed as `keyword=`, or as the `position`-th (0-based) before any keyword or
    star (TorchFix's get_specific_arg); None when it is not written out."""
    for index, arg in enumerate(call.args):
        if keyword is not None and arg.keyword is not None and arg.keyword.value == keyword:
            return arg
        if arg.keyword is None and not arg.star and index == position:
            return arg
    return None


def argument_value(call: cst.Call, position: Optional[int] = None,
                   keyword: Optional[str] = None) -> Optional[cst.BaseExpression]:
    found = argument(call, position, keyword)
    return found.value if found is not None else None


def positional_arguments(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def self_name(scope: cst.CSTNode) -> Optional[str]:
    """The first parameter of a function: `self` when it is a method."""
    if not isinstance(scope, cst.FunctionDef) or not scope.params.params:
        return None
    return scope.params.params[0].name.value


def is_self_attribute(expr: cst.BaseExpression) -> bool:
    """`self.x`: an attribute of the method's own object."""
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def attribute_key(expr: cst.BaseExpression) -> Optional[str]:
    """"self.weights" for `self.weights`, "state.best" for `state.best`: an attribute of a name,
    which the data flow can follow like a local (analysis.flow)."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return f"{expr.value.value}.{expr.attr.value}"
    return None


def payload_attributes(expr: cst.BaseExpression, nested: bool) -> list[cst.Attribute]:
    """The `obj.attr` values a broadcast sends, as names_in_payload finds plain names."""
    if attribute_key(expr) is not None:
        return [expr]
    if not nested or not isinstance(expr, (cst.List, cst.Tuple, cst.Dict)):
        return []
    elements = [e.value for e in expr.elements if isinstance(e, (cst.Element, cst.DictElement))]
    return [found for element in elements for found in payload_attributes(element, nested)]


def is_exit_call(call: cst.Call) -> bool:
    """`sys.exit(...)`, `exit()`, `quit()`, `os._exit(...)`: the process stops here."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value in ("exit", "quit")
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and (func.value.value, func.attr.value) in (("sys", "exit"), ("os", "_exit")))


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def has_none_leaf(expr: cst.BaseExpression) -> bool:
    """None itself, or a list/tuple/dict literal with a None somewhere inside."""
    return any(is_none(leaf) for leaf in payload_leaves(expr, nested=True))


def indexed_device_text(expr: cst.BaseExpression) -> Optional[str]:
    """'cuda:0' for "cuda:0", 0 / 'cuda:0' for the literal 0, torch.device("cuda", 0), ...

    Returns the device as written, or None when the expression is not a literal indexed device.
    """
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) and _INDEXED_DEVICE.match(value) else None
    if isinstance(expr, cst.Integer):
        return expr.value
    if isinstance(expr, cst.Call) and last_name(expr.func) == "device":
        args = positional_arguments(expr)
        if len(args) == 1:
            return indexed_device_text(args[0])
        if len(args) == 2 and isinstance(args[0], cst.SimpleString) and isinstance(args[1], cst.Integer):
            return f"{args[0].evaluated_value}:{args[1].value}"
    return None


def last_name(expr: cst.BaseExpression) -> Optional[str]:
    """`broadcast` for `broadcast`, `dist.broadcast` or `accelerator.on_process(...)`'s `on_process`."""
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def literal_items(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values of a dict literal, or the elements of a list or tuple literal (not `*rest` nor
    `**rest`); [] for anything else."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [element.value for element in expr.elements if isinstance(element, cst.Element)]
    if isinstance(expr, cst.Dict):
        return [element.value for element in expr.elements if isinstance(element, cst.DictElement)]
    return []


def payload_leaves(expr: cst.BaseExpression, nested: bool) -> list[cst.BaseExpression]:
    """What a broadcast sends: the argument itself, or with `nested` (accelerate walks lists,
    tuples and dicts) the leaves of a literal container."""
    if not (nested and isinstance(expr, (cst.List, cst.Tuple, cst.Dict))):
        return [expr]
    return [leaf for element in literal_items(expr) for leaf in payload_leaves(element, nested)]


def names_in_payload(expr: cst.BaseExpression, nested: bool) -> list[cst.Name]:
    """The plain names among the payload's leaves."""
    return [leaf for leaf in payload_leaves(expr, nested) if isinstance(leaf, cst.Name) and not is_none(leaf)]


def cut_to_multiple(expr: cst.BaseExpression) -> Optional[str]:
    """The code of `w` for `n // w * w`, `w * (n // w)` or `n - n % w`: a count cut to a multiple of `w`."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract) \
            and isinstance(expr.right, cst.BinaryOperation) and isinstance(expr.right.operator, cst.Modulo) \
            and node_code(expr.right.left) == node_code(expr.left):
        return node_code(expr.right.right)
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)):
        return None
    for quotient, factor in ((expr.left, expr.right), (expr.right, expr.left)):
        if isinstance(quotient, cst.BinaryOperation) and isinstance(quotient.operator, cst.FloorDivide):
            code = node_code(factor)
            if code == node_code(quotient.right):
                return code
    return None


def even_strides(index: cst.Slice, multiple_of=cut_to_multiple) -> bool:
    """`items[rank:usable:world]` with `usable` cut to a multiple of `world` (`multiple_of` says
    of what a bound is one): every start below `world` takes as many items, the rank's own among
    them. A literal step may be below the rank: not counted."""
    return index.step is not None and index.upper is not None and not isinstance(index.step, cst.Integer) \
        and multiple_of(index.upper) == node_code(index.step)


def range_span(call: cst.Call) -> Optional[list[cst.BaseExpression]]:
    """What the length of `range(start, stop[, step])` depends on: the operands left in `stop -
    start` once like terms cancel (`range(rank * 4, rank * 4 + 4)`: none; `range(rank * n,
    (rank + 1) * n)`: `n`), and the step. None where the bounds are not sums of products."""
    arguments = positional_arguments(call)
    if len(arguments) not in (2, 3):
        return None
    atoms: dict[str, cst.BaseExpression] = {}
    stop, start = _linear(arguments[1], atoms), _linear(arguments[0], atoms)
    if stop is None or start is None:
        return None
    span = {term: stop.get(term, 0) - start.get(term, 0) for term in {*stop, *start}}
    left = {atom for term, coefficient in span.items() if coefficient for atom in term}
    return [atoms[atom] for atom in sorted(left)] + arguments[2:]


def _linear(expr: cst.BaseExpression, atoms: dict) -> Optional[dict[tuple, int]]:
    """`expr` as a sum of products: product of operand texts (sorted) -> integer coefficient;
    names, attributes and calls are operands (`atoms`: text -> node)."""
    if isinstance(expr, cst.Integer):
        return {(): int(expr.evaluated_value)}
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        text = node_code(expr)
        atoms[text] = expr
        return {(text,): 1}
    if not isinstance(expr, cst.BinaryOperation):
        return None
    left, right = _linear(expr.left, atoms), _linear(expr.right, atoms)
    if left is None or right is None:
        return None
    if isinstance(expr.operator, (cst.Add, cst.Subtract)):
        sign = 1 if isinstance(expr.operator, cst.Add) else -1
        return {term: left.get(term, 0) + sign * right.get(term, 0) for term in {*left, *right}}
    if isinstance(expr.operator, cst.Multiply):
        product: dict[tuple, int] = {}
        for one, a in left.items():
            for other, b in right.items():
                term = tuple(sorted(one + other))
                product[term] = product.get(term, 0) + a * b
        return product
    return None


def none_test(test: cst.BaseExpression) -> tuple[Optional[str], bool]:
    """(`x`, True) for `x is None`, (`x`, False) for `x is not None` (and their negations): the
    name tested and the truth of the test when it is None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        name, none_when = none_test(test.expression)
        return name, not none_when
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.left, cst.Name) and is_none(test.comparisons[0].comparator)):
        return None, False
    operator = test.comparisons[0].operator
    if isinstance(operator, (cst.Is, cst.IsNot)):
        return test.left.value, isinstance(operator, cst.Is)
    return None, False
