"""Code after a `yield` runs only when the caller resumes the generator.

A generator's epilogue (what follows its last `yield`) runs where the consumer's loop exhausts it:
a `break` leaves it suspended at `yield`, and it never runs there. A `@contextmanager`'s code after
`yield` runs where the `with` body finishes: an exception raised in the body is thrown in at
`yield` and skips it (unless a `try`/`finally` holds the `yield`). A collective there runs on the
ranks that resume the generator and not on the others, when the consumer can stop early on some
ranks only (the generator yields as many items as a rank's own data, or the stop is decided by it),
or when the `with` body can fail on some ranks only and the failure is caught around the `with`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from bcast_lint.analysis.expressions import last_name
from bcast_lint.analysis.ranks import boolean_leaves
from bcast_lint.analysis.walk import ends_in, path_to, yields_in


@dataclass(frozen=True)
class Unresumed:
    """Why the code after a generator's `yield` may run on some ranks only."""

    function: cst.FunctionDef  # the generator or context manager
    consumer: cst.CSTNode  # the `for` loop or `with` statement that runs it
    stop: cst.CSTNode  # the `break`/`return` that leaves the loop, or the `try` that catches the failure
    reason: str  # why the ranks part ways there
    what: str  # what differs between ranks: "how many items it yields", "the exit's test", "that body"
    context_manager: bool


def unresumed(analysis, call: cst.Call, function: cst.CSTNode) -> Optional[Unresumed]:
    """Why `call`, after a `yield` of `function`, may run on some ranks only, or None."""
    if not isinstance(function, cst.FunctionDef) or not _after_yield(function, call):
        return None
    context_manager = any(last_name(d.decorator) in _CONTEXT_MANAGERS for d in function.decorators)
    for consumer in analysis.calls_of(function):
        found = _caught_failure(analysis, consumer) if context_manager else _early_stop(analysis, consumer)
        if found is not None:
            return Unresumed(function, *found, context_manager)
    return None


_CONTEXT_MANAGERS = frozenset({"contextmanager", "asynccontextmanager"})


def _after_yield(function: cst.FunctionDef, call: cst.Call) -> bool:
    """The top-level statement of `function` holding `call` comes after one that yields: only
    what follows the last `yield` runs once the generator is resumed for the last time. (A
    `yield` inside the same statement, `try: yield` / `finally: ...`, is not followed.)"""
    body = function.body.body
    index = next((i for i, statement in enumerate(body) if _holds(statement, call)), None)
    return index is not None and any(yields_in(statement) for statement in body[:index])


def _caught_failure(analysis, consumer) -> Optional[tuple]:
    """(`with`, `try`, why) where the consumer enters the context manager in a `with` whose body
    can fail on some ranks only, inside a `try` that catches the failure and carries on."""
    around = consumer.statements
    with_ = around[-1] if around else None
    if not isinstance(with_, cst.With) or not any(item.item is consumer.call for item in with_.items):
        return None
    reason = analysis.divergence.failing_withs.get(with_)
    if reason is None:
        return None
    for outer, inner in zip(around, around[1:]):
        if isinstance(outer, cst.Try) and inner in outer.body.body and _carries_on(outer):
            return with_, outer, reason, "that body"
    return None


def _carries_on(statement: cst.Try) -> bool:
    """A handler of the `try` ends without raising again: the rank goes on with the next step."""
    return any(not ends_in(handler.body, cst.Raise) for handler in statement.handlers)


def _early_stop(analysis, consumer) -> Optional[tuple]:
    """(`for`, the exit that leaves it, why) where the consumer iterates the generator in a loop
    that can stop before the generator runs out on some ranks only: it yields a number of items
    that differs between ranks, or the exit's test differs."""
    loop = consumer.statements[-1] if consumer.statements else None
    if not isinstance(loop, cst.For) or not _holds(loop.iter, consumer.call):
        return None
    exits = analysis.exits.get(consumer.scope)
    stops = [e for e in (exits.exits if exits is not None else ())
             if (e.kind == "break" and e.loops and e.loops[-1] is loop) or (e.kind == "return" and loop in e.loops)]
    if not stops:
        return None
    count = analysis.divergence.loops.get(loop) or analysis.divergence.capped.get(loop)
    if count is not None:
        return loop, stops[0].node, count[1], "how many items it yields"
    for stop in stops:
        reason = _test_reason(analysis, stop.statement, loop)
        if reason is not None:
            return loop, stop.node, reason, "the exit's test"
    return None


def _test_reason(analysis, statement: cst.CSTNode, loop: cst.For) -> Optional[str]:
    """Why a test of an `if` in `loop` around `statement` differs between ranks, or None."""
    for node in path_to(loop.body, statement) or ():
        if isinstance(node, cst.If):
            reason = next(filter(None, map(analysis.divergence.tests.get, boolean_leaves(node.test))), None)
            if reason is not None:
                return reason
    return None


def _holds(node: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return node is inner or path_to(node, inner) is not None
