from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.expressions import allocation, method_name, positional_arguments
from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import SAFE, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

# What each uninitialised constructor becomes in the fix: same arguments, zero-filled.
_ZEROING = {"torch.empty": "zeros", "torch.empty_like": "zeros_like", "torch.Tensor": "zeros"}


class UninitializedPlaceholder(Rule):
    """
    ## What it does
    Flags a tensor allocated with `torch.empty`, `torch.empty_like`, `Tensor.new_empty` or
    `torch.Tensor(n)` that flows into a broadcast, whole or as a slice (`broadcast(buf[:k])`
    leaves the rest of `buf` uninitialised on the receiving ranks). A buffer that every rank fills
    whole in place on the way to the broadcast (`buf.zero_()`, `buf.fill_(v)`, `buf.copy_(x)`,
    `buf.normal_()`, `buf[:] = x`) is initialised and not reported; a partial write
    (`buf[:k] = x`, `buf += x`) leaves the rest as it was and does not count.

    ## Why is this bad?
    Uninitialised memory holds whatever was there before. Where the source rank does not overwrite
    every element (it skipped the fill, filled a slice, or the source is another rank than the one
    that filled it), garbage is broadcast and every rank silently trains on it. A zero-filled
    placeholder costs the same and makes such mistakes visible.

    This rule flags receivers of the right shape too (the Megatron-LM style
    `buf = torch.empty(n); dist.broadcast(buf, 0)`): they are correct only while the source fills
    every element, which the linter cannot prove. Add `# noqa: BCL003` where you know it does.

    ## Example
    ```python
    ids = torch.empty(n, dtype=torch.int64, device=accelerator.device)
    if accelerator.is_main_process:
        ids[:k] = selected
    broadcast(ids)
    ```

    ## Use instead
    ```python
    ids = torch.zeros(n, dtype=torch.int64, device=accelerator.device)
    ```

    ## Fix safety
    Safe: `torch.empty` → `torch.zeros`, `empty_like` → `zeros_like`, `new_empty` → `new_zeros`,
    with the same arguments. Zero-filling only replaces unspecified contents.
    """

    code = "BCL003"
    VALID = (
        Valid("x = torch.zeros(4)\nbroadcast(x)"),
        Valid("x = torch.Tensor([1.0, 2.0])\nbroadcast(x)"),
        Valid("x = torch.Tensor([0.0] * (2 + n))\ndist.broadcast(x, 0)"),
        Valid("x = torch.empty(4)\ny = torch.zeros(4)\nbroadcast(y)"),
        # Filled in place on every rank before the broadcast: nothing uninitialised is left.
        Valid("x = torch.empty(4)\nx.zero_()\ndist.broadcast(x, 0)"),
        Valid("x = torch.empty(4)\nx.data.fill_(1.0)\nbroadcast(x)"),
        Valid("x = torch.empty(4)\nx[:] = 1.0\nbroadcast(x)"),
    )
    INVALID = (
        Invalid("x = torch.empty(4)\nbroadcast(x)",
                expected_message="torch.empty() allocates uninitialised memory that is broadcast: ranks "
                "receive garbage wherever the source rank does not fill every element", range=(1, 5, 1, 19), expected_replacement="x = torch.zeros(4)\nbroadcast(x)"),
        Invalid("x = torch.empty_like(y)\ndist.broadcast(x, 0)",
                expected_message="torch.empty_like() allocates uninitialised memory that is broadcast: "
                "ranks receive garbage wherever the source rank does not fill every element",
                range=(1, 5, 1, 24),
                expected_replacement="x = torch.zeros_like(y)\ndist.broadcast(x, 0)"),
        Invalid("x = torch.empty(8)\ndist.broadcast(x[:4], 0)",
                expected_message="torch.empty() allocates uninitialised memory that is broadcast: ranks "
                "receive garbage wherever the source rank does not fill every element", range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\ndist.broadcast(x[:4], 0)"),
        Invalid("x = y.new_empty((4,)).cuda()\nbroadcast(x)",
                expected_message="Tensor.new_empty() allocates uninitialised memory that is broadcast: "
                "ranks receive garbage wherever the source rank does not fill every element",
                range=(1, 5, 1, 22),
                expected_replacement="x = y.new_zeros((4,)).cuda()\nbroadcast(x)"),
        # In-place writes that leave part of the buffer as it was.
        Invalid("x = torch.empty(8)\nx[:4] = 1.0\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates uninitialised memory that is broadcast: ranks "
                "receive garbage wherever the source rank does not fill every element", range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\nx[:4] = 1.0\ndist.broadcast(x, 0)"),
        Invalid("x = torch.empty(8)\nx += 1\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates uninitialised memory that is broadcast: ranks "
                "receive garbage wherever the source rank does not fill every element", range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\nx += 1\ndist.broadcast(x, 0)"),
        Invalid("x = torch.empty(8)\nx[:4].copy_(y)\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates uninitialised memory that is broadcast: ranks "
                "receive garbage wherever the source rank does not fill every element", range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\nx[:4].copy_(y)\ndist.broadcast(x, 0)"),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        reported: set = set()
        for site in analysis.broadcasts():
            if site.api.payload != apis.TENSOR or site.payload is None:
                continue
            for expr in (site.payload, *analysis.payload_names(site), *_sliced_buffer(site.payload)):
                for value in analysis.reaching_contents(site, expr):
                    call = allocation(value)
                    constructor = call is not None and self._uninitialised(analysis, call)
                    if constructor and call not in reported:
                        reported.add(call)
                        yield self._report(analysis, call, constructor)

    @staticmethod
    def _uninitialised(analysis: ModuleAnalysis, call: cst.Call) -> Optional[str]:
        """The constructor's name when `call` allocates uninitialised memory."""
        if method_name(call) == "new_empty":
            return "new_empty"
        for qualified in analysis.qualified_names(call) & set(_ZEROING):
            if qualified == "torch.Tensor" and not _is_shape_call(call):
                continue  # torch.Tensor([1.0, 2.0]) holds data
            return qualified
        return None

    def _report(self, analysis: ModuleAnalysis, call: cst.Call, constructor: str) -> Report:
        shown = "Tensor.new_empty" if constructor == "new_empty" else constructor
        message = (f"{shown}() allocates uninitialised memory that is broadcast: ranks receive "
                   "garbage wherever the source rank does not fill every element")
        return Report(call, message, self._fix(analysis, call, constructor),
                      "Allocate it with zeros instead")

    @staticmethod
    def _fix(analysis: ModuleAnalysis, call: cst.Call, constructor: str) -> Optional[Fix]:
        if not isinstance(call.func, cst.Attribute):
            return None  # `from torch import empty`: `zeros` may not be imported
        replacement = "new_zeros" if constructor == "new_empty" else _ZEROING[constructor]
        edit = replace_node(analysis, call.func.attr, replacement)
        return Fix(SAFE, f"Replace `{call.func.attr.value}` with `{replacement}`", (edit,))


def _sliced_buffer(payload: cst.BaseExpression) -> list[cst.Name]:
    """`buf` in `broadcast(buf[:k])`: the receivers fill only that part, the rest stays as it was."""
    if isinstance(payload, cst.Subscript) and isinstance(payload.value, cst.Name):
        return [payload.value]
    return []


def _is_shape_call(call: cst.Call) -> bool:
    """`torch.Tensor(2, 3)` and `torch.Tensor(n, d)` allocate; `torch.Tensor([...])`,
    `torch.Tensor([0.0] * n)` or `torch.Tensor(data)` copy data. A single name could be either, so
    it is not guessed at."""
    args = positional_arguments(call)
    if any(_holds_data(arg) for arg in args):
        return False
    if len(args) >= 2:
        return True
    return len(args) == 1 and (isinstance(args[0], (cst.Integer, cst.BinaryOperation))
                               or isinstance(args[0], cst.Call) and _is_len(args[0]))


def _holds_data(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.BinaryOperation):
        return _holds_data(expr.left) or _holds_data(expr.right)
    return isinstance(expr, _DATA)


_DATA = (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)


def _is_len(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "len"
