"""Hooks registered on a module or tensor run later, at every pass through it, on the ranks that
registered them.

`module.register_forward_hook(hook)` runs no collective itself; `hook` runs at each forward pass
of the module. When the hook runs a collective and only some ranks register it (`if not
self.enabled: return` before the loop that registers, with `enabled` set from the rank), those
ranks run the collective at every forward and the others never do. The registration is then a
collective of the ranks that reach it: ModuleAnalysis adds it to its calls, with the hook's first
collective as the chain a message shows. A deferred call (`stack.callback(f)`, `atexit.register(f)`,
`weakref.finalize(obj, f)`) is modelled alike: `f` runs once, later, per registration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from bcast_lint.analysis.expressions import argument_value
from bcast_lint.analysis.words import HOOK_REGISTRATIONS

REGISTRATIONS = HOOK_REGISTRATIONS
# Calls that register a function to run once, later: ExitStack.callback(f, *args) when the stack
# closes, atexit.register(f) when the process exits, weakref.finalize(obj, f) when `obj` goes.
# Each registration is one later call of `f`: the ranks that register it more often run its
# collective more often. Name -> (the position of the function, when it runs).
DEFERRALS = {
    "callback": (0, "when its ExitStack closes"),
    "register": (0, "when the process exits"),  # atexit's only: see deferred_position
    "finalize": (1, "when the object is collected"),
}
WHEN_HOOKED = "at every pass through what it hooks"


@dataclass(frozen=True)
class HookChain:
    """"registers 'hook', which calls dist.all_reduce() (run.py:36) at every pass through what it
    hooks": what a message says the registration runs (Api.inside)."""

    hook: str
    chain: object  # summaries.CallChain of the hook's collective
    when: str = WHEN_HOOKED

    def __str__(self) -> str:
        return f"registers '{self.hook}', which {self.chain} {self.when}"


def deferred_position(name: str, qualified: set) -> Optional[int]:
    """Where `call` (named `name`, its qualified names `qualified`) takes the function it defers
    (DEFERRALS), or None: `register` counts only as atexit's."""
    if name == "register" and "atexit.register" not in qualified:
        return None
    return DEFERRALS[name][0] if name in DEFERRALS else None


def registered_function(functions_of, call: cst.Call, scope: cst.CSTNode,
                        position: int = 0) -> Optional[cst.FunctionDef]:
    """The module's function that `call` registers as a hook (or defers, its argument at
    `position`): a function or method named, or the nested function a call of one returns
    (`self._recorder(name)` returning its inner `hook`). `functions_of(scope)`: name ->
    FunctionDef for what a name or `self.<name>` means in `scope`."""
    hook = argument_value(call, position, "hook" if position == 0 else None)
    named = _named(functions_of, hook, scope)
    if named is not None:
        return named
    if isinstance(hook, cst.Call):
        maker = _named(functions_of, hook.func, scope)
        return _returned_closure(maker) if maker is not None else None
    return None


def _named(functions_of, expr: Optional[cst.BaseExpression], scope: cst.CSTNode) -> Optional[cst.FunctionDef]:
    if isinstance(expr, cst.Name):
        return functions_of(scope).get(expr.value)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return functions_of(scope).get("self." + expr.attr.value)
    return None


def _returned_closure(maker: cst.FunctionDef) -> Optional[cst.FunctionDef]:
    """`def _recorder(self, name): def hook(...): ...; return hook`: the `hook` it returns."""
    body = maker.body.body
    nested = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return):
        value = last.body[0].value
        if isinstance(value, cst.Name):
            return nested.get(value.value)
    return None
