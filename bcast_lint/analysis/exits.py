"""Where a scope's collectives stand among its loops and its exits.

A collective runs as often on every rank only if every rank takes the same way through the loops
around it: the same number of iterations, and the same `break`, `continue`, `return` or
`sys.exit()`. A `raise` (or `sys.exit(1)`) is not counted: the process fails, and the launchers
(torchrun, `accelerate launch`, `mp.spawn`) then stop the other workers, so the job ends with
that error instead of hanging; on the corpus, every one-rank `raise` before a collective was such
an error path. This module finds, for one scope, the exits and the loops around each collective;
the data flow (module.py) records in which worlds each exit is reached, and rules ask which exits
can make a collective run fewer times on some ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.expressions import is_exit_call
from bcast_lint.analysis.ranks import GROUP_RANK, RankConditions
from bcast_lint.analysis.walk import ScopeVisitor, Visitor

Loop = cst.CSTNode  # a For or While


@dataclass(eq=False)
class Exit:
    """A `break`, `continue`, `return` or successful `sys.exit()`, and the worlds that reach it."""

    node: cst.CSTNode
    statement: cst.CSTNode  # the line holding it, where the data flow observes it
    kind: str  # "break", "continue", "return" or "sys.exit()"
    loops: tuple[Loop, ...]  # the loops around it in its scope, outermost first
    order: int  # position in the scope, in source order
    reached: set = field(default_factory=set)  # the worlds in which it may run


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
    def __init__(self, scope: cst.CSTNode, calls: set) -> None:
        self.scope = scope
        self._calls = calls
        self._loops: list = []
        self._line: Optional[cst.CSTNode] = None
        self._order = 0
        self.found = ScopeExits()

    visit_Lambda = ScopeVisitor.enters  # a nested function, class or lambda runs elsewhere

    def _enter_loop(self, node: cst.CSTNode) -> None:
        self._loops.append(node)

    def _leave_loop(self, original_node: cst.CSTNode) -> None:
        self._loops.pop()

    visit_For = visit_While = _enter_loop
    leave_For = leave_While = _leave_loop

    def _enter_line(self, node: cst.CSTNode) -> None:
        self._line = node

    visit_SimpleStatementLine = visit_SimpleStatementSuite = _enter_line

    def _exit(self, node: cst.CSTNode, kind: str) -> None:
        self._order += 1
        self.found.exits.append(Exit(node, self._line, kind, tuple(self._loops), self._order))

    def visit_Break(self, node: cst.Break) -> None:
        self._exit(node, "break")

    def visit_Continue(self, node: cst.Continue) -> None:
        self._exit(node, "continue")

    def visit_Return(self, node: cst.Return) -> None:
        self._exit(node, "return")

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call) and is_exit_call(node.value) and _succeeds(node.value):
            self._exit(node.value, "sys.exit()")

    def visit_Call(self, node: cst.Call) -> None:
        if node in self._calls:
            self._order += 1
            self.found.order[node] = self._order
            self.found.loops[node] = tuple(self._loops)


def _succeeds(call: cst.Call) -> bool:
    """`sys.exit()`, `sys.exit(0)`, `sys.exit(None)`: an exit status the launcher does not treat
    as a failure, so it waits for the other workers."""
    if not call.args:
        return True
    value = call.args[0].value
    return (isinstance(value, cst.Integer) and value.value == "0") or (
        isinstance(value, cst.Name) and value.value == "None")


def scope_exits(scope: cst.CSTNode, calls: set) -> ScopeExits:
    """The exits of `scope`'s own body, and the loops and order of `calls` in it."""
    collector = _Collector(scope, calls)
    collector.walk(scope)
    return collector.found


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
            if isinstance(element.slice, cst.Slice) and self._mentions_rank(element.slice):
                self.found = self.found or node

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "range" and self._mentions_rank(node):
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
