"""Functions that run in a thread of their own: a `threading.Thread` subclass's `run`, and the
function handed to `threading.Thread(target=...)` or `threading.Timer(interval, function)`.

A collective there is issued whenever that thread's scheduling and clock let it, not at a point
of the main thread's program: on a process group the main thread's collectives use too, each
rank interleaves the two threads' calls in its own order (pytorch#175145's shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from bcast_lint.analysis.expressions import argument_value
from bcast_lint.analysis.walk import every_node

_THREAD = "threading.Thread"
# Constructors of a thread, and where each takes the function it runs (keyword, position).
_STARTERS = {"threading.Thread": ("target", 1), "threading.Timer": ("function", 1)}


@dataclass(frozen=True)
class ThreadBody:
    function: cst.FunctionDef
    made: cst.CSTNode  # the class deriving from Thread, or the constructor's call
    how: str  # how a message says it runs in a thread


def thread_bodies(analysis) -> dict[cst.FunctionDef, ThreadBody]:
    """The module's functions and methods that run in a thread of their own (computed once per
    module by ModuleAnalysis.once)."""
    text = analysis.whole_text()
    if "Thread" not in text and "Timer" not in text:
        return {}
    found: dict[cst.FunctionDef, ThreadBody] = {}
    for klass in every_node(analysis.module, cst.ClassDef):
        run = _thread_run(analysis, klass)
        if run is not None:
            found[run] = ThreadBody(run, klass, f"{klass.name.value} derives from threading.Thread")
    for call in every_node(analysis.module, cst.Call):
        started = _started(analysis, call)
        if started is not None and started not in found:
            found[started] = ThreadBody(started, call, f"'{analysis.code(call.func)}' runs it")
    return found


def _thread_run(analysis, klass: cst.ClassDef) -> Optional[cst.FunctionDef]:
    """`run` of a class deriving from threading.Thread (through the module's own classes too)."""
    lineage = [klass, *analysis.module_bases(klass)]
    if not any(_THREAD in analysis.qualified_names(base.value) for member in lineage for base in member.bases):
        return None
    return next((statement for member in lineage for statement in member.body.body
                 if isinstance(statement, cst.FunctionDef) and statement.name.value == "run"), None)


def _started(analysis, call: cst.Call) -> Optional[cst.FunctionDef]:
    """The module's function or method that `threading.Thread(target=f)` or `Timer(t, f)` runs."""
    starter = next((name for name in analysis.qualified_names(call) if name in _STARTERS), None)
    if starter is None:
        return None
    keyword, position = _STARTERS[starter]
    target = argument_value(call, position, keyword)
    if isinstance(target, cst.Name):
        return analysis.module_function(target.value)
    if isinstance(target, cst.Attribute):
        methods = analysis.methods_named(target.attr.value)
        return methods[0][0] if len(methods) == 1 else None
    return None
