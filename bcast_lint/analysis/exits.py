"""Where a scope's collectives stand among its loops and its exits.

A collective runs as often on every rank only if every rank takes the same way through the loops
around it: the same number of iterations, and the same `break`, `continue`, `return` or
`sys.exit()`. A failing exit (`raise`, a failing `assert`, `sys.exit(1)`, `os._exit`) counts too,
but only where data that differs between ranks decides it (a per-rank file check, an assertion on
a rank's own batch, a read that fails on some ranks: analysis.divergence): the failing rank dies
while the others wait in the collective, and on several nodes the job hangs until the timeout.
A `raise` that the rank alone decides (`if rank == 0 and x is None: raise`) is argument
validation on the corpus, and one inside a `try` body may be caught there: neither counts.
This module finds, for one scope, the exits and the loops around each collective; the data flow
(module.py) records in which worlds each exit is taken, and rules ask which exits can make a
collective run fewer times on some ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

import dataclasses

import libcst as cst

from bcast_lint.analysis.expressions import even_strides, is_exit_call, range_span
from bcast_lint.analysis.ranks import GROUP_RANK, RankConditions
from bcast_lint.analysis.walk import ScopeVisitor, Visitor, holds_own

Loop = cst.CSTNode  # a For or While


@dataclass(eq=False)
class Exit:
    """A `break`, `continue`, `return`, `sys.exit()`, `raise` or `assert`, and the worlds that
    take it."""

    node: cst.CSTNode
    statement: cst.CSTNode  # the line holding it, where the data flow observes it
    kind: str  # "break", "continue", "return", "sys.exit()", "raise", "assert" or "os._exit()"
    loops: tuple[Loop, ...]  # the loops around it in its scope, outermost first
    order: int  # position in the scope, in source order
    reached: set = field(default_factory=set)  # the worlds in which it may be taken
    failing: bool = False  # the process stops with an error: counts only where data decides it

    def taken_in(self, world, conditions: RankConditions) -> bool:
        """Whether a world that reaches the exit's line may take it: an `assert` is taken where
        its test does not hold."""
        if self.kind != "assert":
            return True
        return conditions.decide(self.node.test, world) is not True

    def counts(self) -> bool:
        """Whether the exit can keep some ranks from a collective: a failing exit only where
        data that differs between ranks decides it, that is, where some world takes it and the
        same rank with the other outcome of that data does not."""
        if not self.failing:
            return True
        return any(world.data is not None and dataclasses.replace(world, data=not world.data) not in self.reached
                   for world in self.reached)


@dataclass
class ScopeExits:
    exits: list = field(default_factory=list)
    loops: dict = field(default_factory=dict)  # call -> the loops around it, outermost first
    order: dict = field(default_factory=dict)  # call -> position in source order

    def skipping(self, call: cst.Call) -> Iterator[Exit]:
        """The exits that can skip `call`, in this iteration or the following ones: a `break` of
        a loop around it; a `continue` of such a loop before it; a `return` or `sys.exit()`
        before it or inside a loop around it."""
        loops = self.loops.get(call, ())
        order = self.order.get(call, -1)
        for exit_ in self.exits:
            target = exit_.loops[-1] if exit_.loops else None
            if exit_.kind == "break":
                skips = target in loops
            elif exit_.kind == "continue":
                skips = target in loops and exit_.order < order
            else:
                skips = exit_.order < order or any(loop in loops for loop in exit_.loops)
            if skips:
                yield exit_


class _Collector(ScopeVisitor):
    def __init__(self, scope: cst.CSTNode, calls: set, exiting: frozenset) -> None:
        self.scope = scope
        self._calls = calls
        self._exiting = exiting
        self._loops: list = []
        self._tries = 0  # the `try` bodies with handlers around the node: a raise there may be caught
        self._line: Optional[cst.CSTNode] = None
        self._order = 0
        self.found = ScopeExits()

    visit_Lambda = ScopeVisitor.enters  # a nested function, class or lambda runs elsewhere

    def _enter_loop(self, node: cst.CSTNode) -> None:
        self._loops.append(node)

    def _leave_loop(self, original_node: cst.CSTNode) -> None:
        self._loops.pop()

    visit_While = _enter_loop
    leave_While = _leave_loop

    def visit_For(self, node: cst.For) -> bool:
        # The iterable is evaluated once, before the loop: `for x in gather_all(d):` runs it once.
        self.walk(node.target)
        self.walk(node.iter)
        self._loops.append(node)
        self.walk(node.body)
        self._loops.pop()
        if node.orelse is not None:
            self.walk(node.orelse)
        return False

    def _visit_comprehension(self, node) -> bool:
        """`[f(x) for x in xs]`: the first iterable is evaluated once, the rest once per item."""
        elements = (node.key, node.value) if isinstance(node, cst.DictComp) else (node.elt,)
        self._comprehension(node.for_in, elements)
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    def _comprehension(self, loop: cst.CompFor, elements: tuple) -> None:
        self.walk(loop.iter)
        self._loops.append(loop)
        for test in loop.ifs:
            self.walk(test)
        if loop.inner_for_in is not None:
            self._comprehension(loop.inner_for_in, elements)
        for element in elements if loop.inner_for_in is None else ():
            self.walk(element)
        self._loops.pop()

    def visit_Try(self, node: cst.Try) -> bool:
        if node.handlers:
            self._tries += 1
        self.walk(node.body)
        if node.handlers:
            self._tries -= 1
        for part in (*node.handlers, node.orelse, node.finalbody):
            if part is not None:
                self.walk(part)
        return False

    visit_TryStar = visit_Try

    def _enter_line(self, node: cst.CSTNode) -> None:
        self._line = node

    visit_SimpleStatementLine = visit_SimpleStatementSuite = _enter_line

    def _exit(self, node: cst.CSTNode, kind: str, failing: bool = False) -> None:
        self._order += 1
        self.found.exits.append(Exit(node, self._line, kind, tuple(self._loops), self._order, failing=failing))

    def visit_Break(self, node: cst.Break) -> None:
        self._exit(node, "break")

    def visit_Continue(self, node: cst.Continue) -> None:
        self._exit(node, "continue")

    def visit_Return(self, node: cst.Return) -> bool:
        # `return metric.compute()`: the value is evaluated before the function returns.
        if node.value is not None:
            self.walk(node.value)
        self._exit(node, "return")
        return False

    def visit_Raise(self, node: cst.Raise) -> None:
        if not self._tries:
            self._exit(node, "raise", failing=True)

    def visit_Assert(self, node: cst.Assert) -> None:
        if not self._tries:
            self._exit(node, "assert", failing=True)

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if isinstance(call, cst.Call) and is_exit_call(call):
            succeeds = _succeeds(call)
            if succeeds or not self._tries:  # SystemExit may be caught too
                self._exit(call, _exit_kind(call), failing=not succeeds)
        elif isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in self._exiting \
                and not self._tries:
            self._exit(call, f"{call.func.value}()", failing=True)

    def visit_Call(self, node: cst.Call) -> None:
        if node in self._calls:
            self._order += 1
            self.found.order[node] = self._order
            self.found.loops[node] = tuple(self._loops)

    visit_Attribute = visit_Call  # a property read (ModuleAnalysis._property_read)


def _exit_kind(call: cst.Call) -> str:
    return "os._exit()" if isinstance(call.func, cst.Attribute) and call.func.attr.value == "_exit" else "sys.exit()"


def _succeeds(call: cst.Call) -> bool:
    """`sys.exit()`, `sys.exit(0)`, `sys.exit(None)`: an exit status the launcher does not treat
    as a failure, so it waits for the other workers."""
    if not call.args:
        return True
    value = call.args[0].value
    return (isinstance(value, cst.Integer) and value.value == "0") or (
        isinstance(value, cst.Name) and value.value == "None")


def scope_exits(scope: cst.CSTNode, calls: set, exiting: frozenset = frozenset()) -> ScopeExits:
    """The exits of `scope`'s own body, and the loops and order of `calls` in it; `exiting`: the
    module's functions that never return (exiting_functions)."""
    collector = _Collector(scope, calls, exiting)
    collector.walk(scope)
    return collector.found


def exiting_functions(module: cst.Module) -> frozenset:
    """The names of the module's top-level functions that end the process on every path: no
    `return`, and a body that ends in `raise` or a failing `sys.exit(...)`/`os._exit(...)`
    (`def fail(msg): log.error(msg); sys.exit(1)`)."""
    return frozenset(statement.name.value for statement in module.body
                     if isinstance(statement, cst.FunctionDef) and _never_returns(statement))


def _never_returns(function: cst.FunctionDef) -> bool:
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else (function.body,)
    last = body[-1] if body else None
    if not isinstance(last, cst.SimpleStatementLine) or holds_own(function, (cst.Return, cst.Yield)):
        return False
    final = last.body[-1]
    if isinstance(final, cst.Raise):
        return True
    return isinstance(final, cst.Expr) and isinstance(final.value, cst.Call) and is_exit_call(final.value) \
        and not _succeeds(final.value)


def rank_dependent_iterable(loop: Loop, conditions: RankConditions) -> Optional[cst.BaseExpression]:
    """The part of a `for` loop's iterable whose length depends on the rank: a slice bounded or
    stepped by it (`shards[rank::world]`) or a `range` over it (`range(rank, n, world)`)."""
    if not isinstance(loop, cst.For):
        return None
    finder = _RankedLength(conditions)
    finder.walk(loop.iter)
    return finder.found


class _RankedLength(Visitor):
    def __init__(self, conditions: RankConditions) -> None:
        self._conditions = conditions
        self.found: Optional[cst.BaseExpression] = None

    def visit_Subscript(self, node: cst.Subscript) -> None:
        for element in node.slice:
            if isinstance(element.slice, cst.Slice) and self._mentions_rank(element.slice) \
                    and not even_strides(element.slice) and not self._conditions.sized_for_the_job(node):
                self.found = self.found or node

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "range"):
            return
        span = range_span(node)  # `range(rank * 4, rank * 4 + 4)`: four items on every rank
        if (any(map(self._mentions_rank, span)) if span is not None else self._mentions_rank(node)) \
                and not self._conditions.sized_for_the_job(node):
            self.found = self.found or node

    def _mentions_rank(self, node: cst.CSTNode) -> bool:
        mentions = _RankMention(self._conditions)
        mentions.walk(node)
        return mentions.found


class _RankMention(Visitor):
    """Whether an expression reads the process's global or local rank (not a group rank: how a
    group's members are numbered against each other's loops cannot be read off the code)."""

    def __init__(self, conditions: RankConditions) -> None:
        self._conditions = conditions
        self.found = False

    def _check(self, node: cst.CSTNode) -> bool:
        quantity = self._conditions.quantity(node)
        if quantity and not quantity.startswith(GROUP_RANK):
            self.found = True
        return not self.found

    visit_Name = visit_Attribute = visit_Call = visit_Subscript = _check
