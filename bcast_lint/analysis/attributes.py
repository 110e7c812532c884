"""What a class's own attributes hold that differs between ranks, read across its methods.

A scope's divergence pass starts knowing nothing of `self`. Real classes set their state in one
method and read it in another: `__init__` sets `self.path` from the rank, or `self.created` in the
handler of an `os.makedirs` race, and `prepare()` tests it. ClassAttributes runs the pass over
every method of a class, keeps what each leaves varying in `self.<attr>` (Divergence.held: its
value, how many items it holds, a set's order), and starts every method's pass with what the
other methods leave: the analysis does not know in which order the methods run, so what any
method may leave is what any other may find. It repeats until nothing new is found, since one
attribute can vary through another (`self.path`, then `self.found = os.path.exists(self.path)`).
Only `__init__` is given what its callers pass (ModuleAnalysis._attribute_pass).
"""

from __future__ import annotations

from typing import Callable, Mapping

import libcst as cst

from bcast_lint.analysis.apis import MUTATORS
from bcast_lint.analysis.divergence import Divergence, Varying
from bcast_lint.analysis.expressions import self_name
from bcast_lint.analysis.walk import Visitor

_MOST_ROUNDS = 4  # each round follows one more step from attribute to attribute


class ClassAttributes:
    """The attributes of each class of one module that hold a value differing between ranks."""

    def __init__(self, method_classes: Mapping[cst.FunctionDef, cst.ClassDef],
                 run: Callable[[cst.FunctionDef, Varying], Divergence]):
        """`run(method, attributes)`: the divergence pass of `method` started with `attributes`."""
        self._method_classes = method_classes
        self._run = run
        self._held: dict[cst.ClassDef, dict[cst.FunctionDef, dict[str, str]]] = {}

    def entry(self, scope: cst.CSTNode) -> dict[str, str]:
        """What `scope`'s own object holds that varies when the method starts, as the other
        methods of its class leave it, keyed as its pass keys it ("self.path", "#len self.items");
        empty for anything but a method. (What a method leaves for its own next call, `self.best =
        latest`, is the same divergence its tests already see.)"""
        klass = self._method_classes.get(scope) if isinstance(scope, cst.FunctionDef) else None
        if klass is None or self_name(scope) != "self":  # a static or class method
            return {}
        return _left_by_others(self._of(klass), scope)

    def _of(self, klass: cst.ClassDef) -> dict[cst.FunctionDef, dict[str, str]]:
        """Each method of `klass` -> what it leaves varying in its attributes."""
        if klass in self._held:
            return self._held[klass]
        self._held[klass] = {}  # while it is computed, a method's summary starts knowing nothing of it
        # A method that writes no attribute of `self` leaves only what it was started with.
        methods = [m for m in klass.body.body if isinstance(m, cst.FunctionDef) and self_name(m) == "self"
                   and _writes_self(m)]
        held: dict[cst.FunctionDef, dict[str, str]] = {}
        for _ in range(_MOST_ROUNDS):
            found = {method: self._run(method, _left_by_others(held, method)).held for method in methods}
            if _keys(found) == _keys(held):
                break
            held = found
        self._held[klass] = held
        return held


def _left_by_others(held: Mapping[cst.FunctionDef, Mapping[str, str]], method: cst.FunctionDef) -> dict[str, str]:
    left: dict[str, str] = {}
    for other, attributes in held.items():
        if other is not method:
            for key, why in attributes.items():
                left.setdefault(key, why)
    return left


def _keys(held: Mapping[cst.FunctionDef, Mapping[str, str]]) -> set:
    return {(method, key) for method, attributes in held.items() for key in attributes}


def _writes_self(method: cst.FunctionDef) -> bool:
    """Whether the method assigns, augments or mutates (`self.items.append(x)`) an attribute of
    `self`, or an item of one."""
    finder = _SelfWrites()
    finder.walk(method.body)
    return finder.found


class _SelfWrites(Visitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        self.found = self.found or any(_on_self(target.target) for target in node.targets)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.found = self.found or _on_self(node.target)

    visit_AnnAssign = visit_AugAssign

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self.found = self.found or (isinstance(func, cst.Attribute) and func.attr.value in MUTATORS
                                    and _on_self(func.value))


def _on_self(target: cst.BaseExpression) -> bool:
    """`self.x`, `self.x.y`, `self.x[k]`, or a tuple holding one."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_on_self(element.value) for element in target.elements)
    attribute = False
    while isinstance(target, (cst.Attribute, cst.Subscript)):
        attribute = attribute or isinstance(target, cst.Attribute)
        target = target.value
    return attribute and isinstance(target, cst.Name) and target.value == "self"
