"""Accelerators made with even batches off.

By default Accelerate evens out the batches of the loaders it prepares: the ranks whose share is
short repeat samples from the start, so every rank has as many batches. Made with
`DataLoaderConfiguration(even_batches=False)` (or the older `Accelerator(even_batches=False)`), it
keeps each rank's own number of batches (accelerate 1.15.0, data_loader.py, `BatchSamplerShard`:
`even_batches` pads only when true), and a loop over such a loader that runs a collective at each
batch runs it a different number of times on each rank.

Read from the module's whole text with CPython's `ast`: the names each function binds to an
Accelerator so made, directly or through a module function that makes one so.
"""

from __future__ import annotations

import ast
import re

from bcast_lint.analysis.syntax import parsed

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# `even_batches=False`, `even_batches=not cfg.exact_eval`: off, or off where a flag is on.
_OFF = re.compile(r"\beven_batches\s*=\s*(?:False\b|not\b)")


def uneven_accelerators(text: str) -> frozenset[tuple[str, str]]:
    """(function, name) for each `name = ...` in `function` whose value makes an Accelerator with
    even batches off, or calls a module function whose text does."""
    if "even_batches" not in text or not _OFF.search(text):
        return frozenset()
    tree = parsed(text)
    if tree is None:
        return frozenset()
    makers = {node.name for node in tree.body if isinstance(node, _FUNCTIONS) and _OFF.search(ast.unparse(node))}
    found = set()
    for function in (node for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)):
        for assign in (node for node in ast.walk(function) if isinstance(node, ast.Assign)):
            value = assign.value
            if not isinstance(value, ast.Call):
                continue
            called = value.func.id if isinstance(value.func, ast.Name) else None
            if called in makers or _OFF.search(ast.unparse(value)):
                found.update((function.name, target.id) for target in assign.targets if isinstance(target, ast.Name))
    return frozenset(found)
