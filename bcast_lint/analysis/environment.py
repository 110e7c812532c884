"""Environment variables set on some ranks only (issue 20).

`if not accelerator.is_main_process: os.environ["WANDB_MODE"] = "disabled"` makes every later
read of `WANDB_MODE` in the process differ between ranks: `tracking_enabled()`, which returns
`os.environ.get("WANDB_MODE") != "disabled"`, is then a test on the rank wherever it is called
(starVLA#369). A write counts where it runs: at a module's top level, or in a function the linted
module calls (its own, or one it imports from the project). A helper's summary records the
variables its return reads, and the caller decides. The writes are found with CPython's `ast` in
each module's whole text, once per module; the reads are LibCST expressions of the analysis.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.expressions import last_name
from bcast_lint.analysis.syntax import parsed
from bcast_lint.analysis.walk import every_node
from bcast_lint.analysis.words import names_rank, tests_rank

_WRITE_WORDS = ("environ[", "environ.setdefault", "environ.update", "environ.pop", "putenv")
_WRITING_METHODS = frozenset({"setdefault", "pop", "update"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class RankWrite:
    variable: str
    line: int
    function: Optional[str]  # the top-level function or `Class.method` holding it; None at module level


def set_per_rank(text: str) -> tuple[RankWrite, ...]:
    """The module's writes of environment variables under an `if` that tests the rank."""
    if not any(word in text for word in _WRITE_WORDS) or not names_rank(text):
        return ()
    tree = parsed(text)
    if tree is None:
        return ()
    found = []
    for function, body in _scopes(tree):
        for node in (node for statement in body for node in ast.walk(statement)):
            if isinstance(node, ast.If) and tests_rank(ast.unparse(node.test)):
                found.extend(RankWrite(variable, line, function)
                             for statement in (*node.body, *node.orelse) for variable, line in _writes(statement))
    return tuple(found)


def _scopes(tree: ast.Module) -> Iterator[tuple[Optional[str], list]]:
    """(None, the module's other statements), then each top-level function and method with its body."""
    yield None, [s for s in tree.body if not isinstance(s, (*_FUNCTIONS, ast.ClassDef))]
    for statement in tree.body:
        if isinstance(statement, _FUNCTIONS):
            yield statement.name, statement.body
        elif isinstance(statement, ast.ClassDef):
            for member in statement.body:
                if isinstance(member, _FUNCTIONS):
                    yield f"{statement.name}.{member.name}", member.body


def reads_in(expr: cst.CSTNode) -> frozenset:
    """The variables `expr` reads anywhere inside it."""
    nodes = [expr, *every_node(expr, cst.Call), *every_node(expr, cst.Subscript), *every_node(expr, cst.Comparison)]
    return frozenset(filter(None, map(read_variable, nodes)))


def _writes(statement: ast.stmt) -> Iterator[tuple[str, int]]:
    for node in ast.walk(statement):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            if isinstance(target, ast.Subscript) and _is_environ(target.value):
                yield from _literal(target.slice, node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _WRITING_METHODS and _is_environ(node.func.value):
                yield from _literal(node.args[0], node.lineno) if node.args else ()
                yield from ((keyword.arg, node.lineno) for keyword in node.keywords if keyword.arg)
            elif node.func.attr == "putenv" and node.args:
                yield from _literal(node.args[0], node.lineno)


def _is_environ(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
        (isinstance(node, ast.Name) and node.id == "environ")


def _literal(node: ast.expr, line: int) -> Iterator[tuple[str, int]]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value, line


def read_variable(expr: cst.CSTNode) -> Optional[str]:
    """The variable an expression reads: `os.environ.get("K", d)`, `os.getenv("K")`,
    `os.environ["K"]`, `"K" in os.environ`."""
    if isinstance(expr, cst.Call) and expr.args:
        func = expr.func
        lookup = (isinstance(func, cst.Attribute) and func.attr.value == "getenv") or \
            (isinstance(func, cst.Attribute) and func.attr.value == "get" and last_name(func.value) == "environ")
        return _string(expr.args[0].value) if lookup else None
    if isinstance(expr, cst.Subscript) and last_name(expr.value) == "environ" and len(expr.slice) == 1:
        index = expr.slice[0].slice
        return _string(index.value) if isinstance(index, cst.Index) else None
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
        target = expr.comparisons[0]
        if isinstance(target.operator, (cst.In, cst.NotIn)) and last_name(target.comparator) == "environ":
            return _string(expr.left)
    return None


def _string(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def returned_reads(func: cst.FunctionDef) -> frozenset:
    """The variables whose values reach what `func` returns: read in a `return`, or in the last
    value a name it returns was assigned (`mode = os.environ.get("WANDB_MODE")`)."""
    assigned = {target.target.value: assign.value for assign in every_node(func, cst.Assign)
                for target in assign.targets if isinstance(target.target, cst.Name)}
    found: frozenset = frozenset()
    for returned in every_node(func, cst.Return):
        if returned.value is None:
            continue
        found |= reads_in(returned.value)
        for name in every_node(returned.value, cst.Name):
            if name.value in assigned:
                found |= reads_in(assigned[name.value])
    return found


def reads_environment(text: str) -> bool:
    """Whether a function's text may read the environment (a cheap test before its summary looks)."""
    return "environ" in text or "getenv" in text
