"""Small questions about expressions, shared by several rules."""

from __future__ import annotations

import re
from typing import Iterator, Optional

import libcst as cst

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


def keyword_argument(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return None


def positional_arguments(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


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
    if is_none(expr):
        return True
    if isinstance(expr, (cst.List, cst.Tuple)):
        return any(has_none_leaf(e.value) for e in expr.elements if isinstance(e, cst.Element))
    if isinstance(expr, cst.Dict):
        return any(has_none_leaf(e.value) for e in expr.elements if isinstance(e, cst.DictElement))
    return False


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


def names_in_payload(expr: cst.BaseExpression, nested: bool) -> list[cst.Name]:
    """The plain names a broadcast sends: the argument itself, or with `nested` (accelerate walks
    lists, tuples and dicts) the names inside a literal container."""
    if isinstance(expr, cst.Name) and expr.value != "None":
        return [expr]
    if not nested:
        return []
    if isinstance(expr, (cst.List, cst.Tuple)):
        elements = [e.value for e in expr.elements if isinstance(e, cst.Element)]
    elif isinstance(expr, cst.Dict):
        elements = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
    else:
        return []
    return [name for element in elements for name in names_in_payload(element, nested)]
