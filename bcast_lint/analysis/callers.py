"""Parameters whose values differ between ranks because the module's own calls pass such values.

`hook.after_eval(metrics)`, where `metrics` is `{}` on every rank but the main one, makes
`after_eval`'s `metrics` differ between ranks too: a test on it inside the method can send the
ranks different ways. Only calls in the same module are read (their scopes' divergence passes,
analysis.divergence), one level deep, and a parameter counts when any of those calls passes a
value that differs between ranks there.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

import libcst as cst

from bcast_lint.analysis.divergence import LOCAL_DATA, RANK, Divergence, OwnResult, Parameters, is_own_batch
from bcast_lint.analysis.expressions import last_name


def parameter_positions(func: cst.FunctionDef, method: bool) -> dict[str, Optional[int]]:
    """Parameter name -> its position at a call (None: keyword-only); `method`: a method's first
    parameter, `self` or `cls`, is bound by the call's object."""
    params = [param.name.value for param in (*func.params.posonly_params, *func.params.params)]
    if method and params and params[0] in ("self", "cls"):
        params = params[1:]
    positions: dict[str, Optional[int]] = {name: index for index, name in enumerate(params)}
    positions.update({param.name.value: None for param in func.params.kwonly_params})
    return positions


def bound_arguments(func: cst.FunctionDef, call: cst.Call, method: bool) -> list[tuple[str, cst.BaseExpression]]:
    """The (parameter, argument) pairs of `call` to `func`; `method` as parameter_positions."""
    positions = parameter_positions(func, method)
    by_position = {index: name for name, index in positions.items() if index is not None}
    pairs: list = []
    positions_known = True
    for index, arg in enumerate(call.args):
        if arg.star:
            positions_known = False  # `f(*args)`: the positions from here on are unknown
        elif arg.keyword is None and positions_known and index in by_position:
            pairs.append((by_position[index], arg.value))
        elif arg.keyword is not None and arg.keyword.value in positions:
            pairs.append((arg.keyword.value, arg.value))
    return pairs


def varying_parameters(func: cst.FunctionDef, method: bool, calls: Iterable[tuple[cst.Call, Divergence]],
                       describe: Callable[[cst.Call, cst.BaseExpression, str], str]) -> Parameters:
    """Parameter -> why its value, and why how many items it holds, differ between ranks, from
    `calls` of `func` and their callers' divergence; `describe(call, argument, why)` words it.
    A constructor keeps a rank test it is handed (`Logger(enabled=rank == 0)`): it becomes an
    attribute that other methods test (`if not self.enabled: return`), as a rank test would."""
    found: dict = {}
    constructor = method and func.name.value == "__init__"
    for call, divergence in calls:
        for name, value in bound_arguments(func, call, method):
            value_why = divergence.value_at(call, value)
            length_why = divergence.length_at(call, value) or divergence.item_length_at(call, value)
            if is_own_batch(value_why) and value_why != LOCAL_DATA and not isinstance(value_why, OwnResult) \
                    and not _magnitude(value) \
                    or (value_why == RANK and not constructor):
                # `inputs` of a batch: the callee's tests on its keys agree; `is_main` or the rank:
                # a test on it is a rank test whose worlds the callee cannot tell, not data. (What
                # a function handed the rank returns, `load_shard(rank)`, is that rank's own data.)
                value_why = None
            if name not in found and (value_why or length_why):
                found[name] = tuple(describe(call, value, why) if why else None for why in (value_why, length_why))
    return found


# Calls that turn a batch into one number: `int((ids != 0).sum())`, `loss.item()`, `len(batch)`.
_TO_NUMBER = frozenset({"int", "float", "item", "len", "numel", "sum", "mean", "max", "min"})


def _magnitude(value: cst.BaseExpression) -> bool:
    """A number computed from a rank's own batch (a token count, a loss): its magnitude differs
    between ranks, as a test on it does; the batch itself differs only in its values."""
    return isinstance(value, cst.Call) and last_name(value.func) in _TO_NUMBER
