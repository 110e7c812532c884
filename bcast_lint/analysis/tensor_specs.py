"""The shape and dtype a tensor expression has, when the code alone says so.

`tensor_spec(expr, qualified_names)` reads a constructor call (`torch.zeros(n)`,
`torch.randint(0, 10, (8,))`, `x.new_full((4,), 1.0)`, ...), the methods chained onto it that
keep its shape (`.long()`, `.to(torch.float16)`, `.cuda()`, `.clone()`, `.detach()`, `.uniform_()`)
and arithmetic with Python numbers (`torch.rand(4) * 0.5 + 0.25`), and answers with a TensorSpec. Nothing is guessed: a
part that depends on a runtime value is None, and a dimension written as an expression is kept
as its source text, so two such dimensions are known to agree only when they are written alike.

Default dtypes are PyTorch's with the default dtype left at float32 (`torch.set_default_dtype`
is not followed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Optional, Union

import libcst as cst

from bcast_lint.analysis.expressions import argument, argument_value, positional_arguments
from bcast_lint.analysis.positions import node_code

Dim = Union[int, str]  # a literal size, or the source text of a size expression
QualifiedNames = Callable[[cst.CSTNode], set]

# Canonical name and size in bytes of each dtype, under every name torch gives it.
_DTYPES = {
    "float32": ("float32", 4), "float": ("float32", 4), "float64": ("float64", 8),
    "double": ("float64", 8), "float16": ("float16", 2), "half": ("float16", 2),
    "bfloat16": ("bfloat16", 2), "int64": ("int64", 8), "long": ("int64", 8),
    "int32": ("int32", 4), "int": ("int32", 4), "int16": ("int16", 2), "short": ("int16", 2),
    "int8": ("int8", 1), "uint8": ("uint8", 1), "bool": ("bool", 1),
    "complex64": ("complex64", 8), "cfloat": ("complex64", 8),
    "complex128": ("complex128", 16), "cdouble": ("complex128", 16),
}
# `dtype=int` and friends: Python types stand for these dtypes.
_PYTHON_TYPES = {"builtins.int": "int64", "builtins.float": "float64", "builtins.bool": "bool"}
# Conversion methods and the dtype they produce.
_CONVERSIONS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                "long": "int64", "int": "int32", "short": "int16", "byte": "uint8", "bool": "bool"}
_DEVICE_METHODS = {"cuda", "cpu"}
# Methods that return a tensor of the receiver's shape and dtype: copies, detached or pinned
# versions, and in-place methods (which return the receiver) other than those reshaping it.
_KEEPING_METHODS = {"clone", "detach", "contiguous", "pin_memory", "abs", "neg", "negative", "positive"}
_RESHAPING_IN_PLACE = {"resize_", "resize_as_", "set_", "t_", "transpose_", "squeeze_", "unsqueeze_",
                       "as_strided_", "swapaxes_", "swapdims_"}
_CHAINED_METHODS = {*_CONVERSIONS, *_DEVICE_METHODS, *_KEEPING_METHODS, "type", "to"}
# Element-wise operators: the tensor's shape, and its dtype promoted by the other operand.
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_FLOATING = {"float16", "bfloat16", "float32", "float64", "complex64", "complex128"}
_SCALAR_CALLS = {"builtins.len": "int64", "builtins.int": "int64", "builtins.float": "float32",
                 "builtins.bool": "bool"}

# torch.* constructors whose size is given positionally (`zeros(2, 3)`, `zeros((2, 3))`) or as size=.
_SIZED = {"zeros", "ones", "empty", "rand", "randn"}
_LIKE = {"zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like", "randint_like"}
_NEW_METHODS = {"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"}


@dataclass(frozen=True)
class TensorSpec:
    """What a tensor expression is made of.

    constructor: "torch.zeros", "torch.randint", "Tensor.new_zeros", ...
    call: the constructor call itself (the innermost call of a `.to()`/`.cuda()` chain).
    shape: the dimensions, each an int or the source text of an expression; None when unknown.
    dtype: canonical dtype name ("float32", "int64", ...); None when unknown.
    dtype_node: what decided the dtype: the constructor's `dtype=` Arg, a conversion call in the
        chain (`.long()`), or None when it is the constructor's default.
    device: the expression placing the tensor (`device=` value, `.to()` argument, or the `.cuda()`
        call itself); None for the default device.
    size_arguments: the argument expressions that give the shape, () when the constructor takes no
        size (`randperm`, `tensor`, `*_like`).
    size_varargs: the size is written as separate positional numbers (`zeros(2, 3)`).
    rank_ambiguous: the shape comes from one expression that may itself be a sequence
        (`zeros(n)` is `(n,)` or `n`): its number of dimensions is not known.
    expression: the whole expression read, conversions included (`torch.zeros(3).long()`).
    """

    constructor: str
    call: cst.Call
    shape: Optional[tuple[Dim, ...]]
    dtype: Optional[str]
    dtype_node: Optional[cst.CSTNode] = None
    device: Optional[cst.CSTNode] = None
    size_arguments: tuple[cst.BaseExpression, ...] = ()
    size_varargs: bool = False
    rank_ambiguous: bool = False
    expression: Optional[cst.BaseExpression] = None

    @property
    def shape_text(self) -> Optional[str]:
        return None if self.shape is None else shape_text(self.shape)


def tensor_spec(expr: cst.BaseExpression, qualified_names: QualifiedNames) -> Optional[TensorSpec]:
    """The spec of `expr` when it is a known tensor constructor (possibly converted, moved, copied
    or combined with numbers), else None."""
    spec = _spec(expr, qualified_names)
    return None if spec is None else _with(spec, expression=expr)


def _spec(expr: cst.BaseExpression, qualified_names: QualifiedNames) -> Optional[TensorSpec]:
    if isinstance(expr, cst.BinaryOperation):
        return _arithmetic_spec(expr, qualified_names)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _spec(expr.expression, qualified_names)
    if not isinstance(expr, cst.Call):
        return None
    if isinstance(expr.func, cst.Attribute) and _is_chained(expr.func.attr.value):
        base = _spec(expr.func.value, qualified_names)
        if base is not None:
            return _apply_method(base, expr, qualified_names)
    return _constructor_spec(expr, qualified_names)


def _is_chained(method: str) -> bool:
    in_place = method.endswith("_") and not method.startswith("_")
    return method in _CHAINED_METHODS or (in_place and method not in _RESHAPING_IN_PLACE)


def dtype_name(expr: cst.BaseExpression, qualified_names: QualifiedNames) -> Optional[str]:
    """"int64" for `torch.int64`, `torch.long`, `th.long` or `int`; None when not a literal dtype."""
    for qualified in qualified_names(expr):
        if qualified in _PYTHON_TYPES:
            return _PYTHON_TYPES[qualified]
        module, _, attr = qualified.rpartition(".")
        if module == "torch" and attr in _DTYPES:
            return _DTYPES[attr][0]
    return None


def dtype_size(dtype: Optional[str]) -> Optional[int]:
    return _DTYPES[dtype][1] if dtype in _DTYPES else None


def element_count(shape: Optional[tuple[Dim, ...]]) -> Optional[int]:
    if shape is None or not all(isinstance(dim, int) for dim in shape):
        return None
    return math.prod(shape)


def byte_size(spec: TensorSpec) -> Optional[int]:
    count, size = element_count(spec.shape), dtype_size(spec.dtype)
    return None if count is None or size is None else count * size


def shapes_differ(a: TensorSpec, b: TensorSpec) -> bool:
    """True only when the two shapes are certainly different."""
    if a.shape is None or b.shape is None or a.rank_ambiguous or b.rank_ambiguous:
        return False
    if len(a.shape) != len(b.shape):
        return True
    return any(isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(a.shape, b.shape))


def shapes_equal(a: TensorSpec, b: TensorSpec) -> bool:
    """True only when the two shapes are certainly the same (dimensions written alike)."""
    return a.shape is not None and a.shape == b.shape


def dtypes_differ(a: TensorSpec, b: TensorSpec) -> bool:
    return a.dtype is not None and b.dtype is not None and a.dtype != b.dtype


def shape_text(shape: tuple[Dim, ...]) -> str:
    """`(8,)`, `(n, 4)`, `()`: the shape as a tuple literal."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(dim) for dim in shape) + ")"


# -- constructors ---------------------------------------------------------------------------
def _constructor_spec(call: cst.Call, qualified_names: QualifiedNames) -> Optional[TensorSpec]:
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _NEW_METHODS:
        name, qualified = call.func.attr.value, f"Tensor.{call.func.attr.value}"
    else:
        qualified = next((q for q in qualified_names(call) if q.startswith("torch.")), None)
        if qualified is None or qualified.count(".") != 1:
            return None
        name = qualified.split(".")[1]
    reader = _READERS.get(name)
    if reader is None:
        return None
    fields = reader(call, qualified_names)
    if fields is None:
        return None
    spec = TensorSpec(qualified, call, **fields)
    explicit = argument(call, keyword="dtype")
    if explicit is not None:
        spec = _with(spec, dtype=dtype_name(explicit.value, qualified_names), dtype_node=explicit)
    device = argument_value(call, keyword="device")
    return _with(spec, device=device) if device is not None else spec


def _sized(call: cst.Call, names: QualifiedNames, dtype: Optional[str]) -> Optional[dict]:
    """zeros/ones/empty/rand/randn/new_zeros: `f(2, 3)`, `f((2, 3))`, `f(n)`, `f(size=(2, 3))`."""
    keyword = argument_value(call, keyword="size")
    args = [keyword] if keyword is not None else _leading_positionals(call)
    if any(arg.star for arg in call.args):
        return {"shape": None, "dtype": dtype}
    if not args:
        return None
    if len(args) == 1 and keyword is None and isinstance(args[0], cst.Integer):
        return _fields(args, (int(args[0].value, 0),), dtype, varargs=True)
    if len(args) == 1:
        shape, ambiguous = _sequence_shape(args[0])
        return _fields(args, shape, dtype, ambiguous=ambiguous)
    return _fields(args, tuple(_dim(arg) for arg in args), dtype, varargs=True)


def _full(call: cst.Call, names: QualifiedNames) -> Optional[dict]:
    """full(size, fill_value) / Tensor.new_full(size, fill_value): the fill value's type sets the dtype."""
    size = argument_value(call, 0, "size")
    fill = argument_value(call, 1, "fill_value")
    if size is None:
        return None
    shape, ambiguous = _sequence_shape(size)
    dtype = _scalar_dtype(fill, names) if fill is not None else None
    return _fields((size,), shape, dtype, ambiguous=ambiguous)


def _randint(call: cst.Call, names: QualifiedNames) -> Optional[dict]:
    positional = positional_arguments(call)
    size = argument_value(call, keyword="size")
    if size is None and len(positional) in (2, 3):
        size = positional[-1]
    if size is None:
        return None
    shape, ambiguous = _sequence_shape(size)
    return _fields((size,), shape, "int64", ambiguous=ambiguous)


def _randperm(call: cst.Call, names: QualifiedNames) -> Optional[dict]:
    n = argument_value(call, 0, "n")
    return None if n is None else {"shape": (_dim(n),), "dtype": "int64"}


def _arange(call: cst.Call, names: QualifiedNames) -> Optional[dict]:
    args = positional_arguments(call)
    if any(arg.keyword is not None and arg.keyword.value in ("start", "end", "step") for arg in call.args):
        return {"shape": None, "dtype": None}
    numbers = [_number(arg) for arg in args]
    if args and all(n is not None for n in numbers):
        start, end, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers[:2], numbers[2] if len(numbers) > 2 else 1)
        count = max(0, math.ceil((end - start) / step)) if step else None
        floats = any(isinstance(n, float) for n in numbers)
        return {"shape": None if count is None else (count,), "dtype": "float32" if floats else "int64"}
    if len(args) == 1:  # arange(n): n elements, of a dtype that depends on n's type
        return {"shape": (_dim(args[0]),), "dtype": None}
    return {"shape": None, "dtype": None}


def _linspace(call: cst.Call, names: QualifiedNames) -> Optional[dict]:
    steps = argument_value(call, 2, "steps")
    return {"shape": None if steps is None else (_dim(steps),), "dtype": "float32"}


def _data(call: cst.Call, names: QualifiedNames, inherits_dtype: bool = False) -> Optional[dict]:
    """tensor(data) / Tensor.new_tensor(data): shape and dtype of a literal nested list."""
    data = argument_value(call, 0, "data")
    if data is None:
        return None
    shape, dtype = _data_shape(data, names)
    return {"shape": shape, "dtype": None if inherits_dtype else dtype}


def _like(call: cst.Call, names: QualifiedNames) -> Optional[dict]:
    return {"shape": None, "dtype": None}  # both come from the template tensor


def _fields(args, shape, dtype, ambiguous=False, varargs=False) -> dict:
    return {"shape": shape, "dtype": dtype, "size_arguments": tuple(args),
            "rank_ambiguous": ambiguous, "size_varargs": varargs}


_READERS = {
    **{name: (lambda call, names: _sized(call, names, "float32")) for name in _SIZED},
    "full": _full,
    "randint": _randint,
    "randperm": _randperm,
    "arange": _arange,
    "linspace": _linspace,
    "tensor": _data,
    **{name: _like for name in _LIKE},
    # Tensor.new_*: the dtype is the receiver tensor's unless given.
    **{name: (lambda call, names: _sized(call, names, None)) for name in ("new_zeros", "new_ones", "new_empty")},
    "new_full": lambda call, names: {**(_full(call, names) or {"shape": None}), "dtype": None},
    "new_tensor": lambda call, names: _data(call, names, inherits_dtype=True),
}


# -- arithmetic -----------------------------------------------------------------------------
def _arithmetic_spec(expr: cst.BinaryOperation, qualified_names: QualifiedNames) -> Optional[TensorSpec]:
    """`t * 0.5`, `1 - t`, `t / 2`: t's shape with the promoted dtype; `a + b` of two tensors
    only when both are known and alike (otherwise broadcasting or promotion decides)."""
    if not isinstance(expr.operator, _ARITHMETIC):
        return None
    left, right = _spec(expr.left, qualified_names), _spec(expr.right, qualified_names)
    if left is not None and right is not None:
        alike = left.shape is not None and (left.shape, left.dtype) == (right.shape, right.dtype)
        return left if alike else None
    tensor, other = (left, expr.right) if left is not None else (right, expr.left)
    number = _number(other)
    if tensor is None or number is None:
        return None
    dtype = _promoted(tensor.dtype, number, expr.operator)
    return _with(tensor, dtype=dtype, dtype_node=tensor.dtype_node if dtype == tensor.dtype else expr)


def _promoted(dtype: Optional[str], number: Union[int, float], operator: cst.BaseBinaryOp) -> Optional[str]:
    """PyTorch's result dtype for a tensor and a Python number: a floating tensor keeps its dtype;
    an integer or bool tensor becomes the default float with a float or under `/`, and a bool
    one int64 with an int."""
    if dtype is None or dtype in _FLOATING:
        return dtype
    if isinstance(number, float) or isinstance(operator, cst.Divide):
        return "float32"
    return "int64" if dtype == "bool" else dtype


# -- methods chained onto the constructor ---------------------------------------------------
def _apply_method(spec: TensorSpec, call: cst.Call, qualified_names: QualifiedNames) -> TensorSpec:
    method = call.func.attr.value
    if method in _CONVERSIONS and not call.args:
        return _with(spec, dtype=_CONVERSIONS[method], dtype_node=call)
    if method in _DEVICE_METHODS:
        return _with(spec, device=call)
    if method == "type":
        args = positional_arguments(call)
        dtype = dtype_name(args[0], qualified_names) if args else None
        return _with(spec, dtype=dtype, dtype_node=call)
    if method == "to":
        return _apply_to(spec, call, qualified_names)
    return spec


def _apply_to(spec: TensorSpec, call: cst.Call, qualified_names: QualifiedNames) -> TensorSpec:
    """`.to(device)`, `.to(dtype)`, `.to(device, dtype)`, `.to(dtype=...)`; `.to(other)` copies
    another tensor's dtype, which is unknown."""
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "device" or (keyword is None and _is_device(arg.value, qualified_names)):
            spec = _with(spec, device=arg.value)
        elif keyword in (None, "dtype"):
            spec = _with(spec, dtype=dtype_name(arg.value, qualified_names), dtype_node=call)
    return spec


def _is_device(expr: cst.BaseExpression, qualified_names: QualifiedNames) -> bool:
    if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.Integer)):
        return True
    if isinstance(expr, cst.Call):
        return "torch.device" in qualified_names(expr)
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "device"
    return isinstance(expr, cst.Name) and ("device" in expr.value or expr.value == "dev")


# -- literals -------------------------------------------------------------------------------
def _leading_positionals(call: cst.Call) -> list[cst.BaseExpression]:
    leading = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            break
        leading.append(arg.value)
    return leading


def _dim(expr: cst.BaseExpression) -> Dim:
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    return node_code(expr)


def _sequence_shape(expr: cst.BaseExpression) -> tuple[Optional[tuple[Dim, ...]], bool]:
    """(shape, rank_ambiguous) of a size argument: `(2, 3)`, `[n]`, `8`, or a name holding either."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        if any(not isinstance(e, cst.Element) or e.value is None for e in expr.elements):
            return None, False
        if any(isinstance(e, cst.StarredElement) for e in expr.elements):
            return None, False
        return tuple(_dim(e.value) for e in expr.elements), False
    if isinstance(expr, cst.Integer):
        return (int(expr.value, 0),), False
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return (_dim(expr),), True
    return None, False


def _number(expr: cst.BaseExpression) -> Optional[Union[int, float]]:
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.Float):
        return float(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        value = _number(expr.expression)
        return None if value is None else -value
    return None


def _scalar_dtype(expr: cst.BaseExpression, names: QualifiedNames) -> Optional[str]:
    """The dtype torch infers from a Python scalar: a literal, or `len()`/`int()`/`float()`/`bool()`."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool"
    if isinstance(expr, cst.Call):
        return next((_SCALAR_CALLS[q] for q in names(expr) if q in _SCALAR_CALLS), None)
    value = _number(expr)
    if value is None:
        return None
    return "float32" if isinstance(value, float) else "int64"


def _data_shape(expr: cst.BaseExpression, names: QualifiedNames) -> tuple[Optional[tuple[int, ...]], Optional[str]]:
    """Shape and inferred dtype of a literal scalar or (nested) list/tuple of literal scalars."""
    if not isinstance(expr, (cst.List, cst.Tuple)):
        dtype = _scalar_dtype(expr, names)
        return ((), dtype) if dtype is not None else (None, None)
    items = [_data_shape(e.value, names) if isinstance(e, cst.Element) else (None, None) for e in expr.elements]
    shapes = {shape for shape, _ in items}
    if not items:
        return (0,), "float32"
    if None in shapes or len(shapes) != 1:
        return None, None
    dtypes = {dtype for _, dtype in items}
    dtype = "float32" if "float32" in dtypes else "int64" if "int64" in dtypes else "bool"
    return (len(items), *shapes.pop()), dtype


def _with(spec: TensorSpec, **changes) -> TensorSpec:
    return replace(spec, **changes)
