"""What a signal handler sets: a flag that differs between ranks.

A signal reaches each process on its own: a scheduler's preemption notice goes to the tasks of
the node it reclaims, a user's `kill -USR1` to one pid. A handler installed with
`signal.signal(signum, handler)` that sets a flag (`self.requested = True`, `global STOP`,
`stop_event.set()`) leaves it set on the processes the signal reached only, so a test on it sends
the ranks different ways until a collective makes them agree (an all-reduce of the flag).

The handler is read from the module's whole text with CPython's `ast` (the cut may have left only
its stub), and only where the text names `signal`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from bcast_lint.analysis.syntax import parsed

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# Methods that raise a flag object (threading.Event, multiprocessing.Event).
_RAISING = frozenset({"set"})


@dataclass(frozen=True)
class Signalled:
    """The module-level (or `global`) names and the attribute names a signal handler sets."""

    names: frozenset = frozenset()
    attributes: frozenset = frozenset()


NOTHING = Signalled()


def signalled(text: str) -> Signalled:
    """What the module's signal handlers set; NOTHING where it installs none."""
    if "signal(" not in text:
        return NOTHING
    tree = parsed(text)
    if tree is None:
        return NOTHING
    handlers = _handlers(tree)
    if not handlers:
        return NOTHING
    names: set = set()
    attributes: set = set()
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS) and (node in handlers or getattr(node, "name", None) in handlers):
            _collect(node, names, attributes)
    return Signalled(frozenset(names), frozenset(attributes)) if names or attributes else NOTHING


def _handlers(tree: ast.Module) -> set:
    """The names (`on_signal`, `self._on_signal`'s `_on_signal`) and lambdas handed to
    `signal.signal(signum, handler)` as its handler."""
    found: set = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and len(node.args) == 2 and _names_signal(node.func)):
            continue
        handler = node.args[1]
        if isinstance(handler, ast.Name):
            found.add(handler.id)
        elif isinstance(handler, ast.Attribute):
            found.add(handler.attr)
        elif isinstance(handler, ast.Lambda):
            found.add(handler)
    return found


def _names_signal(func: ast.expr) -> bool:
    """`signal.signal` or a bare `signal` imported from it."""
    if isinstance(func, ast.Attribute):
        return func.attr == "signal" and isinstance(func.value, ast.Name) and func.value.id == "signal"
    return isinstance(func, ast.Name) and func.id == "signal"


def _collect(handler: ast.AST, names: set, attributes: set) -> None:
    """The flags `handler` sets: names it declares global or nonlocal and assigns, attributes it
    assigns, and flag objects it raises (`self.stop.set()`)."""
    shared = {name for node in ast.walk(handler) if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
    for node in ast.walk(handler):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id in shared:
                names.add(target.id)
            elif isinstance(target, ast.Attribute):
                attributes.add(target.attr)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RAISING:
            receiver = node.func.value
            if isinstance(receiver, ast.Name):
                names.add(receiver.id)
            elif isinstance(receiver, ast.Attribute):
                attributes.add(receiver.attr)
