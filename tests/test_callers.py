"""analysis.callers: which argument of a call binds which parameter of the function it calls."""

from __future__ import annotations

import libcst as cst
import pytest

from bcast_lint.analysis.callers import bound_arguments


def _pairs(definition: str, call: str, method: bool = False) -> list[tuple[str, str]]:
    func = cst.parse_module(definition).body[0]
    parsed = cst.parse_expression(call)
    return [(name, cst.Module([]).code_for_node(value)) for name, value in bound_arguments(func, parsed, method)]


@pytest.mark.parametrize(("definition", "call", "method", "expected"), [
    ("def f(a, b): pass", "f(1, 2)", False, [("a", "1"), ("b", "2")]),
    ("def f(a, b=0): pass", "f(1, b=x)", False, [("a", "1"), ("b", "x")]),
    # A method called through its object: the object is `self`.
    ("def m(self, metrics): pass", "hook.m(evaluate())", True, [("metrics", "evaluate()")]),
    ("def f(a, *, key): pass", "f(1, key=k)", False, [("a", "1"), ("key", "k")]),
    # After `*args` the positions are unknown; keywords still bind.
    ("def f(a, b, c): pass", "f(1, *rest, c=3)", False, [("a", "1"), ("c", "3")]),
    # More arguments than parameters, or a keyword the function does not name: nothing for those.
    ("def f(a): pass", "f(1, 2, z=3)", False, [("a", "1")]),
])
def test_arguments_bind_their_parameters(definition, call, method, expected):
    assert _pairs(definition, call, method) == expected
