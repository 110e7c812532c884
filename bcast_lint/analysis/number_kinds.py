"""Python numbers that are an `int` on one path and a `float` on another.

`torch.tensor(hits / total if total else 0)` makes an int64 tensor where the `0` is chosen and a
float32 one elsewhere (torch's inference from a Python scalar, default dtype float32). Where the
choice follows each rank's own data, a collective meets tensors of two dtypes: elements of 8 and
4 bytes (speculators#1116: `torch.tensor(n_bad / n_rows if n_bad else 0)` all-reduced).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from bcast_lint.analysis.expressions import last_name

INT, FLOAT = "int", "float"
# What a Python scalar of each kind becomes in `torch.tensor(x)`.
TENSOR_DTYPES = {INT: "int64", FLOAT: "float32"}
_INT_CALLS = frozenset({"len", "int", "round"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Modulo, cst.Power)


def number_kind(expr: cst.BaseExpression) -> Optional[str]:
    """INT or FLOAT for an expression whose Python number kind its text settles, else None."""
    if isinstance(expr, cst.Integer):
        return INT
    if isinstance(expr, cst.Float):
        return FLOAT
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return number_kind(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide):
            return FLOAT  # true division of numbers is a float, even 4 / 2
        kinds = {number_kind(expr.left), number_kind(expr.right)}
        if isinstance(expr.operator, (*_ARITHMETIC, cst.FloorDivide)) and None not in kinds:
            return FLOAT if FLOAT in kinds else INT
        return None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        if expr.func.value in _INT_CALLS and len(expr.args) == 1:
            return INT
        if expr.func.value == "float":
            return FLOAT
    return None


def mixed_choice(expr: cst.BaseExpression) -> Optional[cst.IfExp]:
    """`a / b if b else 0`: a conditional expression whose arms are an int and a float."""
    if not isinstance(expr, cst.IfExp):
        return None
    kinds = {number_kind(expr.body), number_kind(expr.orelse)}
    return expr if kinds == {INT, FLOAT} else None


def scalar_tensor_source(call: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x` of `torch.tensor(x)` or `torch.as_tensor(x)` with no `dtype`: the dtype follows `x`."""
    if not isinstance(call, cst.Call) or last_name(call.func) not in ("tensor", "as_tensor") or not call.args:
        return None
    if any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in call.args) or len(call.args) > 1 \
            and call.args[1].keyword is None:
        return None
    return call.args[0].value if call.args[0].keyword is None else None
