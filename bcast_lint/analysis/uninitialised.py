"""Uninitialised tensors (`torch.empty`, `empty_like`, `new_empty`, `torch.Tensor(n)`) that a
tensor broadcast sends or receives into, and whether anyone can read what they held.

BCL003 reports those whose uninitialised memory someone can read; BCL012 (opt-in) the others,
receivers that the broadcast overwrites whole, where `torch.empty` is correct and only a habit of
`torch.zeros` is advised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.expressions import allocation, method_name, positional_arguments
from bcast_lint.analysis.flow import Write
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.walk import ScopeVisitor

CONSTRUCTORS = ("torch.empty", "torch.empty_like", "torch.Tensor")
NEW_EMPTY = "new_empty"


@dataclass(frozen=True)
class Placeholder:
    """An uninitialised allocation whose memory reaches a tensor broadcast."""

    call: cst.Call
    constructor: str  # one of CONSTRUCTORS, or NEW_EMPTY
    site: CallSite
    name: Optional[str]  # the local holding it; None for `broadcast(torch.empty(n))`
    sliced: bool  # the broadcast sends `name[...]`, a part of the buffer
    worlds: frozenset  # where its contents, not overwritten whole, reach the broadcast
    alone: frozenset  # of those, where no other value can reach the broadcast
    filled: frozenset  # where it may arrive filled whole, on some path (`if ...: buf.copy_(x)`)
    partial_writes: tuple[Write, ...]  # writes into a part of it on the way (`buf[:k] = x`)

    @property
    def shown(self) -> str:
        return "Tensor.new_empty" if self.constructor == NEW_EMPTY else self.constructor


def placeholders(analysis: ModuleAnalysis) -> Iterator[Placeholder]:
    for site in analysis.broadcasts():
        if site.api.payload != apis.TENSOR or site.payload is None:
            continue
        direct = allocation(site.payload)
        constructor = direct is not None and uninitialised_constructor(analysis, direct)
        if constructor:
            reached = frozenset(site.reached)
            yield Placeholder(direct, constructor, site, None, False, reached, reached, frozenset(), ())
        sliced = _sliced_buffer(site.payload)
        if sliced is not None:
            yield from _held_by(analysis, site, sliced, True)
        for name in {name.value for name in analysis.payload_names(site)} - {sliced}:
            yield from _held_by(analysis, site, name, False)


def _held_by(analysis: ModuleAnalysis, site: CallSite, name: str, sliced: bool) -> Iterator[Placeholder]:
    found: dict = {}  # call -> (constructor, worlds, partial writes)
    mixed: set = set()  # worlds where something else may reach the broadcast too
    filled: set = set()
    for world, definitions in analysis.definitions(site, name).items():
        for definition in definitions:
            if definition.overwritten:
                if _allocates_uninitialised(analysis, definition, world):
                    filled.add(world)  # the same buffer, filled on some path
                else:
                    mixed.add(world)
                continue
            values = analysis.values(definition, world)
            if not values:
                mixed.add(world)
            for value in values:
                call = allocation(value)
                constructor = call is not None and uninitialised_constructor(analysis, call)
                if not constructor:
                    mixed.add(world)
                    continue
                _, worlds, writes = found.setdefault(call, (constructor, set(), []))
                worlds.add(world)
                writes.extend(w for w in definition.writes if w not in writes)
    for call, (constructor, worlds, writes) in found.items():
        yield Placeholder(call, constructor, site, name, sliced, frozenset(worlds),
                          frozenset(worlds) - mixed, frozenset(filled), tuple(writes))


def _allocates_uninitialised(analysis: ModuleAnalysis, definition, world) -> bool:
    return any((call := allocation(value)) is not None and uninitialised_constructor(analysis, call)
               for value in analysis.values(definition, world))


def uninitialised_constructor(analysis: ModuleAnalysis, call: cst.Call) -> Optional[str]:
    """The constructor's name when `call` allocates uninitialised memory."""
    if method_name(call) == NEW_EMPTY:
        return NEW_EMPTY
    for qualified in analysis.qualified_names(call) & set(CONSTRUCTORS):
        if qualified == "torch.Tensor" and not _is_shape_call(call):
            continue  # torch.Tensor([1.0, 2.0]) holds data
        return qualified
    return None


# -- who can read it -------------------------------------------------------------------------

@dataclass(frozen=True)
class Garbage:
    """Why uninitialised memory of a placeholder can be read, for BCL003's message."""

    message: str
    help: str


def readable_garbage(analysis: ModuleAnalysis, placeholder: Placeholder) -> Optional[Garbage]:
    """None when every element anyone reads was written first: the receivers' buffer is
    overwritten whole by the broadcast, and the source rank sends data."""
    if _source_holds_it(analysis, placeholder):
        return _sent_unfilled(analysis, placeholder)
    if placeholder.sliced:
        read = _read_after(analysis, placeholder)
        if read is not None:
            return _sliced_then_read(analysis, placeholder, read)
    read = _read_before(analysis, placeholder)
    if read is not None:
        line = analysis.position(read).start.line
        return Garbage(f"{placeholder.shown}() allocates '{placeholder.name}' uninitialised, and it is read "
                       f"at line {line}, before the broadcast fills it: what it held is garbage",
                       "Read it after the broadcast, or allocate it with zeros")
    return None


# Methods and functions that read a tensor's values (not its metadata, not an in-place write).
_READING_METHODS = frozenset({"item", "tolist", "sum", "mean", "max", "min", "cpu", "numpy", "clone",
                              "norm", "any", "all", "argmax", "argmin"})


def _read_before(analysis: ModuleAnalysis, placeholder: Placeholder) -> Optional[cst.CSTNode]:
    """A plain read of a buffer never written on the way (`print(buf)`, `buf.sum()`, `buf + 1`)
    between its allocation and the broadcast, in source order."""
    if placeholder.name is None or placeholder.filled or placeholder.partial_writes:
        return None
    reads = _Reads(placeholder.site.scope, placeholder.name)
    reads.walk(placeholder.site.scope)
    allocated, sent, *places = analysis.positions_within(
        placeholder.site.scope, [placeholder.call, placeholder.site.call, *reads.found])
    start, end = _key(allocated.end), _key(sent.start)
    return next((read for read, where in zip(reads.found, places) if start < _key(where.start) < end), None)


class _Reads(ScopeVisitor):
    """Expressions that read the values of one local tensor, outside nested functions."""

    def __init__(self, scope: cst.CSTNode, name: str) -> None:
        self.scope = scope
        self.name = name
        self.found: list[cst.CSTNode] = []

    def _is_it(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Name) and node.value == self.name

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and self._is_it(func.value) and func.attr.value in _READING_METHODS:
            self.found.append(node)
        elif isinstance(func, cst.Name) and func.value == "print" and any(self._is_it(a.value) for a in node.args):
            self.found.append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self._is_it(node.left) or self._is_it(node.right):
            self.found.append(node)


def _source_holds_it(analysis: ModuleAnalysis, placeholder: Placeholder) -> bool:
    """The rank that sends holds this placeholder, unfilled (or, sending it whole, partly filled).
    With an unknown source, only when every rank reaching the broadcast holds it, and nothing
    else, and never filled: another value (`buf = data if rank == src else torch.empty(n)`) or a
    fill on some path (`if rank == src: buf.copy_(x)`) is taken to be what the source sends, the
    test that selects it being one the analysis cannot decide."""
    site = placeholder.site
    if placeholder.sliced and placeholder.partial_writes:
        return False  # `buf[:k] = x` then `broadcast(buf[:k])`: the part sent was written
    source = site.source_rank
    if source is not None:
        return any(world.rank == source for world in placeholder.alone)
    return (placeholder.alone == frozenset(site.reached) and not placeholder.filled
            and not _sender_elsewhere(analysis, site))


def _sender_elsewhere(analysis: ModuleAnalysis, site: CallSite) -> bool:
    """Another call of the same broadcast sits in another arm of an `if` around this one
    (`if rank == src: broadcast(data, src) else: buf = torch.empty(n); broadcast(buf, src)`):
    the source sends from there, whatever the test."""
    others = {other.call for other in analysis.calls_in(site.scope) if other is not site
              and other.api.is_broadcast and other.api.short_name == site.api.short_name}
    if not others:
        return False
    ifs = _Collect(site.scope, cst.If)
    ifs.walk(site.scope)
    for statement in ifs.found:
        arms = [_calls_in(arm) for arm in (statement.body, statement.orelse) if arm is not None]
        mine = [arm for arm in arms if site.call in arm]
        if mine and any(arm & others for arm in arms if arm is not mine[0]):
            return True
    return False


def _calls_in(node: cst.CSTNode) -> set:
    calls = _Collect(None, cst.Call)
    calls.walk(node)
    return set(calls.found)


class _Collect(ScopeVisitor):
    """The nodes of one type under a node, outside nested functions and classes other than `scope`."""

    def __init__(self, scope: Optional[cst.CSTNode], kind: type) -> None:
        self.scope = scope
        self.kind = kind
        self.found: list = []

    def visit_If(self, node: cst.If) -> None:
        if self.kind is cst.If:
            self.found.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        if self.kind is cst.Call:
            self.found.append(node)


def _sent_unfilled(analysis: ModuleAnalysis, placeholder: Placeholder) -> Garbage:
    held = f"'{placeholder.name}'" if placeholder.name else "the tensor"
    where = ("the source rank" if placeholder.site.source_rank is not None
             else "every rank, so whichever is the source,")
    if placeholder.partial_writes:
        write = placeholder.partial_writes[0]
        line = analysis.position(write.statement).start.line
        return Garbage(f"{placeholder.shown}() allocates {held} uninitialised, and {where} fills only "
                       f"part of it (line {line}) before sending it whole: the rest reaches every rank "
                       "as garbage", "Allocate it with zeros, or fill every element on the source rank")
    return Garbage(f"{placeholder.shown}() allocates {held} uninitialised, and {where} sends it "
                   "without filling it: every rank receives garbage",
                   "Fill it on the source rank before the broadcast, or allocate it with zeros")


def _sliced_then_read(analysis: ModuleAnalysis, placeholder: Placeholder, read: cst.Name) -> Garbage:
    line = analysis.position(read).start.line
    return Garbage(f"only '{analysis.code(placeholder.site.payload)}' of the {placeholder.shown}() buffer "
                   f"is broadcast, and '{placeholder.name}' is read at line {line}: its other elements "
                   "are uninitialised on the receiving ranks",
                   "Allocate it with zeros, or read only the part the broadcast filled")


def _read_after(analysis: ModuleAnalysis, placeholder: Placeholder) -> Optional[cst.Name]:
    """The first use of the buffer's name after the broadcast, in the same function, other than
    the very slice it broadcast (`print(buf[:k])` reads what was received)."""
    uses = _Uses(placeholder.site.scope, placeholder.name, analysis.code(placeholder.site.payload), analysis)
    uses.walk(placeholder.site.scope)
    sent, *places = analysis.positions_within(placeholder.site.scope, [placeholder.site.call, *uses.found])
    return next((use for use, where in zip(uses.found, places) if _key(where.start) > _key(sent.end)), None)


def _key(position) -> tuple[int, int]:
    return position.line, position.column


class _Uses(ScopeVisitor):
    """Loads of one name in a scope, outside nested functions and classes."""

    def __init__(self, scope: cst.CSTNode, name: str, sent: str, analysis: ModuleAnalysis) -> None:
        self.scope = scope
        self.name = name
        self.sent = sent
        self.analysis = analysis
        self.found: list[cst.Name] = []

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return not isinstance(node.target, cst.Name)  # a rebinding is not a read

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        return self.analysis.code(node) != self.sent

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.found.append(node)


# -- allocations -----------------------------------------------------------------------------

def _sliced_buffer(payload: cst.BaseExpression) -> Optional[str]:
    """`buf` in `broadcast(buf[:k])`: the receivers fill only that part, the rest stays as it was."""
    if isinstance(payload, cst.Subscript) and isinstance(payload.value, cst.Name):
        return payload.value.value
    return None


def _is_shape_call(call: cst.Call) -> bool:
    """`torch.Tensor(2, 3)` and `torch.Tensor(n, d)` allocate; `torch.Tensor([...])`,
    `torch.Tensor([0.0] * n)` or `torch.Tensor(data)` copy data. A single name could be either, so
    it is not guessed at."""
    args = positional_arguments(call)
    if any(_holds_data(arg) for arg in args):
        return False
    if len(args) >= 2:
        return True
    return len(args) == 1 and (isinstance(args[0], (cst.Integer, cst.BinaryOperation))
                               or isinstance(args[0], cst.Call) and _is_len(args[0]))


def _holds_data(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.BinaryOperation):
        return _holds_data(expr.left) or _holds_data(expr.right)
    return isinstance(expr, _DATA)


_DATA = (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)


def _is_len(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "len"
