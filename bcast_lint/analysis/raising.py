"""Which parameters of a project function can make it raise, and on which line first.

A helper that works on what it is handed before its collective, in a way that can raise, leaves
the other ranks waiting in that collective when one rank's own data makes the work fail and a
caller's handler carries on (a micro-batch planner whose cost estimate has no entry for one
rank's longest sequence). Counted as raising: a `raise` after a test or loop on a value made from
the parameter, an `assert` on one, a read of a file it names, and a call of another project
function that raises on what it is handed. Work in a `try` whose handler carries on is not.

Read with CPython's `ast` on the function's text from the project index (no LibCST); the
functions it calls are followed through the same index, to a bounded depth.
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from bcast_lint.analysis.project import FunctionIndex, FunctionRef, ModuleIndex, Project, dotted_name
from bcast_lint.analysis.syntax import top_functions

_MAX_DEPTH = 4
# Calls that raise where the file, or the key of the text they parse, is missing.
_READS = frozenset({"open", "load", "loads", "read_text", "read_bytes", "listdir", "stat", "getsize", "load_file"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))


def failing_parameters(project: Project, index: ModuleIndex, function: FunctionIndex,
                       depth: int = 0) -> tuple[tuple[str, ...], dict[str, int]]:
    """The function's parameters (`self` and `cls` left out), and those whose value can make it
    raise uncaught -> the line of the first such work, counted from its `def` line (0)."""
    key = ("failing_parameters", function.qualname)
    if key not in index.memo:
        index.memo[key] = ((), {})  # a call back into the function (a cycle) adds nothing
        node = _parsed(index.text(function), function.column)
        index.memo[key] = _Reader(project, index, function, node, depth).result() if node else ((), {})
    return index.memo[key]


def _parsed(text: str, column: int) -> Optional[ast.AST]:
    """The function's node, from its text (a method's indented text under an `if 1:`)."""
    try:
        tree = ast.parse(text if column == 0 else "if 1:\n" + text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return next((node for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)), None)


class _Reader:
    def __init__(self, project: Project, index: ModuleIndex, function: FunctionIndex, node, depth: int) -> None:
        self.project, self.index, self.function, self.node, self.depth = project, index, function, node, depth
        arguments = node.args
        names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        self.parameters = tuple(name for name in names if name not in ("self", "cls"))
        self.inside = list(_own_nodes(node))
        self.origins = self._origins()
        self.guarded = _guarded(self.inside)

    def result(self) -> tuple[tuple[str, ...], dict[str, int]]:
        found: dict[str, int] = {}
        for line, origins in self._failures():
            for parameter in origins:
                found[parameter] = min(found.get(parameter, line), line)
        return self.parameters, found

    def _from(self, expr: Optional[ast.AST]) -> frozenset:
        """The parameters a value is made from."""
        if expr is None:
            return frozenset()
        return frozenset().union(*(self.origins.get(n.id, frozenset()) for n in ast.walk(expr)
                                   if isinstance(n, ast.Name)))

    def _origins(self) -> dict[str, frozenset]:
        """Each local name -> the parameters its value is made from (assignments, loop targets)."""
        self.origins = {name: frozenset({name}) for name in self.parameters}
        for _ in range(2):  # a name bound before the one it is made from, in a loop
            for node in self.inside:
                for targets, value in _bindings(node):
                    made = self._from(value)
                    for target in targets:
                        if made - self.origins.get(target, frozenset()):
                            self.origins[target] = self.origins.get(target, frozenset()) | made
        return self.origins

    def _failures(self) -> Iterable[tuple[int, frozenset]]:
        tests = [(node.lineno, self._from(test)) for node in self.inside for test in _tested(node)]
        for node in self.inside:
            if id(node) in self.guarded:
                continue
            line = getattr(node, "lineno", 0) - self.node.lineno
            if isinstance(node, ast.Raise):  # after the tests that led here (`for b in ...: if n <= b: return`)
                yield line, frozenset().union(*(origins for at, origins in tests if at <= node.lineno))
            elif isinstance(node, ast.Assert):
                yield line, self._from(node.test)
            elif isinstance(node, ast.Call):
                yield line, self._failing_call(node)

    def _failing_call(self, call: ast.Call) -> frozenset:
        name = dotted_name(call.func) or ""
        if name.rsplit(".", 1)[-1] in _READS:
            return frozenset().union(*(self._from(arg) for arg in call.args))
        head = name.split(".", 1)[0]
        if self.depth >= _MAX_DEPTH or not (head == "self" or head in self.index.functions):
            return frozenset()
        target = self.project.resolve_in_module(self.index, name, self.function.qualname)
        if not isinstance(target, FunctionRef):
            return frozenset()
        index = self.project.index(target.path)
        function = index.functions.get(target.qualname) if index is not None else None
        if function is None:
            return frozenset()
        parameters, failing = failing_parameters(self.project, index, function, self.depth + 1)
        handed = [(parameters[i], arg) for i, arg in enumerate(call.args[:len(parameters)])]
        handed += [(keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg]
        return frozenset().union(*(self._from(value) for parameter, value in handed if parameter in failing))


def _own_nodes(function) -> Iterable[ast.AST]:
    """The nodes of the function's body, not of functions or classes defined in it."""
    stack = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _bindings(node: ast.AST) -> Iterable[tuple[list[str], Optional[ast.AST]]]:
    if isinstance(node, ast.Assign):
        yield [n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)], node.value
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
        yield [node.target.id], node.value
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        yield [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)], node.iter
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield [n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name)], node.context_expr


def _tested(node: ast.AST) -> Iterable[ast.AST]:
    """What an `if`, `while` or loop decides on."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        yield node.test
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        yield node.iter


def _guarded(nodes: list) -> set[int]:
    """The ids of nodes in the body of a `try` one of whose handlers carries on (no `raise` at its end)."""
    guarded: set[int] = set()
    for node in nodes:
        if isinstance(node, _TRIES) and any(_goes_on(handler) for handler in node.handlers):
            guarded.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return guarded


# Handlers that catch whatever the work raises.
_BROAD = frozenset({"Exception", "BaseException"})


def absorbed_exceptions(text: str) -> dict[str, frozenset]:
    """The module's top-level functions -> the names of the exceptions that a `try` in them, or in
    a module function they call, catches and carries on from (`except ValueError: return 0.0`):
    the helper has turned that failure into a value, and a caller's handler of the same names
    (`except ValueError: continue` around `score_batch(rows)`) is not reached through it. Read with
    CPython's `ast` from the whole text (the cut drops helpers without a collective)."""
    functions = {node.name: node for node in top_functions(text, ("except",))}
    own = {name: _caught_and_carried_on(node) for name, node in functions.items()}
    calls = {name: {called.func.id for called in ast.walk(node) if isinstance(called, ast.Call)
                    and isinstance(called.func, ast.Name) and called.func.id in functions} - {name}
             for name, node in functions.items()}
    absorbed = dict(own)
    for _ in range(_MAX_DEPTH):  # what the helpers they call absorb, a few calls deep
        absorbed = {name: absorbed[name].union(*(absorbed[callee] for callee in calls[name])) for name in functions}
    return {name: caught for name, caught in absorbed.items() if caught}


def _caught_and_carried_on(function) -> frozenset:
    return frozenset(name for node in _own_nodes(function) if isinstance(node, _TRIES)
                     for handler in node.handlers if _goes_on(handler) for name in _caught(handler))


def _goes_on(handler: ast.ExceptHandler) -> bool:
    """A handler that carries on (it does not end in a `raise`)."""
    return not (handler.body and isinstance(handler.body[-1], ast.Raise))


def _caught(handler: ast.ExceptHandler) -> set:
    """`ValueError` for `except ValueError`, both names for `except (KeyError, ValueError)`, the
    broad names for a bare `except`."""
    if handler.type is None:
        return set(_BROAD)
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {(dotted_name(one) or "").rsplit(".", 1)[-1] for one in kinds}


def handles_only(handled: set, absorbed: frozenset) -> bool:
    """Whether a caller's handler of the exceptions `handled` catches only what a helper that
    absorbs `absorbed` already turned into a value."""
    return bool(handled) and not handled & _BROAD and (handled <= absorbed or bool(absorbed & _BROAD))




def raising_functions(text: str) -> frozenset:
    """The module's top-level functions whose own work can raise on what they are handed: a
    `raise`, an `assert`, a read of a file or text (`read(record)` raising on a torn record).
    Read with CPython's `ast` from the module's whole text (the cut drops helpers without a
    collective, and a function summarised alone has only its own text)."""
    return frozenset(node.name for node in top_functions(text, ("raise", "assert", "open(", "load", "read")) if any(
        isinstance(inner, (ast.Raise, ast.Assert)) or isinstance(inner, ast.Call)
        and (dotted_name(inner.func) or "").rsplit(".", 1)[-1] in _READS for inner in _own_nodes(node)))


# What swallowing_managers records for a handler of the exceptions the `with` passes the manager.
PASSED_EXCEPTIONS = "*"


def swallowing_managers(text: str) -> dict[str, frozenset]:
    """The module's `@contextlib.contextmanager` functions that swallow what their block raises
    (`try: yield except errors as exc: print(exc)`) -> the names of the exceptions they catch,
    PASSED_EXCEPTIONS where the handler catches a parameter (`tolerate(LinAlgError)`): a `with`
    of one is a `try` whose handler goes on, as `contextlib.suppress` is."""
    found = {}
    for node in top_functions(text, ("contextmanager",)):
        if not any((dotted_name(d) or "").endswith("contextmanager") for d in node.decorator_list):
            continue
        arguments = node.args
        parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        if arguments.vararg is not None:
            parameters.add(arguments.vararg.arg)
        caught: set = set()
        for inner in _own_nodes(node):
            if isinstance(inner, _TRIES) and any(isinstance(n, ast.Yield) for s in inner.body for n in ast.walk(s)):
                caught |= {PASSED_EXCEPTIONS if name in parameters else name
                           for handler in inner.handlers if _goes_on(handler) for name in _caught(handler)}
        if caught:
            found[node.name] = frozenset(caught)
    return found
