"""Modules whose forward runs some submodules only for some batches: their gradients may be None.

A mixture of experts calls an expert only for the rows routed to it (`if routed.any(): out[routed]
= expert(x[routed])`, `self.experts[int(e)](row)`), a detection head its refinement only where the
batch holds a box. After `backward()` the parameters of a submodule the batch skipped keep
`grad = None` on that rank alone, so `if p.grad is None: continue` before an all-reduce of the
gradients makes the ranks run different numbers of all-reduces (KellerJordan/Muon#37,
deepspeedai/DeepSpeed#291).

Read from the module's whole text with CPython's `ast`, only where it reads a `.grad`.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from bcast_lint.analysis.syntax import parsed

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def routed_forward(text: str) -> Optional[tuple[str, int]]:
    """(class name, line of the call) of the module's first class whose `forward` calls one of its
    submodules only under a test on its inputs, or picks it by an index read from them; None
    where there is none."""
    if ".grad" not in text or "def forward" not in text:
        return None
    tree = parsed(text)
    if tree is None:
        return None
    for klass in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        methods = {node.name: node for node in klass.body if isinstance(node, _FUNCTIONS)}
        if "forward" in methods and "__init__" in methods:
            line = _routed_call(methods["forward"], _submodules(methods["__init__"]))
            if line is not None:
                return klass.name, line
    return None


def _submodules(init: ast.AST) -> set[str]:
    """The attributes `__init__` sets to an object it makes (`self.experts = nn.ModuleList(...)`)."""
    return {target.attr for node in ast.walk(init) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            for target in node.targets if _self_attribute(target)}


def _routed_call(forward: ast.AST, submodules: set[str]) -> Optional[int]:
    data = _data_names(forward)
    aliases = _loop_aliases(forward, submodules)
    for test, body in _branches(forward):
        if _names(test) & data:
            for call in (node for part in body for node in ast.walk(part) if isinstance(node, ast.Call)):
                if _calls_submodule(call, submodules, aliases):
                    return call.lineno
    for call in (node for node in ast.walk(forward) if isinstance(node, ast.Call)):
        func = call.func
        if isinstance(func, ast.Subscript) and _self_attribute(func.value) and func.value.attr in submodules \
                and _names(func.slice) & data:
            return call.lineno  # `self.experts[int(e)](row)`: the expert the data picks
    return None


def _data_names(forward: ast.AST) -> set[str]:
    """The locals `forward` computes from its inputs (`choice = self.router(x).argmax(-1)`, then
    `routed = choice == i`): what the batch's contents decide. An input itself is left out: a
    task name or a flag handed in (`self.heads[task](x)`) is most often one choice for the step,
    made alike on every rank."""
    args = forward.args
    inputs = {arg.arg for arg in (*args.posonlyargs, *args.args[1:], *args.kwonlyargs)}
    names = set(inputs)
    for _ in range(2):
        for node in ast.walk(forward):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.For) else []
            if isinstance(node, (ast.Assign, ast.For)) and _names(node.value if isinstance(node, ast.Assign)
                                                                  else node.iter) & names:
                names |= {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
    return names - inputs


def _loop_aliases(forward: ast.AST, submodules: set[str]) -> set[str]:
    """`expert` in `for i, expert in enumerate(self.experts):`: a name bound to each submodule."""
    found: set[str] = set()
    for loop in (node for node in ast.walk(forward) if isinstance(node, ast.For)):
        if any(_self_attribute(node) and node.attr in submodules for node in ast.walk(loop.iter)):
            found |= {name.id for name in ast.walk(loop.target) if isinstance(name, ast.Name)}
    return found


def _branches(forward: ast.AST) -> Iterator[tuple[ast.expr, list]]:
    for node in ast.walk(forward):
        if isinstance(node, ast.If) and not _none_test(node.test):
            yield node.test, node.body + node.orelse
        elif isinstance(node, ast.IfExp) and not _none_test(node.test):
            yield node.test, [node.body, node.orelse]


def _calls_submodule(call: ast.Call, submodules: set[str], aliases: set[str]) -> bool:
    func = call.func
    return (_self_attribute(func) and func.attr in submodules) or (isinstance(func, ast.Name) and func.id in aliases)


def _none_test(test: ast.expr) -> bool:
    """`labels is not None`: whether an input was passed, the same at every step."""
    return isinstance(test, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops)


def _names(node: ast.AST) -> set[str]:
    return {name.id for name in ast.walk(node) if isinstance(name, ast.Name)}


def _self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
