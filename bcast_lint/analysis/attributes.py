"""What a class's own attributes hold that differs between ranks, read across its methods.

A scope's divergence pass starts knowing nothing of `self`. Real classes set their state in one
method and read it in another: `__init__` sets `self.path` from the rank, or `self.created` in the
handler of an `os.makedirs` race, and `prepare()` tests it. ClassAttributes runs the pass over
every method of a class, keeps what each leaves varying in `self.<attr>` (Divergence.held: its
value, how many items it holds, a set's order), and starts every method's pass with what the
methods leave: the analysis does not know in which order the methods run, so what any method
may leave is what any other may find, and what it finds itself when it runs again (a callback's
`setup` runs once per stage: `if self.saved: return` before a broadcast, then `self.saved = True`
on rank 0). It repeats until nothing new is found, since one attribute can vary through another
(`self.path`, then `self.found = os.path.exists(self.path)`).
Only `__init__` is given what its callers pass (ModuleAnalysis._attribute_pass).
"""

from __future__ import annotations

from typing import Callable, Mapping

import libcst as cst

from bcast_lint.analysis.apis import MUTATORS
from bcast_lint.analysis.divergence import CONTROL, Divergence, Varying
from bcast_lint.analysis.expressions import self_name
from bcast_lint.analysis.walk import Visitor

_MOST_ROUNDS = 4  # each round follows one more step from attribute to attribute


class ClassAttributes:
    """The attributes of each class of one module that hold a value differing between ranks."""

    def __init__(self, method_classes: Mapping[cst.FunctionDef, cst.ClassDef],
                 run: Callable[[cst.FunctionDef, Varying], Divergence],
                 rank_test: Callable[[cst.BaseExpression], bool] = lambda test: False,
                 bases: Callable[[cst.ClassDef], list] = lambda klass: []):
        """`run(method, attributes)`: the divergence pass of `method` started with `attributes`;
        `rank_test(test)`: whether the rank alone decides it; `bases(klass)`: the module's classes
        `klass` derives from."""
        self._method_classes = method_classes
        self._run = run
        self._rank_test = rank_test
        self._bases = bases
        self._held: dict[cst.ClassDef, dict[cst.FunctionDef, dict[str, str]]] = {}
        self._computing: set[cst.ClassDef] = set()

    def entry(self, scope: cst.CSTNode) -> dict[str, str]:
        """What `scope`'s own object holds that varies when the method starts, as the methods of
        its class leave it (itself included: it may have run before), keyed as its pass keys it
        ("self.path", "#len self.items"); empty for anything but a method."""
        klass = self._method_classes.get(scope) if isinstance(scope, cst.FunctionDef) else None
        if klass is None or self_name(scope) != "self":  # a static or class method
            return {}
        return _left_by_calls(self._of(klass))

    def settled(self, scope: cst.CSTNode) -> bool:
        """Whether what `scope`'s class's methods leave is known: False while it is computed, when
        a method's pass starts knowing nothing of it (what is read then is not to be kept)."""
        klass = self._method_classes.get(scope) if isinstance(scope, cst.FunctionDef) else None
        return klass not in self._computing

    def computing(self) -> frozenset:
        """The classes whose attributes are being computed now."""
        return frozenset(self._computing)

    def held_by(self, klass: cst.ClassDef) -> dict[str, str]:
        """What the calls of `klass`'s methods leave varying in an object's attributes, keyed as
        "self.<attr>": read through an instance (`norm.frozen`) after any of them ran."""
        return _left_by_calls(self._of(klass))

    def _of(self, klass: cst.ClassDef) -> dict[cst.FunctionDef, dict[str, str]]:
        """Each method of `klass` -> what it leaves varying in its attributes."""
        if klass in self._held:
            return self._held[klass]
        self._held[klass] = {}  # while it is computed, a method's summary starts knowing nothing of it
        self._computing.add(klass)
        try:
            held = self._compute(klass)
        finally:
            self._computing.discard(klass)
        self._held[klass] = held
        return held

    def _compute(self, klass: cst.ClassDef) -> dict[cst.FunctionDef, dict[str, str]]:
        # A method that writes no attribute of `self` leaves only what it was started with.
        methods = [m for m in klass.body.body if isinstance(m, cst.FunctionDef) and self_name(m) == "self"
                   and _writes_self(m)]
        held: dict[cst.FunctionDef, dict[str, str]] = {}
        for _ in range(_MOST_ROUNDS):
            found = {method: self._run(method, _left_by_calls(held)).held for method in methods}
            if _keys(found) == _keys(held):
                break
            held = found
        for method in self._run_on_some_ranks(klass, methods):
            written = held.setdefault(method, {})
            for key in _self_writes(method):  # each set where the method ran, unset elsewhere
                written.setdefault(key, CONTROL)
        return held

    def _run_on_some_ranks(self, klass: cst.ClassDef, methods: list) -> list:
        """The `methods` that the class's own methods, and those of its bases in the module, call
        (`self._write(...)`) only under a test on the rank: `Checkpointer.save` writes on rank 0
        through `self._write`, and a subclass's `_write` that starts an upload thread and keeps it
        in `self._writer` leaves it set there only."""
        callers = [m for owner in (klass, *self._bases(klass)) for m in owner.body.body if isinstance(m, cst.FunctionDef)]
        calls: dict[str, list] = {}
        for caller in callers:
            finder = _SelfCalls(self._rank_test)
            finder.walk(caller.body)
            for name, guarded in finder.calls:
                calls.setdefault(name, []).append(guarded)
        return [m for m in methods if calls.get(m.name.value) and all(calls[m.name.value])]


def _left_by_calls(held: Mapping[cst.FunctionDef, Mapping[str, str]]) -> dict[str, str]:
    """What the calls of the class's methods leave varying, the method's own earlier calls
    included: `if self.saved: return` finds what its last call set on rank 0 only."""
    left: dict[str, str] = {}
    for attributes in held.values():
        for key, why in attributes.items():
            left.setdefault(key, why)
    return left


def _keys(held: Mapping[cst.FunctionDef, Mapping[str, str]]) -> set:
    return {(method, key) for method, attributes in held.items() for key in attributes}


class _SelfCalls(Visitor):
    """`self.<name>(...)` calls, each with whether an `if` on the rank holds it."""

    def __init__(self, rank_test: Callable[[cst.BaseExpression], bool]) -> None:
        self.calls: list[tuple[str, bool]] = []
        self._rank_test = rank_test
        self._guards = 0

    def visit_If(self, node: cst.If) -> bool:
        guarded = self._rank_test(node.test)
        self.walk(node.test)
        self._guards += guarded
        self.walk(node.body)
        self._guards -= guarded
        if node.orelse is not None:
            self._guards += guarded
            self.walk(node.orelse)
            self._guards -= guarded
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            self.calls.append((func.attr.value, self._guards > 0))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function runs when it is called, not here


def _self_writes(method: cst.FunctionDef) -> set[str]:
    """The keys ("self.x") of the attributes the method assigns."""
    finder = _SelfAssigned()
    finder.walk(method.body)
    return finder.keys


class _SelfAssigned(Visitor):
    def __init__(self) -> None:
        self.keys: set[str] = set()

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            self.keys.add(f"self.{target.attr.value}")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    visit_AnnAssign = visit_AugAssign


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
