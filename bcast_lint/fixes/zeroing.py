"""Allocate with zeros what was allocated uninitialised: `torch.empty` -> `torch.zeros`,
`empty_like` -> `zeros_like`, `new_empty` -> `new_zeros`, `torch.Tensor(n)` -> `torch.zeros(n)`,
with the same arguments."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.analysis.uninitialised import NEW_EMPTY
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import SAFE, Fix

_ZEROING = {"torch.empty": "zeros", "torch.empty_like": "zeros_like", "torch.Tensor": "zeros",
            NEW_EMPTY: "new_zeros"}


def zero_fill_fix(analysis: ModuleAnalysis, call: cst.Call, constructor: str) -> Optional[Fix]:
    """Safe: zero-filling only replaces contents that were unspecified."""
    if not isinstance(call.func, cst.Attribute):
        return None  # `from torch import empty`: `zeros` may not be imported
    replacement = _ZEROING[constructor]
    edit = replace_node(analysis, call.func.attr, replacement)
    return Fix(SAFE, f"Replace `{call.func.attr.value}` with `{replacement}`", (edit,))
