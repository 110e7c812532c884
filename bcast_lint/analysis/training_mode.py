"""A model put in eval mode on some ranks only, and left there.

Layers that synchronise their batch statistics do so only in training mode: torch's
`SyncBatchNorm` uses its running statistics in eval mode, and so does a layer of one's own that
all-reduces `if self.training:`. A `model.eval()` under a test on the rank (a preview, a sample or
a validation loss on the main process, pytorch#72897), or in a helper called so, that nothing sets
back before the next step leaves `self.training` false on those ranks: their forward skips the
all-reduce the others still make. A helper that calls `.train(...)` itself restores the mode, and
so does a loop that calls `.train()` at each pass around the test.

Read from the module's whole text with CPython's `ast`, only where it calls `.eval()`.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from bcast_lint.analysis.syntax import called_name, parsed
from bcast_lint.analysis.words import tests_rank

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def switched_off_per_rank(text: str) -> Optional[int]:
    """The line of a `.eval()` (or of the call of a helper that makes one) under a test on the rank,
    with no `.train(...)` after it in the helper nor in the loop around the test; None otherwise."""
    if ".eval()" not in text:
        return None
    tree = parsed(text)
    if tree is None:
        return None
    leaving = {node.name for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)
               and _calls_method(node, "eval") and not _calls_method(node, "train")}
    for test, loop in _rank_tests(tree):
        if loop is not None and _calls_method(loop, "train"):
            continue
        for call in (node for part in test.body for node in ast.walk(part) if isinstance(node, ast.Call)):
            if _is_method_call(call, "eval") or called_name(call) in leaving:
                return call.lineno
    return None


def _rank_tests(tree: ast.Module) -> Iterator[tuple[ast.If, Optional[ast.AST]]]:
    """Each `if` that tests the rank, with the innermost loop around it (None outside any)."""
    def visit(node: ast.AST, loop: Optional[ast.AST]) -> Iterator[tuple[ast.If, Optional[ast.AST]]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                yield from visit(child, None)
                continue
            if isinstance(child, ast.If) and tests_rank(ast.unparse(child.test)):
                yield child, loop
            yield from visit(child, child if isinstance(child, _LOOPS) else loop)
    return visit(tree, None)


def _calls_method(node: ast.AST, name: str) -> bool:
    return any(isinstance(call, ast.Call) and _is_method_call(call, name) for call in ast.walk(node))


def _is_method_call(call: ast.Call, name: str) -> bool:
    """`model.eval()`, `model.train(was_training)`: a method of that name on some object."""
    return isinstance(call.func, ast.Attribute) and call.func.attr == name
